"""Finding the ``.xplane.pb`` files behind a path the user gives to :func:`tfprof_nb.load`:
local paths here, URLs (``s3://``, ``gs://``, ``https://``, any fsspec URL) in
:mod:`.remote_files`."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ProfileFileNotFoundError, ProfileFormatError
from .stores import RemoteFile, is_url, local_path_of

__all__ = ["XPLANE_SUFFIX", "file_size", "find_profile_files", "host_name_of", "host_names",
           "missing_path"]

XPLANE_SUFFIX = ".xplane.pb"


def host_name_of(path) -> str:
    """Host name of a profile file: its file name without ``.xplane.pb``."""
    name = path.name if isinstance(path, RemoteFile) else Path(path).name
    return name[: -len(XPLANE_SUFFIX)] if name.endswith(XPLANE_SUFFIX) else Path(name).stem


def file_size(path) -> int:
    """Size in bytes of a local profile file or of a :class:`RemoteFile` (0 when the store
    did not say)."""
    return (path.size or 0) if isinstance(path, RemoteFile) else os.path.getsize(path)


def host_names(files: list) -> dict:
    """{host name: file}, sorted by name; a name that several files share (the same host in
    different runs) gets its run's directory name appended."""
    hosts = [host_name_of(f) for f in files]
    dupes = {h for h in hosts if hosts.count(h) > 1}
    hosts = [f"{h} ({_run_name(f)})" if h in dupes else h for h, f in zip(hosts, files)]
    return dict(sorted(zip(hosts, files), key=lambda hf: hf[0]))


def _run_name(path) -> str:
    """The name of the run directory a profile file is in."""
    return (path.parent if isinstance(path, RemoteFile) else Path(path).parent).name


def _entries(directory: Path, unreadable: list) -> list[Path]:
    """The entries of ``directory``; none when it cannot be listed, the reason then added to
    ``unreadable`` as (directory, OSError)."""
    try:
        return list(directory.iterdir())
    except OSError as exc:
        unreadable.append((directory, exc))
        return []


def _xplane_files(directory: Path, unreadable: list) -> list[Path]:
    return sorted(p for p in _entries(directory, unreadable)
                  if p.name.endswith(XPLANE_SUFFIX) and p.is_file())


def _run_dirs(directory: Path, unreadable: list) -> list[Path]:
    return [d for d in _entries(directory, unreadable)
            if d.is_dir() and _xplane_files(d, unreadable)]


def _newest(runs: list[Path]) -> Path:
    """The newest run: profiler run names are timestamps, so order by name, then by mtime."""
    def key(run: Path):
        newest_file = max(f.stat().st_mtime for f in _xplane_files(run, []))
        return (run.name, newest_file)
    return max(runs, key=key)


def _unreadable_error(path: Path, unreadable: list) -> OSError:
    """The error of a directory holding no profile that could be read, where listing
    ``unreadable`` [(folder, OSError)] failed: that OSError's type, naming both."""
    folder, exc = unreadable[0]
    where = "it" if folder == path else str(folder)
    more = f" (and {len(unreadable) - 1} more folders)" if len(unreadable) > 1 else ""
    return type(exc)(exc.errno, f"{path}: no profile could be read: {where}{more} cannot be "
                     f"listed ({exc.strerror or exc})")


def missing_path(p: Path) -> ProfileFileNotFoundError:
    """The error of a path that does not exist, naming the closest existing path where one
    part of it is a likely typo (``logs/rnu1``: did you mean ``logs/run1``?)."""
    message = f"{p}: no such file or directory"
    close = _close_path(p)
    if close is not None:
        message += f" (did you mean {str(close)!r}?)"
    return ProfileFileNotFoundError(p, message)


def _close_path(p: Path) -> Path | None:
    """``p`` with its first missing part replaced by the closest name in its folder, when
    one is close enough and the rest of ``p`` then exists (or nothing else follows)."""
    import difflib

    parts, base = p.parts, None
    for i in range(len(parts), -1, -1):  # (no parts: the working directory)
        if Path(*parts[:i]).exists():
            base = i
            break
    if base is None or base >= len(parts):
        return None
    folder, wrong = Path(*parts[:base]), parts[base]
    try:
        names = [e.name for e in folder.iterdir()]
    except OSError:
        return None
    for name in difflib.get_close_matches(wrong, names, n=3, cutoff=0.6):
        guess = folder / name / Path(*parts[base + 1:]) if base + 1 < len(parts) \
            else folder / name
        if guess.exists():
            return guess
    return None


def find_profile_files(path, storage_options: dict | None = None) -> list:
    """Resolve ``path`` to the ``.xplane.pb`` files of one profile run.

    Accepts one file, a run directory (all hosts in it), a TensorBoard-style logdir (the newest
    run under ``plugins/profile/``), the ``plugins/profile`` directory itself, or a list of any
    of these; each may be a URL (``s3://``, ``gs://``, ``https://``, any fsspec URL, opened
    with ``storage_options``), which gives :class:`RemoteFile` entries instead of paths.
    Raises FileNotFoundError for a missing path, ProfileFormatError for a directory that
    holds no profile, and PermissionError (or the OSError) naming the folder that could not
    be listed when no profile was found for want of it.
    """
    if isinstance(path, (list, tuple)):
        if not path:
            raise ValueError("tfprof_nb.load() got an empty list of paths")
        files: list = []
        for item in path:
            for f in find_profile_files(item, storage_options):
                if f not in files:
                    files.append(f)
        return files
    if isinstance(path, RemoteFile):
        return [path]
    if is_url(path):
        local = local_path_of(path)
        if local is None:
            from .remote_files import find_remote_files

            return find_remote_files(path, storage_options)
        path = local
    p = Path(os.fspath(path)).expanduser()
    if not p.exists():
        raise missing_path(p)
    if p.is_file():
        return [p]
    unreadable: list = []
    direct = _xplane_files(p, unreadable)
    if direct:
        return direct
    for runs_root in (p / "plugins" / "profile", p / "profile", p):
        runs = _run_dirs(runs_root, unreadable) if runs_root.is_dir() else []
        if runs:
            return _xplane_files(_newest(runs), unreadable)
    if unreadable:
        raise _unreadable_error(p, unreadable)
    raise ProfileFormatError(
        p, f"holds no profile: no *{XPLANE_SUFFIX} file in it, in plugins/profile/<run>/ "
        "or in <run>/ below it (capture one with tfprof_nb or tf.profiler first)")
