"""Begin and end records of nested slices in the order a stack-based reader needs them.

A reader of begin/end events (Perfetto's TrackEvent slices) closes the innermost open slice
of a track at each end, so the records of a track must come in depth-first order: a slice's
begin, its children's records, its end; ends falling on the same moment innermost first.
Sorted this way the records are also in time order, which is what the reader sorts by
(keeping file order among equal times).
"""

from __future__ import annotations

import numpy as np

from .._native.kernels import nest_loose, nesting_order

__all__ = ["slice_sequence"]


def slice_sequence(track: np.ndarray, start: np.ndarray, duration: np.ndarray) -> np.ndarray:
    """int64 records in order: slice i's begin as i, its end as ``~i`` (negative).

    The slices of each track must nest (see ``_tracks``); tracks follow each other.  Track
    codes that increase along the slices (with starts increasing within a track) save a sort.
    """
    n = len(track)
    if not n:
        return np.empty(0, np.int64)
    track = np.asarray(track, np.int32)
    parent, depth, _ = nest_loose(track, start, duration)
    order = nesting_order(track, start, duration).astype(np.int64)
    position = np.empty(n, np.int64)
    position[order] = np.arange(n)
    size = np.ones(n, np.int64)  # slices in each subtree, the slice included
    by_depth = np.argsort(depth, kind="stable")
    levels = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2))
    for d in range(int(depth.max()), 0, -1):
        rows = by_depth[levels[d]:levels[d + 1]]
        np.add.at(size, parent[rows], size[rows])
    # record slots: a begin at its pre-order position, an end just before the first slice
    # after its subtree, deeper ends first
    levels_span = int(depth.max()) + 2
    begin_key = position * (2 * levels_span) + levels_span
    end_key = (position + size) * (2 * levels_span) + (levels_span - 1 - depth)
    keys = np.concatenate([begin_key, end_key])
    records = np.concatenate([np.arange(n, dtype=np.int64), ~np.arange(n, dtype=np.int64)])
    return records[np.argsort(keys, kind="stable")]
