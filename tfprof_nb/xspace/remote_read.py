"""Reading one remote host file: from the local cache, into the cache, or straight into memory.

- In the cache already (same URL, version and size): decoded from the local file (mapped).
- Cacheable (the cache is on, the store gives a version and a size, the file fits the cache
  budget): streamed in one request into a temporary file in the cache, renamed into place
  once its size is checked, then decoded from there.
- Otherwise (``TFPROF_NB_CACHE=0``, larger than the budget, no version): read straight into
  anonymous memory and decoded there; nothing is written to disk.  Object stores are read in
  ranges of :data:`CHUNK_BYTES`, a few requests in flight at once; web servers in one
  streamed request.

A file larger than one range has its version checked again at the end (an object replaced
mid-read fails instead of mixing versions).  A transfer that fails or ends short raises an
error naming the URL.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator

import numpy as np

from ..errors import ObjectStoreError, ProfileFormatError
from .cache import cache_enabled, cache_max_bytes, cached_path, discard, store, truncated
from .decoder import decode_and_close, read_local_xspace
from .model import XSpaceData
from .stores import RemoteFile, entry_version, filesystem, remote_errors

__all__ = ["CHUNK_BYTES", "read_remote"]

CHUNK_BYTES = 16 * 2**20
PARALLEL_RANGES = 4  # range requests in flight at once (async stores: S3, GCS, ...)


def read_remote(rf: RemoteFile, threads: int | None = None,
                progress: np.ndarray | None = None, select=None) -> XSpaceData:
    """Decode the host file ``rf`` (see the module doc for where its bytes go; ``threads``
    and ``progress`` as for :func:`~tfprof_nb.xspace.decode_xspace`)."""
    local = cached_path(rf.url, rf.version, rf.size)
    if local is None and _cacheable(rf):
        local = _download(rf)
    if local is None:
        return _decode_in_memory(rf, threads, progress, select)
    try:
        return read_local_xspace(local, threads=threads, progress=progress, select=select)
    except ProfileFormatError as exc:  # the object itself is bad: keep no copy, name the URL
        discard(local)
        raise ProfileFormatError(rf.url, exc.problem, exc.offset) from exc


def _cacheable(rf: RemoteFile) -> bool:
    return (cache_enabled() and rf.version is not None and rf.size is not None
            and rf.size <= cache_max_bytes())


def _chunks(rf: RemoteFile, fs, path: str, size: int | None) -> Iterator[bytes]:
    """The object's bytes in order: ranges of CHUNK_BYTES (:data:`PARALLEL_RANGES` requests
    at a time) from object stores, one streamed request from web servers or when the size is
    unknown.  A range that comes back short raises (the object is shorter than it said)."""
    if size is None or _is_web(fs):
        with remote_errors(rf.url, "opening it"):
            src = fs.open(path, "rb", block_size=0)
        with src:
            while True:
                with remote_errors(rf.url, "reading it"):
                    chunk = src.read(CHUNK_BYTES)
                if not chunk:
                    return
                yield chunk
    step = CHUNK_BYTES * PARALLEL_RANGES
    for first in range(0, size, step):
        starts = list(range(first, min(first + step, size), CHUNK_BYTES))
        ends = [min(s + CHUNK_BYTES, size) for s in starts]
        with remote_errors(rf.url, f"reading bytes {first}-{ends[-1] - 1} of {size}"):
            parts = fs.cat_ranges([path] * len(starts), starts, ends, on_error="raise")
        for start, end, part in zip(starts, ends, parts):
            if len(part) != end - start:
                raise truncated(rf.url, start + len(part), size)
            yield part


def _is_web(fs) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return any(p in ("http", "https") for p in protocols)


def _transfer(rf: RemoteFile, write) -> int:
    """Read ``rf`` to its end, ``write(chunk, offset)`` each chunk; return the count.  More
    bytes than its size, or a version that changed meanwhile, is an error."""
    fs, path = filesystem(rf.url, rf.storage_options)
    done = 0
    for chunk in _chunks(rf, fs, path, rf.size):
        if rf.size is not None and done + len(chunk) > rf.size:
            raise ObjectStoreError(rf.url, f"more than its {rf.size} bytes arrived (the "
                                   "object changed while being read)")
        write(chunk, done)
        done += len(chunk)
    _check_unchanged(rf, fs, path, done)
    return done


def _check_unchanged(rf: RemoteFile, fs, path: str, size: int) -> None:
    """Raise if the object's version changed while it was read: a read of more than one
    range (or a resumed stream) could otherwise mix two versions.  One request is one
    response, consistent by itself: not checked."""
    if rf.version is None or _is_web(fs) or size <= CHUNK_BYTES:
        return
    with remote_errors(rf.url, "checking its version"):
        now = entry_version(fs.info(path))
    if now != rf.version:
        raise ObjectStoreError(rf.url, f"changed while being read (version {rf.version} "
                               f"became {now}): load it again")


def _download(rf: RemoteFile):
    """Bring ``rf`` into the cache (one streamed request); the cached file's path."""
    fs, path = filesystem(rf.url, rf.storage_options)

    def fill(tmp):
        with remote_errors(rf.url, "downloading it"):
            fs.get_file(path, str(tmp))
        _check_unchanged(rf, fs, path, tmp.stat().st_size)

    return store(rf.url, rf.version, rf.size, fill)


def _read_into_memory(rf: RemoteFile):
    """The object's bytes in anonymous memory (a ``mmap``; ``bytes`` when its size is 0 or
    unknown)."""
    if rf.size is None:  # a server that gives no length: collect the stream
        chunks: list[bytes] = []
        _transfer(rf, lambda chunk, _: chunks.append(chunk))
        return b"".join(chunks)
    if rf.size == 0:
        return b""
    data = mmap.mmap(-1, rf.size)  # filled in place, never written to disk

    def put(chunk, offset):
        data[offset:offset + len(chunk)] = chunk

    try:
        got = _transfer(rf, put)
        if got != rf.size:
            raise truncated(rf.url, got, rf.size)
    except BaseException:
        data.close()
        raise
    return data


def _decode_in_memory(rf: RemoteFile, threads: int | None,
                      progress: np.ndarray | None, select=None) -> XSpaceData:
    return decode_and_close(_read_into_memory(rf), rf.url, threads, progress, select)
