"""Finding and reading the hardware sampler's file beside one host's profile, where the host
is read: a local ``<host>.hardware.npz`` or the same object beside a URL (with the host file's
storage options).  The file's format: :mod:`.hardware_file`."""

from __future__ import annotations

import os

from .hardware_file import HardwareSamples, hardware_path_for, read_hardware
from .stores import RemoteFile, filesystem, is_url, local_path_of, remote_errors

__all__ = ["hardware_beside"]

# a sampler's file holds ~20 series at 50 ms for minutes: a few MB at most; anything far
# larger is not one (and is not read into memory)
_MAX_BYTES = 256 * 2**20


def _location(read_from) -> tuple[str, dict] | None:
    """(path or URL of the sampler's file, storage options) beside ``read_from``."""
    if isinstance(read_from, RemoteFile):
        return hardware_path_for(read_from.url), dict(read_from.storage_options)
    if read_from is None:
        return None
    return hardware_path_for(os.fspath(read_from)), {}


def _local_bytes(path: str) -> bytes | None:
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return None
    if size > _MAX_BYTES:
        raise ValueError(f"{path} is not a tfprof_nb hardware file: {size:,} bytes")
    with open(path, "rb") as f:
        return f.read()


def _remote_bytes(url: str, options: dict) -> bytes | None:
    fs, path = filesystem(url, options)
    try:
        with remote_errors(url):
            info = fs.info(path)
            if (info.get("size") or 0) > _MAX_BYTES:
                raise ValueError(f"{url} is not a tfprof_nb hardware file: "
                                 f"{info['size']:,} bytes")
            return fs.cat_file(path)
    except FileNotFoundError:
        return None


def hardware_beside(read_from) -> tuple[HardwareSamples | None, str | None]:
    """(the samples, where they were read) of the sampler's file beside the host file
    ``read_from`` (a local path or a :class:`~.stores.RemoteFile`); (None, None) when there
    is none.  A file that is not one raises ValueError naming it; a store that fails raises
    as :func:`~.stores.remote_errors` says."""
    where = _location(read_from)
    if where is None:
        return None, None
    name, options = where
    local = local_path_of(name) if is_url(name) else name
    data = _local_bytes(local) if local is not None else _remote_bytes(name, options)
    if data is None:
        return None, None
    return read_hardware(data, name), name
