"""Resolving a URL to the ``.xplane.pb`` files of one run, as :func:`find_profile_files` does
for local paths: a file URL is that host; a run "directory" (prefix) is every host in it; a
logdir is the newest run under ``plugins/profile/`` (or ``profile/``, or the logdir itself).

Listings cost one request per level on object stores (the runs under ``plugins/profile`` are
found with one recursive listing).  Web servers without listings take file URLs (a list of
them for several hosts); a server's HTML index page is followed where it has one.
"""

from __future__ import annotations

from posixpath import dirname

from ..errors import ProfileFormatError
from .stores import RemoteFile, entry_mtime, filesystem, remote_errors, remote_file

__all__ = ["find_remote_files"]

XPLANE_SUFFIX = ".xplane.pb"


def find_remote_files(url: str, storage_options: dict | None = None) -> list[RemoteFile]:
    """The profile files behind ``url`` (see the module doc).  Raises FileNotFoundError,
    PermissionError or ObjectStoreError naming the URL when the store says no, and
    ProfileFormatError when it holds no profile."""
    fs, root = filesystem(url, storage_options)
    web = fs.protocol in ("http", "https") or "http" in fs.protocol
    if root.rstrip("/").endswith(XPLANE_SUFFIX):
        with remote_errors(url, "looking it up"):
            info = fs.info(root)
        if info.get("type") != "directory":
            return [_complete(fs, remote_file(fs, info, storage_options))]
    entries = _ls(fs, root, url)
    if len(entries) == 1 and entries[0].get("type") == "file" and not web and \
            entries[0]["name"].rstrip("/") == root.rstrip("/"):  # a file of any name
        return [_complete(fs, remote_file(fs, entries[0], storage_options))]
    files = _xplanes(entries)
    if not files:
        files = _newest_run(fs, root, entries, url)
    if not files:
        raise ProfileFormatError(url, _nothing_here(web))
    return [_complete(fs, remote_file(fs, e, storage_options)) for e in files]


def _nothing_here(web: bool) -> str:
    if web:
        return (f"holds no profile: no *{XPLANE_SUFFIX} link in the page or in "
                "plugins/profile/<run>/ below it (a server without listings needs the file "
                "URLs: tp.load([url1, url2, ...]))")
    return (f"holds no profile: no *{XPLANE_SUFFIX} object in it, in plugins/profile/<run>/ "
            "or in <run>/ below it")


def _ls(fs, path: str, url: str, missing_ok: bool = False) -> list[dict]:
    try:
        with remote_errors(url, "listing it"):
            return fs.ls(path, detail=True)
    except FileNotFoundError:
        if missing_ok:
            return []
        raise


def _xplanes(entries: list[dict]) -> list[dict]:
    return sorted((e for e in entries if e.get("type") != "directory"
                   and e["name"].rstrip("/").endswith(XPLANE_SUFFIX)), key=lambda e: e["name"])


def _dirs(entries: list[dict]) -> dict[str, dict]:
    return {e["name"].rstrip("/").rsplit("/", 1)[-1]: e for e in entries
            if e.get("type") == "directory"}


def _newest_run(fs, root: str, entries: list[dict], url: str) -> list[dict]:
    """The files of the newest run below ``root`` (by run name, then newest file)."""
    subdirs = _dirs(entries)
    runs: dict[str, list[dict]] = {}
    if "plugins" in subdirs:
        runs = _runs_below(fs, _join(subdirs["plugins"]["name"], "profile"), url)
    if not runs and "profile" in subdirs:
        runs = _runs_below(fs, subdirs["profile"]["name"], url)
    if not runs:
        for entry in subdirs.values():
            files = _xplanes(_ls(fs, entry["name"], url, missing_ok=True))
            if files:
                runs[entry["name"].rstrip("/")] = files
    if not runs:
        return []
    newest = max(runs, key=lambda r: (r.rsplit("/", 1)[-1],
                                      max(entry_mtime(f) for f in runs[r])))
    return runs[newest]


def _runs_below(fs, runs_root: str, url: str) -> dict[str, list[dict]]:
    """{run path: its profile files} one level below ``runs_root`` (a recursive listing on
    object stores: one request for all runs)."""
    try:
        with remote_errors(url, "listing it"):
            found = fs.find(runs_root, detail=True, withdirs=False)
    except FileNotFoundError:
        return {}
    top = runs_root.rstrip("/")
    runs: dict[str, list[dict]] = {}
    for entry in found.values():
        run = dirname(entry["name"].rstrip("/"))
        if dirname(run) == top and entry["name"].endswith(XPLANE_SUFFIX):
            runs.setdefault(run, []).append(entry)
    return {run: sorted(files, key=lambda e: e["name"]) for run, files in runs.items()}


def _join(path: str, name: str) -> str:
    return path.rstrip("/") + "/" + name


def _complete(fs, rf: RemoteFile) -> RemoteFile:
    """Size and version from the server itself when the listing had none (web pages)."""
    if rf.size is not None and rf.version is not None:
        return rf
    with remote_errors(rf.url, "looking it up"):
        info = fs.info(fs._strip_protocol(rf.url))
    return remote_file(fs, info, rf.storage_options)
