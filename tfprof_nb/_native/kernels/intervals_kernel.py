"""Interval sets: union, intersection, difference."""

from __future__ import annotations

import numpy as np

from .. import lib
from ..layout import ERR
from ._calls import _c, _p, check
from .order_kernel import argsort

__all__ = ["interval_union", "interval_combine"]


_IV_MODES = {"union": 0, "intersect": 1, "subtract": 2}

_ERR_UNSORTED = ERR.UNSORTED


def interval_union(begin: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals [begin, end) (any order, overlapping, empty ones dropped) as a
    sorted set without touching intervals: (begin, end) int64 arrays; sorted only when the
    begins are not already."""
    begin, end = _c(begin, np.int64), _c(end, np.int64)
    if len(begin) != len(end):
        raise ValueError("interval_union takes as many ends as begins")
    out_b, out_e = np.empty(len(begin), np.int64), np.empty(len(begin), np.int64)
    n = lib().tfp_iv_union(_p(begin), _p(end), len(begin), None, _p(out_b), _p(out_e))
    if n == _ERR_UNSORTED:
        order = argsort(begin)
        n = lib().tfp_iv_union(_p(begin), _p(end), len(begin), _p(order), _p(out_b),
                               _p(out_e))
    check(n)
    return out_b[:n].copy(), out_e[:n].copy()


def interval_combine(a: tuple, b: tuple, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """``mode`` ("union", "intersect" or "subtract": a minus b) of two sorted, disjoint
    interval sets (begin, end) in one merge of their boundaries; the result has no empty or
    touching intervals.  Raises ValueError when a set is not sorted and disjoint."""
    (ab, ae), (bb, be) = ((_c(x, np.int64), _c(y, np.int64)) for x, y in (a, b))
    if len(ab) != len(ae) or len(bb) != len(be):
        raise ValueError("interval_combine takes as many ends as begins")
    size = len(ab) + len(bb)
    out_b, out_e = np.empty(size, np.int64), np.empty(size, np.int64)
    n = lib().tfp_iv_combine(_p(ab), _p(ae), len(ab), _p(bb), _p(be), len(bb),
                             _IV_MODES[mode], _p(out_b), _p(out_e))
    if n == _ERR_UNSORTED:
        raise ValueError("interval_combine takes sorted, disjoint interval sets")
    check(n)
    return out_b[:n].copy(), out_e[:n].copy()
