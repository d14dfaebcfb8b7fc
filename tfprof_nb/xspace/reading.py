"""``read_xspace``: one host's ``.xplane.pb`` decoded, from a local path or an object store."""

from __future__ import annotations

import numpy as np

from .decoder import read_local_xspace
from .model import XSpaceData
from .stores import RemoteFile

__all__ = ["read_xspace"]


def read_xspace(path, threads: int | None = None, progress: np.ndarray | None = None,
                select=None) -> XSpaceData:
    """Read and decode one ``.xplane.pb`` file: a local path, or a
    :class:`~tfprof_nb.xspace.stores.RemoteFile` (read through the local cache).  ``threads``
    decode it side by side and ``progress`` follows the decoding (see
    :func:`~tfprof_nb.xspace.decode_xspace`; ``select``: a
    :class:`~tfprof_nb.xspace.selection.Selection`, only its events decoded)."""
    if isinstance(path, RemoteFile):
        from .remote_read import read_remote

        space = read_remote(path, threads=threads, progress=progress, select=select)
    else:
        space = read_local_xspace(path, threads=threads, progress=progress, select=select)
    space.read_from = path
    return space
