"""Name-code columns: counts, lookups, gathers and the rows of given codes."""

from __future__ import annotations

import numpy as np

from .. import lib
from ._calls import _c, _p, check
from .order_kernel import _codes

__all__ = ["code_counts", "group_sums", "take_text", "code_lookup", "take_rows", "values_at",
           "code_gather", "code_rows", "code_rows_multi", "sparse_lookup"]


def code_counts(code: np.ndarray, n_codes: int) -> np.ndarray:
    """int64 number of entries of each code (0 .. n_codes - 1) of a code column."""
    code, width = _codes(code)
    top = int(code.max()) + 1 if len(code) else 0
    out = np.zeros(max(n_codes, top), np.int64)
    if len(code):
        check(lib().tfp_code_counts(_p(code), width, len(code), _p(out)))
    return out[:max(n_codes, top)]


def group_sums(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """float64 sum of ``values`` over the rows of each group (``group``: int64 in [0,
    n_groups) per row) as pandas' groupby sums them (Kahan-compensated, in row order, NaN
    skipped: sums.c): the same floats as ``pd.Series(values).groupby(group).sum()``."""
    group, values = _c(group, np.int64), _c(values, np.float64)
    if len(group) != len(values):
        raise ValueError("group_sums takes one group per value")
    out, comp = np.zeros(int(n_groups), np.float64), np.zeros(int(n_groups), np.float64)
    if len(group):
        rc = lib().tfp_group_sums(_p(group), _p(values), len(group), int(n_groups), _p(out),
                                  _p(comp))
        if rc == -2:
            raise IndexError("group_sums: a group is outside [0, n_groups)")
        check(rc)
    return out


def take_text(t_off: np.ndarray, t_data: np.ndarray, code: np.ndarray):
    """(int64 offsets, uint8 bytes) of the strings ``table[code[i]]`` one after another (an
    arrow large_string's buffers), table string j being ``t_data[t_off[j]:t_off[j + 1]]``;
    numpy arrays (text.c)."""
    t_off, t_data, code = _c(t_off, np.int64), _c(t_data, np.uint8), _c(code, np.int64)
    n_table = len(t_off) - 1
    if n_table < 0 or (n_table and (t_off[0] < 0 or t_off[-1] > len(t_data)
                                    or (np.diff(t_off) < 0).any())):
        raise ValueError("take_text takes ascending table offsets inside its data")
    out_off = np.empty(len(code) + 1, np.int64)
    total = lib().tfp_take_text(_p(t_off), _p(t_data), n_table, _p(code), len(code),
                                _p(out_off), None)
    if total == -2:
        raise IndexError("take_text: a code is outside the table")
    out = np.empty(check(total), np.uint8)
    check(lib().tfp_take_text(_p(t_off), _p(t_data), n_table, _p(code), len(code),
                              _p(out_off), _p(out)))
    return out_off, out


def code_lookup(code: np.ndarray, table: np.ndarray) -> np.ndarray:
    """bool table[code] for a code column (uint8, uint16 or int32) and a bool table per
    code."""
    code, width = _codes(code)
    table = _c(table, np.bool_)
    out = np.empty(len(code), np.bool_)
    if len(code):
        check(lib().tfp_code_lookup_u8(_p(code), width, len(code), _p(table), _p(out)))
    return out


def take_rows(col: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """col[rows] of a numeric or bool column (items of 1, 2, 4 or 8 bytes) at int32 ``rows``
    inside it, without the index conversion numpy makes of int32 rows; other columns and rows
    go through numpy."""
    if (rows.dtype != np.int32 or col.ndim != 1 or col.dtype.kind not in "biuf"
            or col.dtype.itemsize not in (1, 2, 4, 8)):
        return col[rows]
    col = np.ascontiguousarray(col)
    rows = _c(rows, np.int32)
    out = np.empty(len(rows), col.dtype)
    if len(rows):
        rc = lib().tfp_take_rows(_p(col), len(col), col.dtype.itemsize, _p(rows), len(rows),
                                 _p(out))
        if rc == -2:
            raise IndexError("take_rows: a row is outside the column")
        check(rc)
    return out


def values_at(col: np.ndarray, rows: np.ndarray, n_values: int) -> np.ndarray:
    """uint8 flag per value 0 .. n_values - 1 of an int32 column: whether the column takes it
    at one of the int32 ``rows`` (``flags[col[rows]] = 1`` without numpy's index copies)."""
    col, rows = _c(col, np.int32), _c(rows, np.int32)
    flags = np.zeros(max(int(n_values), 1), np.uint8)
    if len(rows):
        rc = lib().tfp_mark_values_at(_p(col), len(col), _p(rows), len(rows), _p(flags),
                                      int(n_values))
        if rc == -2:
            raise IndexError("values_at: a row or a value is out of range")
        check(rc)
    return flags


def code_gather(code: np.ndarray, table: np.ndarray, fill: int = -1,
                out: np.ndarray | None = None) -> np.ndarray:
    """int32 table[code] for a code column (uint8, uint16 or int32) and an integer table per
    code (``fill`` for codes outside it), into ``out`` when given (int32, contiguous, len(code));
    without the index copy numpy's gathers make of narrow codes."""
    code, width = _codes(code)
    table = _c(table, np.int32)
    if out is None:
        out = np.empty(len(code), np.int32)
    elif out.dtype != np.int32 or len(out) != len(code) or not out.flags.c_contiguous:
        raise ValueError("out must be a contiguous int32 array of len(code)")
    if len(code):
        check(lib().tfp_code_gather_i32(_p(code), width, len(code), _p(table), len(table),
                                        int(fill), _p(out)))
    return out


def code_rows(code: np.ndarray, table: np.ndarray, cap: int | None = None,
              also: np.ndarray | None = None) -> np.ndarray:
    """int32 rows i (increasing) where table[code[i]] (and also[i], when given); ``cap``:
    an upper bound on their number (one pass), else they are counted first."""
    code, width = _codes(code)
    table = _c(table, np.bool_)
    also = None if also is None else _c(also, np.bool_)
    args = (_p(code), width, len(code), _p(table), 0 if also is None else _p(also))
    if cap is None:
        cap = check(lib().tfp_code_rows(*args, 0, 0))
    out = np.empty(int(cap), np.int32)
    k = check(lib().tfp_code_rows(*args, _p(out), int(cap)))
    return out[:k]


def code_rows_multi(code: np.ndarray, tables: list, caps: list) -> list:
    """:func:`code_rows` of several disjoint code sets (bool tables per code) in one pass over
    ``code``: one int32 row array per table; ``caps`` bound each one's rows (e.g. the
    events counted per name)."""
    if len(tables) > 127:
        raise ValueError("at most 127 code sets")
    code, width = _codes(code)
    size = max([len(t) for t in tables] + [1])
    slot = np.full(size, -1, np.int8)
    for s, table in enumerate(tables):
        hit = np.flatnonzero(np.asarray(table, bool))
        if (slot[hit] >= 0).any():
            raise ValueError("the code sets overlap")
        slot[hit] = s
    outs = [np.empty(max(int(c), 1), np.int32) for c in caps]
    ptrs = np.array([_p(o) for o in outs] or [0], np.uint64)
    cap = np.array([int(c) for c in caps] or [0], np.int64)
    counts = np.zeros(max(len(tables), 1), np.int64)
    if len(code) and tables:
        if int(code.max()) >= size:
            slot = np.concatenate([slot, np.full(int(code.max()) + 1 - size, -1, np.int8)])
        check(lib().tfp_code_rows_multi(_p(code), width, len(code), _p(slot), _p(ptrs),
                                        _p(cap), _p(counts)))
    if (counts[:len(tables)] > cap[:len(tables)]).any():
        raise ValueError("a code set has more rows than its cap")
    return [o[:int(k)] for o, k in zip(outs, counts)]


def sparse_lookup(rows: np.ndarray, values: np.ndarray, query: np.ndarray):
    """(values int64, hit bool) of a sparse column (rows increasing; int32 values are read
    as they are, others as int64) at ``query`` rows."""
    rows, query = _c(rows, np.int32), _c(query, np.int32)
    values = _c(values, np.int32 if values.dtype == np.int32 else np.int64)
    out = np.empty(len(query), np.int64)
    hit = np.empty(len(query), np.uint8)
    check(lib().tfp_sparse_lookup(_p(rows), _p(values), values.itemsize, len(rows), _p(query),
                                  len(query), _p(out), _p(hit)))
    return out, hit.view(bool)
