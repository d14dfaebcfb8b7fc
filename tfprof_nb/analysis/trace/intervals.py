"""Sets of time intervals as sorted, disjoint ``(begin, end)`` int64 arrays (half-open).

The GPU-time analyses describe "when the device computes", "when a copy runs", "when the host
waits for input" as interval sets and combine them with these operations (native merges of the
sets' boundaries; a union of unsorted intervals sorts them first).  Results have no empty or
touching intervals, so one set of times has one form.  Times are integers (picoseconds), so
the measures of sets that partition a window add up to the window exactly.
"""

from __future__ import annotations

import numpy as np

from ..._native.kernels import interval_combine, interval_union

__all__ = ["Intervals", "union", "union_of", "intersect", "subtract", "measure_in", "clip",
           "EMPTY"]

Intervals = tuple  # (begin int64[k], end int64[k]), sorted and disjoint


def _empty() -> Intervals:
    return np.empty(0, np.int64), np.empty(0, np.int64)


EMPTY = _empty()


def union(begin, end) -> Intervals:
    """The union of any intervals (unsorted, overlapping, empty ones dropped) as a sorted,
    disjoint set; touching intervals merge."""
    begin = np.asarray(begin, np.int64)
    end = np.asarray(end, np.int64)
    if not len(begin):
        return _empty()
    return interval_union(begin, end)


def union_of(a: Intervals, b: Intervals) -> Intervals:
    """The union of two sets."""
    return interval_combine(a, b, "union")


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """Where both sets are."""
    if not len(a[0]) or not len(b[0]):
        return _empty()
    return interval_combine(a, b, "intersect")


def subtract(a: Intervals, b: Intervals) -> Intervals:
    """Where ``a`` is and ``b`` is not."""
    if not len(a[0]) or not len(b[0]):
        return a
    return interval_combine(a, b, "subtract")


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
