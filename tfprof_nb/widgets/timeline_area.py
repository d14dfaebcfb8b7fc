"""The trace viewer's area summary, answered by the kernel: the events of some tracks inside a
time range, per name: how many, their time inside the range (wall) and that time less their
children's (self), longest first.

The same rules as the browser's (``js/src/timeline/area.ts``, used where every event of the
range is in the page): the events of a (track, depth) segment that overlap [t0, t1) (sorted by
start, they do not overlap each other); an event's child is an event of the next depth of its
track that starts inside it, and only the time both share inside the range is taken from it.
"""

from __future__ import annotations

import numpy as np

from ..offline.columns import encode_columns

__all__ = ["MAX_AREA_ROWS", "area_summary"]

MAX_AREA_ROWS = 500  # names sent (the longest)


def _inside(a, b, t0: float, t1: float):
    return np.maximum(0.0, np.minimum(b, t1) - np.maximum(a, t0))


def _span(start: np.ndarray, dur: np.ndarray, lo: int, hi: int, t0: float,
          t1: float) -> tuple[int, int]:
    """The rows [first, end) of segment [lo, hi) that overlap [t0, t1)."""
    a = lo + int(np.searchsorted(start[lo:hi], t0, "left"))
    if a > lo and start[a - 1] + dur[a - 1] > t0:
        a -= 1
    return a, lo + int(np.searchsorted(start[lo:hi], t1, "left"))


def _children_time(index, seg: tuple, rows: np.ndarray, t0: float, t1: float,
                   self_time: np.ndarray) -> None:
    """Take from ``self_time`` (per row of ``rows``, in place) the time each row's children
    share with it inside the range; ``seg``: (parent segment's lo, hi) and the child rows."""
    (plo, phi), kids = seg
    if not len(kids) or phi <= plo:
        return
    start, dur = index.start, index.dur
    k_start = start[kids]
    k_end = k_start + dur[kids].astype(np.float64)
    # the parent: the last event of the depth above starting at or before the child
    p = plo + np.searchsorted(start[plo:phi], k_start, "right") - 1
    ok = p >= plo
    q = np.maximum(p, plo)
    p_start = start[q]
    p_end = np.where(ok, p_start + dur[q].astype(np.float64), -np.inf)
    ok &= k_start < p_end
    shared = _inside(np.maximum(k_start, p_start), np.minimum(k_end, p_end), t0, t1)
    ok &= shared > 0
    where = np.searchsorted(rows, p[ok])
    np.subtract.at(self_time, where, shared[ok])


def area_summary(index, segments, t0: float, t1: float, tracks) -> tuple[dict, list, int, int]:
    """The summary of ``tracks`` (track ids) over [t0, t1): (the columns' header, buffers,
    events, distinct names); ``segments`` the timeline's table (track, depth, lo, hi)."""
    wanted = np.isin(segments["track"].to_numpy(), np.asarray(list(tracks), np.int64))
    seg = segments[wanted]
    start, dur = index.start, index.dur
    spans = {}
    for track, depth, lo, hi in zip(seg.track.tolist(), seg.depth.tolist(), seg.lo.tolist(),
                                    seg.hi.tolist()):
        spans[(track, depth)] = ((lo, hi), _span(start, dur, lo, hi, t0, t1))
    parts = [np.arange(a, b) for _, (a, b) in sorted(spans.values())]
    rows = np.concatenate(parts) if parts else np.empty(0, np.int64)  # (segments: disjoint)
    wall = _inside(start[rows], start[rows] + dur[rows].astype(np.float64), t0, t1)
    self_time = wall.copy()
    for (track, depth), (_, (a, b)) in spans.items():
        parent = spans.get((track, depth - 1))
        if parent is not None:
            _children_time(index, (parent[0], np.arange(a, b)), rows, t0, t1, self_time)
    return _by_name(index.name[rows], wall, np.maximum(self_time, 0.0), len(rows))


def _by_name(codes: np.ndarray, wall: np.ndarray, own: np.ndarray, events: int):
    """Per name: count, wall, self; the longest MAX_AREA_ROWS as typed columns."""
    count = np.bincount(codes)
    names = np.flatnonzero(count)
    count = count[names]
    wall_by = np.bincount(codes, wall)[names]
    self_by = np.bincount(codes, own)[names]
    order = np.lexsort((-count, -wall_by))[:MAX_AREA_ROWS]
    wire = encode_columns({"name": names[order].astype(np.uint32),
                           "count": count[order].astype(np.uint32),
                           "wall": wall_by[order].astype(np.float64),
                           "self": self_by[order].astype(np.float64)})
    return {"schema": wire["schema"]}, wire["buffers"], events, len(names)
