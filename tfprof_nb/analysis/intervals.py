"""Sets of time intervals as sorted, disjoint ``(begin, end)`` int64 arrays (half-open).

The GPU-time analyses describe "when the device computes", "when a copy runs", "when the host
waits for input" as interval sets and combine them with these vectorised operations (a sort
and a cumulative sum each; no per-interval Python).  Times are integers (picoseconds), so the
measures of sets that partition a window add up to the window exactly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Intervals", "union", "intersect", "subtract", "measure_in", "clip", "EMPTY"]

Intervals = tuple  # (begin int64[k], end int64[k]), sorted and disjoint


def _empty() -> Intervals:
    return np.empty(0, np.int64), np.empty(0, np.int64)


EMPTY = _empty()


def union(begin, end) -> Intervals:
    """The union of any intervals (unsorted, overlapping, empty ones dropped) as a sorted,
    disjoint set; touching intervals merge."""
    begin = np.asarray(begin, np.int64)
    end = np.asarray(end, np.int64)
    keep = end > begin
    begin, end = begin[keep], end[keep]
    if not len(begin):
        return _empty()
    order = np.argsort(begin, kind="stable")
    begin, end = begin[order], end[order]
    reach = np.maximum.accumulate(end)
    new = np.ones(len(begin), dtype=bool)
    new[1:] = begin[1:] > reach[:-1]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(begin)) - 1
    return begin[starts], reach[ends]


def _sweep(a: Intervals, b: Intervals, keep) -> Intervals:
    """Intervals where ``keep(in_a, in_b)`` holds, for disjoint sets ``a`` and ``b``."""
    times = np.concatenate([a[0], a[1], b[0], b[1]])
    if not len(times):
        return _empty()
    na, nb = len(a[0]), len(b[0])
    da = np.concatenate([np.ones(na, np.int8), -np.ones(na, np.int8), np.zeros(2 * nb, np.int8)])
    db = np.concatenate([np.zeros(2 * na, np.int8), np.ones(nb, np.int8), -np.ones(nb, np.int8)])
    order = np.argsort(times, kind="stable")
    times = times[order]
    in_a = np.cumsum(da[order], dtype=np.int32) > 0
    in_b = np.cumsum(db[order], dtype=np.int32) > 0
    inside = keep(in_a, in_b)[:-1]
    begin, end = times[:-1][inside], times[1:][inside]
    return union(begin, end)


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """Where both sets are."""
    if not len(a[0]) or not len(b[0]):
        return _empty()
    return _sweep(a, b, lambda x, y: x & y)


def subtract(a: Intervals, b: Intervals) -> Intervals:
    """Where ``a`` is and ``b`` is not."""
    if not len(a[0]) or not len(b[0]):
        return a
    return _sweep(a, b, lambda x, y: x & ~y)


def clip(a: Intervals, lo: int, hi: int) -> Intervals:
    """``a`` within ``[lo, hi)``."""
    return intersect(a, (np.array([lo], np.int64), np.array([hi], np.int64)))


def _cumulative(a: Intervals, t: np.ndarray) -> np.ndarray:
    """Measure of ``a`` before each time ``t``."""
    begin, end = a
    cum = np.concatenate([[0], np.cumsum(end - begin)])
    k = np.searchsorted(begin, t, side="right")  # intervals that start at or before t
    over = np.where(k > 0, end[np.maximum(k - 1, 0)] - t, 0) if len(begin) else 0
    return cum[k] - np.maximum(over, 0)


def measure_in(a: Intervals, w0, w1) -> np.ndarray:
    """int64 measure of ``a`` inside each window ``[w0[i], w1[i])`` (windows may overlap)."""
    w0 = np.asarray(w0, np.int64)
    w1 = np.asarray(w1, np.int64)
    if not len(a[0]):
        return np.zeros(len(w0), np.int64)
    return _cumulative(a, w1) - _cumulative(a, w0)
