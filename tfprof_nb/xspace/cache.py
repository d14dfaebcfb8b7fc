"""The local cache of remote profile files, keyed by URL, version (ETag, generation or
modification time) and size, so a second load of the same object reads a local file.

- Location: ``TFPROF_NB_CACHE_DIR`` (default ``~/.cache/tfprof_nb/objects``).
- Budget: ``TFPROF_NB_CACHE_MAX_GB`` (default 10); the least recently used files are evicted
  past it.  ``TFPROF_NB_CACHE=0`` turns the cache off.
- A file enters the cache only whole: it is written to a temporary name in the cache folder,
  its size checked against the store's, then renamed (atomic), so an interrupted or truncated
  transfer never leaves a file that a later load would trust.  When a new version of an object
  arrives, the older ones of that URL are removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from ..errors import ObjectStoreError

__all__ = ["cache_dir", "cache_enabled", "cache_max_bytes", "cached_path", "clear_cache",
           "store", "store_local_copy", "truncated"]

SUFFIX = ".xplane.pb"
_PARTIAL = ".partial"
_STALE_PARTIAL_S = 3600.0  # a temporary file this old belongs to a process that died


def cache_dir() -> Path:
    """The cache folder (``TFPROF_NB_CACHE_DIR``, default ``~/.cache/tfprof_nb/objects``)."""
    env = os.environ.get("TFPROF_NB_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tfprof_nb" / "objects"


def cache_enabled() -> bool:
    """False when ``TFPROF_NB_CACHE`` is ``0`` (or ``false``/``no``/``off``)."""
    return os.environ.get("TFPROF_NB_CACHE", "1").strip().lower() not in ("0", "false", "no",
                                                                          "off")


def cache_max_bytes() -> int:
    """The cache's budget in bytes (``TFPROF_NB_CACHE_MAX_GB``, default 10)."""
    raw = os.environ.get("TFPROF_NB_CACHE_MAX_GB", "10")
    try:
        gb = float(raw)
    except ValueError:
        raise ValueError(f"TFPROF_NB_CACHE_MAX_GB must be a number of GB, got {raw!r}") from None
    return int(gb * 2**30)


def _url_key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:32]


def cache_name(url: str, version: str, size: int) -> str:
    """File name of one version of one URL in the cache."""
    v = hashlib.sha256(f"{version}\0{size}".encode()).hexdigest()[:16]
    return f"{_url_key(url)}-{v}{SUFFIX}"


def cached_path(url: str, version: str | None, size: int | None) -> Path | None:
    """The cached copy of this version of ``url``, if there is one (marked as just used)."""
    if version is None or size is None or not cache_enabled():
        return None
    path = cache_dir() / cache_name(url, version, size)
    try:
        if path.stat().st_size != size:
            return None
        os.utime(path)  # least recently used goes first
    except FileNotFoundError:
        return None
    return path


@contextlib.contextmanager
def _partial_file(directory: Path):
    """The path of a new temporary file in ``directory``, removed unless it was renamed."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".", suffix=_PARTIAL, dir=directory)
    os.close(fd)
    try:
        yield Path(name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def store(url: str, version: str, size: int, fill) -> Path:
    """Cache this version of ``url``: ``fill(path)`` writes its bytes to the temporary file
    ``path``, which is renamed into place only when it holds ``size`` bytes."""
    directory = cache_dir()
    final = directory / cache_name(url, version, size)
    with _partial_file(directory) as tmp:
        fill(tmp)
        written = tmp.stat().st_size
        if written != size:
            raise truncated(url, written, size)
        os.replace(tmp, final)
    _forget_other_versions(url, final)
    evict(keep=final)
    return final


def truncated(url: str, got: int, size: int) -> ObjectStoreError:
    """The error for a transfer that ended with ``got`` of the ``size`` bytes expected."""
    return ObjectStoreError(url, f"truncated: {got} of {size} bytes arrived (the object is "
                            "shorter than the store said, or it changed while being read)")


def store_local_copy(url: str, version: str, size: int, source) -> Path:
    """Cache a local file known to hold this version of ``url`` (a run just uploaded)."""
    return store(url, version, size, lambda tmp: shutil.copyfile(source, tmp))


def discard(path: Path) -> None:
    """Remove a cached file (it did not decode: keep no bad copy)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _forget_other_versions(url: str, keep: Path) -> None:
    for old in keep.parent.glob(f"{_url_key(url)}-*{SUFFIX}"):
        if old != keep:
            discard(old)


def evict(keep: Path | None = None) -> None:
    """Remove the least recently used files until the cache fits its budget, and temporary
    files left by processes that died."""
    directory = cache_dir()
    entries = []
    now = time.time()
    for path in directory.glob("*"):
        try:
            st = path.stat()
        except FileNotFoundError:  # another process removed it
            continue
        if path.name.endswith(_PARTIAL):
            if now - st.st_mtime > _STALE_PARTIAL_S:
                discard(path)
        elif path.name.endswith(SUFFIX):
            entries.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in entries)
    budget = cache_max_bytes()
    for _, size, path in sorted(entries):
        if total <= budget:
            break
        if path != keep:
            discard(path)
            total -= size


def clear_cache() -> int:
    """Remove every cached remote profile file; returns how many bytes were freed."""
    freed = 0
    directory = cache_dir()
    for path in directory.glob(f"*{SUFFIX}"):
        with contextlib.suppress(FileNotFoundError):
            freed += path.stat().st_size
            path.unlink()
    return freed
