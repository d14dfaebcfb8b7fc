"""The trace viewer's windows: rows in a time range, merged per pixel."""

from __future__ import annotations

import numpy as np

from .. import lib
from ._calls import _c, _p

__all__ = ["tl_window", "tl_rows_in"]


def tl_window(start: np.ndarray, dur: np.ndarray, seg_lo: np.ndarray, seg_hi: np.ndarray,
              t0: float, t1: float, px_per_us: float, min_px: float, cap: int):
    """The trace viewer's blocks of [t0, t1] at ``px_per_us`` (see timeline.c): (count,
    b_start, b_end, b_first, b_count, seg_off); the block arrays hold min(count, cap) rows."""
    start, dur = _c(start, np.float64), _c(dur, np.float32)
    seg_lo, seg_hi = _c(seg_lo, np.int64), _c(seg_hi, np.int64)
    cap = max(int(cap), 0)
    b_start, b_end = np.empty(cap, np.float64), np.empty(cap, np.float64)
    b_first, b_count = np.empty(cap, np.int64), np.empty(cap, np.int64)
    seg_off = np.empty(len(seg_lo) + 1, np.int64)
    n = lib().tfp_tl_window(_p(start), _p(dur), _p(seg_lo), _p(seg_hi), len(seg_lo),
                            float(t0), float(t1), float(px_per_us), float(min_px), cap,
                            _p(b_start), _p(b_end), _p(b_first), _p(b_count), _p(seg_off))
    k = min(n, cap)
    return n, b_start[:k], b_end[:k], b_first[:k], b_count[:k], seg_off


def tl_rows_in(start: np.ndarray, dur: np.ndarray, seg_lo: np.ndarray, seg_hi: np.ndarray,
               t0: float, t1: float) -> np.ndarray:
    """Rows (per segment, in order) whose event overlaps [t0, t1]."""
    start, dur = _c(start, np.float64), _c(dur, np.float32)
    seg_lo, seg_hi = _c(seg_lo, np.int64), _c(seg_hi, np.int64)
    args = (_p(start), _p(dur), _p(seg_lo), _p(seg_hi), len(seg_lo), float(t0), float(t1))
    n = lib().tfp_tl_rows_in(*args, 0, 0)
    out = np.empty(n, np.int64)
    lib().tfp_tl_rows_in(*args, n, _p(out))
    return out
