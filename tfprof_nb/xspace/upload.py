"""Writing a run captured on local disk to a logdir URL, checking every file landed."""

from __future__ import annotations

from pathlib import Path
from posixpath import basename

from ..errors import ObjectStoreError
from .cache import cache_enabled, cache_max_bytes, store_local_copy
from .stores import filesystem, remote_errors, remote_file

__all__ = ["upload_run"]

XPLANE_SUFFIX = ".xplane.pb"


def upload_run(run_dir: Path, logdir_url: str, storage_options: dict | None = None) -> str:
    """Copy ``run_dir`` (``<logdir>/plugins/profile/<run>/`` on local disk) to
    ``<logdir_url>/plugins/profile/<run>/`` and return that run's URL.

    A run of the same name already there (two captures within a second) gets ``_1``,
    ``_2``, ... appended, which still sorts as the newer run.  The listing afterwards must show
    every file with its local size (else ObjectStoreError); the host files then enter the local
    cache under their new ETags, so loading the run's URL reads no byte back.
    """
    fs, root = filesystem(logdir_url, storage_options)
    runs_root = root.rstrip("/") + "/plugins/profile"
    target = f"{runs_root}/{_free_name(fs, runs_root, run_dir.name, logdir_url)}"
    run_url = fs.unstrip_protocol(target)
    files = {p.relative_to(run_dir).as_posix(): p for p in sorted(run_dir.rglob("*"))
             if p.is_file()}
    for rel, path in files.items():
        with remote_errors(f"{run_url}/{rel}", "writing it"):
            fs.put_file(str(path), f"{target}/{rel}")
    with remote_errors(run_url, "listing it"):
        landed = {e["name"].rstrip("/"): e for e in fs.find(target, detail=True).values()}
    for rel, path in files.items():
        entry = landed.get(f"{target}/{rel}")
        size = path.stat().st_size
        if entry is None or entry.get("size") != size:
            got = "is missing" if entry is None else f"has {entry.get('size')} bytes"
            raise ObjectStoreError(f"{run_url}/{rel}", f"{got} after the upload of {size} "
                                   f"bytes from {path}")
        if rel.endswith(XPLANE_SUFFIX):
            _prime_cache(fs, entry, path, storage_options)
    return run_url


def _free_name(fs, runs_root: str, name: str, url: str) -> str:
    try:
        with remote_errors(url, "listing it"):
            taken = {basename(e.rstrip("/")) for e in fs.ls(runs_root, detail=False)}
    except FileNotFoundError:
        return name
    free, n = name, 0
    while free in taken:
        n += 1
        free = f"{name}_{n}"
    return free


def _prime_cache(fs, entry: dict, path: Path, storage_options) -> None:
    rf = remote_file(fs, entry, storage_options)
    if cache_enabled() and rf.version is not None and rf.size <= cache_max_bytes():
        store_local_copy(rf.url, rf.version, rf.size, path)
