"""Sorting, nesting order and row selection."""

from __future__ import annotations

import numpy as np

from .. import lib
from ._calls import _c, _p, check

__all__ = ["argsort", "sort_pairs", "is_sorted_by", "nesting_order", "nesting_order_or_none",
           "tl_rows", "span", "nonzero", "rows_where", "select_rows"]


def argsort(*keys: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Stable int32 argsort by several keys, most significant first (like sorting by the
    tuple ``keys``); ``order`` (int32) is the starting permutation, which breaks ties."""
    n = len(keys[0])
    order = np.arange(n, dtype=np.int32) if order is None else _c(order, np.int32).copy()
    if n < 2:
        return order
    tmp = np.empty(n, np.int32)
    for key in reversed(keys):
        if key.dtype == np.int32:
            key = _c(key, np.int32)  # kept alive through the call
            rc = lib().tfp_argsort_i32(_p(key), n, _p(order), _p(tmp))
        else:
            key = _c(key, np.int64)
            rc = lib().tfp_argsort_i64(_p(key), n, _p(order), _p(tmp))
        check(rc)
    return order


def sort_pairs(key: np.ndarray, value: np.ndarray,
               pos: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(key, value) pairs (int32, keys non-negative) sorted by key, stably: new arrays, the
    inputs are not changed.  With ``pos`` the key of pair i is pos[key[i]] (gathered as it
    sorts, never as a whole array)."""
    key, value = _c(key, np.int32), _c(value, np.int32)
    if len(value) != len(key):
        raise ValueError("sort_pairs takes as many values as keys")
    pos = None if pos is None else _c(pos, np.int32)
    if len(key):
        if pos is not None and (int(key.min()) < 0 or int(key.max()) >= len(pos)):
            raise ValueError("sort_pairs: a key is not a position of pos")
        if int((key if pos is None else pos).min()) < 0:
            raise ValueError("sort_pairs takes non-negative keys")
    out_key, out_value = np.empty(len(key), np.int32), np.empty(len(key), np.int32)
    check(lib().tfp_sort_pairs_gather(_p(key), 0 if pos is None else _p(pos), _p(value),
                                      len(key), _p(out_key), _p(out_value)))
    return out_key, out_value


def is_sorted_by(line: np.ndarray, t: np.ndarray) -> bool:
    """Whether rows are ordered by (line, t) already."""
    line, t = _c(line, np.int32), _c(t, np.int64)
    return bool(lib().tfp_is_sorted_by(_p(line), _p(t), len(line)))


def _codes(code: np.ndarray) -> tuple[np.ndarray, int]:
    """A code column as stored (uint8, uint16 or int32) and its width in bytes."""
    if code.dtype == np.uint8:
        return _c(code, np.uint8), 1
    if code.dtype == np.uint16:
        return _c(code, np.uint16), 2
    return _c(code, np.int32), 4


def select_rows(code: np.ndarray, value: int, kind: np.ndarray | None = None,
                kind_value: int = 0) -> np.ndarray:
    """int32 rows r where code[r] == value (and kind[r] == kind_value), increasing; codes are
    uint8, uint16 or int32."""
    code, width = _codes(code)
    kind_arr = None if kind is None else _c(kind, np.int8)
    args = (_p(code), width, 0 if kind_arr is None else _p(kind_arr), len(code), int(value),
            int(kind_value))
    k = lib().tfp_select_rows(*args, 0, 0)  # count, then fill an array of the exact size
    out = np.empty(k, np.int32)
    lib().tfp_select_rows(*args, _p(out), k)
    return out


def rows_where(a: np.ndarray, value: int, equal: bool = True) -> np.ndarray:
    """int32 rows r of an int8 array where a[r] == value (or != value), increasing; fast
    when the rows are rare."""
    a = _c(a, np.int8)
    args = (_p(a), len(a), int(value), int(equal))
    k = lib().tfp_rows_where_i8(*args, 0, 0)  # count, then fill an array of the exact size
    out = np.empty(k, np.int32)
    lib().tfp_rows_where_i8(*args, _p(out), k)
    return out


def nesting_order(line: np.ndarray, begin: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """int32 rows ordered by (line, begin, longest first); ties keep row order."""
    line, begin, dur = _c(line, np.int32), _c(begin, np.int64), _c(dur, np.int64)
    n = len(line)
    if lib().tfp_is_nesting_order(_p(line), _p(begin), _p(dur), n):
        return np.arange(n, dtype=np.int32)
    return argsort(line, begin, -dur)


def nesting_order_or_none(line: np.ndarray, begin: np.ndarray, dur: np.ndarray):
    """:func:`nesting_order`, or None when the rows are in that order already."""
    line, begin, dur = _c(line, np.int32), _c(begin, np.int64), _c(dur, np.int64)
    if lib().tfp_is_nesting_order(_p(line), _p(begin), _p(dur), len(line)):
        return None
    return argsort(line, begin, -dur)


def tl_rows(line: np.ndarray, begin: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """int32 trace viewer row of each event on its line: the lowest row free when it begins
    (see timeline.c): the nesting depth of nested events, the fewest rows for events that
    overlap without nesting."""
    line, begin, dur = _c(line, np.int32), _c(begin, np.int64), _c(dur, np.int64)
    n = len(line)
    order = nesting_order(line, begin, dur)
    row = np.empty(n, np.int32)
    busy_end, busy_row = np.empty(n, np.int64), np.empty(n, np.int32)
    free_rows = np.empty(n, np.int32)
    lib().tfp_tl_rows(_p(order), n, _p(line), _p(begin), _p(dur), _p(row), _p(busy_end),
                      _p(busy_row), _p(free_rows))
    return row


def span(begin: np.ndarray, duration: np.ndarray) -> tuple[int, int]:
    """(earliest begin, latest end) of a non-empty set of events, without temporaries."""
    begin, duration = _c(begin, np.int64), _c(duration, np.int64)
    out = np.empty(2, np.int64)
    lib().tfp_span(_p(begin), _p(duration), len(begin), _p(out))
    return int(out[0]), int(out[1])


def nonzero(mask: np.ndarray) -> np.ndarray:
    """int32 indices of the true entries of a bool mask (np.flatnonzero without int64)."""
    mask = _c(mask, np.bool_)
    out = np.empty(int(np.count_nonzero(mask)), np.int32)
    lib().tfp_nonzero_i32(_p(mask), len(mask), _p(out))
    return out
