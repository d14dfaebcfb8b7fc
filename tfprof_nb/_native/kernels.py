"""numpy-facing wrappers of the native kernels: arrays in, arrays out, dtypes checked.

Row numbers are int32 (a host holds fewer than 2**31 events), times int64 picoseconds.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from ..errors import Cancelled
from . import lib
from .layout import N_STEP_TYPES

ERR_CANCELLED = -10  # common.h

__all__ = ["argsort", "sort_pairs", "select_rows", "rows_where", "nesting_order",
           "nesting_order_or_none", "nest_strict", "nest_query", "nest_loose", "csr", "tl_rows",
           "tl_rows_in", "join_on_keys", "join_one_on_ids", "context_links", "spread_groups",
           "is_sorted_by",
           "int_stat", "int_stats", "stats_at", "stat_name_counts", "code_counts", "code_lookup",
           "code_rows", "code_rows_multi", "keys_in", "line_name_rows", "check", "sparse_lookup",
           "threadpool_regions", "regions_from_rows", "step_breakdown", "host_step_rows",
           "nonzero", "span", "op_stack_walk", "op_walk_rows", "inherit_from_allocations",
           "active_at_peak", "interval_union", "interval_combine", "N_TYPES"]

N_TYPES = N_STEP_TYPES  # step-time event types (see analysis.steps)


def check(rc: int) -> int:
    """A kernel's return code: raises Cancelled when its run's cancel token stopped it (see
    :class:`tfprof_nb._native.CancelToken`), MemoryError for other negative codes."""
    if rc == ERR_CANCELLED:
        raise Cancelled("interrupted")
    if rc < 0:
        raise MemoryError("out of memory in a native kernel")
    return rc


def _threads(threads: int | None) -> int:
    """Threads a kernel splits its work over: one per core unless told."""
    return max(1, int(threads) if threads is not None else (os.cpu_count() or 1))


def _c(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` contiguous as ``dtype`` (an input of a kernel), copied only when it must be: a
    bool array read as uint8 is a view of the same bytes, not a cast."""
    a = np.asarray(a)
    if a.dtype == np.bool_ and np.dtype(dtype) == np.uint8:
        return np.ascontiguousarray(a).view(np.uint8)
    return np.ascontiguousarray(a, dtype=dtype)


def _p(a: np.ndarray) -> int:
    """The address of ``a``'s data: ``a`` must stay referenced (a local) until the C call
    returns, never a temporary made in the call's arguments."""
    return a.ctypes.data


def _stat_columns(owner_kind, kind, raw, owner) -> tuple:
    """A stat table's owner kind, kind, raw value and owner columns as the kernels read them
    (int8, int8, int64, int32, contiguous), copied only when they are not."""
    return (_c(owner_kind, np.int8), _c(kind, np.int8), _c(raw, np.int64),
            _c(owner, np.int32))


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


def int_stat(name_code, owner_kind, kind, raw, owner, code: int, cap: int | None = None):
    """(event rows int32, values int64) of the integer stat ``code`` of events: doubles
    truncated, the last value of an event that carries the stat twice.  ``cap``: an upper
    bound on their number (one pass over the stats), else they are counted first."""
    return int_stats(name_code, owner_kind, kind, raw, owner, [code],
                     None if cap is None else [cap])[0]


def int_stats(name_code, owner_kind, kind, raw, owner, codes: list[int],
              caps: list[int] | None = None) -> list[tuple]:
    """:func:`int_stat` of several stat codes in one pass over the stat table when ``caps``
    (upper bounds on each one's events, e.g. StatTable.counts_by_name) are given, else two
    (count, then fill): one (rows, values) pair per code."""
    name_code, width = _codes(name_code)
    owner_kind, kind, raw, owner = _stat_columns(owner_kind, kind, raw, owner)
    n_codes = int(max(codes)) + 1 if codes else 0
    slot_of_code = np.full(max(n_codes, 1), -1, np.int8)
    slot_of_code[np.asarray(codes, np.int64)] = np.arange(len(codes), dtype=np.int8)
    k = len(codes)
    counts, last = np.zeros(k, np.int64), np.empty(k, np.int32)

    def scan(rows, values, caps):
        # the address arrays must outlive the call: keep them in locals
        rows_addr = np.array([_p(r) for r in rows], np.int64)
        values_addr = np.array([_p(v) for v in values], np.int64)
        caps = np.asarray(caps, np.int64)
        check(lib().tfp_int_stats(_p(name_code), width, _p(owner_kind), _p(kind), _p(raw),
                                  _p(owner), len(name_code), _p(slot_of_code), n_codes,
                                  _p(rows_addr), _p(values_addr), _p(caps), _p(counts),
                                  _p(last), k))

    if caps is None:
        scan([np.empty(1, np.int32) for _ in codes], [np.empty(1, np.int64) for _ in codes],
             [0] * k)
        caps = counts.copy()
    rows = [np.empty(int(c), np.int32) for c in caps]
    values = [np.empty(int(c), np.int64) for c in caps]
    scan(rows, values, caps)
    return [(r[:c], v[:c]) for r, v, c in zip(rows, values, counts.tolist())]


def line_name_rows(line: np.ndarray, code: np.ndarray, line_ok: np.ndarray,
                   name_ok: np.ndarray, cap: int) -> np.ndarray:
    """int32 rows i (increasing) where line_ok[line[i]] and name_ok[code[i]]; ``cap``: an
    upper bound on their number."""
    line = _c(line, np.int32)
    code, width = _codes(code)
    line_ok, name_ok = _c(line_ok, np.bool_), _c(name_ok, np.bool_)
    out = np.empty(int(cap), np.int32)
    k = check(lib().tfp_line_name_rows(_p(line), _p(code), width, len(code), _p(line_ok),
                                       _p(name_ok), _p(out), int(cap)))
    return out[:min(k, int(cap))]


# queries on fewer distinct rows in all than the stats over this are sought row by row
# (tfp_stats_seek) rather than answered by a pass over every stat.  On a 58 M-stat host a
# row costs a gallop over the owners (40-300 ns, less the denser the rows: 12 M clustered
# rows 0.47 s), the pass 4-10 ns per stat for all the queries at once (0.54 s for those)
SEEK_RATIO = 4


def stats_at(name_code, owner_kind, kind, raw, owner, queries: list,
             runs: tuple | None = None) -> list:
    """Integer stats at event rows: ``queries`` is a list of (stat name code, rows); returns
    one (values int64, hit bool) per query, in the rows' order (see tfp_stats_at: doubles
    truncated, the last value of an event winning).  The queries are answered in one pass
    over the stat table, or, given ``runs`` (StatTable.other_owner_runs) and few rows in all,
    sought row by row without one."""
    name_code, width = _codes(name_code)
    owner_kind, kind, raw, owner = _stat_columns(owner_kind, kind, raw, owner)
    sorted_rows, sorts = [], []
    for _, rows in queries:
        rows = np.asarray(rows, np.int32)
        ascending = len(rows) < 2 or bool((rows[1:] >= rows[:-1]).all())
        sort = None if ascending else np.argsort(rows, kind="stable")
        sorted_rows.append(np.ascontiguousarray(rows if sort is None else rows[sort]))
        sorts.append(sort)
    n = len(name_code)
    # queries on the same rows (the same array) are sought together
    sets: dict = {}
    for q, (_, rows) in enumerate(queries):
        sets.setdefault((id(rows), len(rows)), []).append(q)
    seek_all = runs is not None and \
        sum(len(sorted_rows[qs[0]]) for qs in sets.values()) * SEEK_RATIO < n
    found: list = [None] * len(queries)
    lo, hi = (_c(a, np.int64) for a in runs) if seek_all else (None, None)
    for qs in (sets.values() if seek_all else ()):
        rows = sorted_rows[qs[0]]
        codes = list(dict.fromkeys(int(queries[q][0]) for q in qs))
        code_arr = np.asarray(codes, np.int32)
        values = np.empty((len(codes), len(rows)), np.int64)
        hit = np.empty((len(codes), len(rows)), np.uint8)
        check(lib().tfp_stats_seek(_p(name_code), width, _p(owner_kind), _p(kind), _p(raw),
                                   _p(owner), n, _p(lo), _p(hi), len(lo), _p(code_arr),
                                   len(codes), _p(rows), len(rows), _p(values), _p(hit)))
        for q in qs:
            i = codes.index(int(queries[q][0]))
            found[q] = (values[i], hit[i].view(bool))
    scan = [] if seek_all else list(range(len(queries)))
    if scan:
        for q, answer in zip(scan, _stats_scan(name_code, width, owner_kind, kind, raw, owner,
                                               [(int(queries[q][0]), sorted_rows[q])
                                                for q in scan])):
            found[q] = answer
    out: list = [None] * len(queries)
    for q, (v, h) in enumerate(found):
        if sorts[q] is not None:  # back to the rows' order
            back = np.empty_like(sorts[q])
            back[sorts[q]] = np.arange(len(back))
            v, h = v[back], h[back]
        out[q] = (v, h)
    return out


def _stats_scan(name_code, width, owner_kind, kind, raw, owner, queries: list) -> list:
    """stats_at's queries (code, sorted rows) in one pass over the stat table."""
    order = sorted(range(len(queries)), key=lambda q: queries[q][0])  # by code
    n_codes = max(c for c, _ in queries) + 1
    first, count = np.zeros(n_codes, np.int32), np.zeros(n_codes, np.int32)
    lists = []
    for pos, q in enumerate(order):
        code, rows = queries[q]
        if count[code] == 0:
            first[code] = pos
        count[code] += 1
        lists.append(rows)
    off = np.zeros(len(lists) + 1, np.int64)
    off[1:] = np.cumsum([len(r) for r in lists])
    rows = np.concatenate(lists).astype(np.int32)
    values, hit = np.empty(len(rows), np.int64), np.empty(len(rows), np.uint8)
    cursor = np.empty(len(lists), np.int64)
    check(lib().tfp_stats_at(_p(name_code), width, _p(owner_kind), _p(kind), _p(raw),
                             _p(owner), len(name_code), _p(first), _p(count), n_codes,
                             _p(rows), _p(off), len(lists), _p(values), _p(hit), _p(cursor)))
    out: list = [None] * len(queries)
    for pos, q in enumerate(order):
        out[q] = (values[off[pos]:off[pos + 1]], hit[off[pos]:off[pos + 1]].view(bool))
    return out


def stat_name_counts(name_code: np.ndarray, owner_kind: np.ndarray, n_names: int) -> np.ndarray:
    """int64 number of event stats (owner kind 0) of each name code."""
    name_code, width = _codes(name_code)
    owner_kind = _c(owner_kind, np.int8)
    top = int(name_code.max()) + 1 if len(name_code) else 0
    out = np.zeros(max(n_names, top), np.int64)
    check(lib().tfp_stat_name_counts(_p(name_code), width, _p(owner_kind), len(name_code),
                                     _p(out)))
    return out[:n_names]


def code_counts(code: np.ndarray, n_codes: int) -> np.ndarray:
    """int64 number of entries of each code (0 .. n_codes - 1) of a code column."""
    code, width = _codes(code)
    top = int(code.max()) + 1 if len(code) else 0
    out = np.zeros(max(n_codes, top), np.int64)
    if len(code):
        check(lib().tfp_code_counts(_p(code), width, len(code), _p(out)))
    return out[:max(n_codes, top)]


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


def keys_in(a_keys: tuple, b_keys: tuple) -> np.ndarray:
    """bool per entry of ``a_keys`` (one or two int64 columns): whether its key is one of
    ``b_keys``' (the same number of columns; a hash set of b's keys, like ``np.isin``)."""
    def two(keys):
        first = _c(keys[0], np.int64)
        return first, (_c(keys[1], np.int64) if len(keys) > 1 else np.zeros_like(first))

    if len(a_keys) != len(b_keys) or len(a_keys) not in (1, 2):
        raise ValueError("keys_in: one or two key columns on both sides")
    (a0, a1), (b0, b1) = two(a_keys), two(b_keys)
    found = np.zeros(len(a0), np.uint8)
    if len(a0) and len(b0):
        check(lib().tfp_keys_in(_p(a0), _p(a1), len(a0), _p(b0), _p(b1), len(b0),
                                _p(found)))
    return found.view(bool)


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


def nest_strict(order, n_first: int, first: tuple, second: tuple,
                skip: np.ndarray | None = None, order2: np.ndarray | None = None,
                threads: int | None = None) -> np.ndarray:
    """int32 parent of each node: the innermost earlier node on its line that fully contains
    it (-1: none); ``skip`` nodes get no parent and are never parents.  Nodes are visited in
    ``order`` (all nodes; None: the real nodes 0..n_first-1 are in nesting order already)
    merged with ``order2`` (extra nodes, ids from n_first; real nodes first on ties).  A large
    walk runs on ``threads`` threads (None: one per core), lines split between them."""
    l1, b1, d1 = _c(first[0], np.int32), _c(first[1], np.int64), _c(first[2], np.int64)
    l2, b2, d2 = _c(second[0], np.int32), _c(second[1], np.int64), _c(second[2], np.int64)
    o1 = None if order is None else _c(order, np.int32)
    o2 = np.empty(0, np.int32) if order2 is None else _c(order2, np.int32)
    n1 = n_first if o1 is None else len(o1)
    m = n1 + len(o2)
    skip_arr = None if skip is None else _c(skip, np.uint8)
    parent = np.empty(m, np.int32)
    check(lib().tfp_nest_strict(0 if o1 is None else _p(o1), n1, _p(o2), len(o2), n_first,
                                _p(l1), _p(b1), _p(d1), _p(l2), _p(b2), _p(d2),
                                0 if skip_arr is None else _p(skip_arr), _p(parent),
                                _threads(threads)))
    return parent


def nest_query(order, line, begin, dur, skip, rows, name_code=None, exec_name=None,
               call_flag=None, levels: int = 64, parents: bool = True,
               threads: int | None = None):
    """:func:`nest_strict` of one set of nodes (visited in ``order``; None: row order) at
    the event ``rows`` only (increasing, repeats allowed): (their parent int32, None unless
    ``parents``; and with ``exec_name`` (bool per name code) the ``call_flag`` of the first
    ancestor within ``levels`` whose name has it, else None), without a parent per event.
    Only the lines of ``rows`` are walked and, when only flags are asked for, only those of
    them that hold an event whose name has the flag.  A large walk runs on ``threads``
    threads (None: one per core), lines split between them."""
    line, begin, dur = _c(line, np.int32), _c(begin, np.int64), _c(dur, np.int64)
    rows = _c(rows, np.int32)
    if len(rows) > 1 and (rows[1:] < rows[:-1]).any():
        raise ValueError("nest_query: rows must be increasing")
    o = None if order is None else _c(order, np.int32)
    sk = None if skip is None else _c(skip, np.uint8)
    parent = np.empty(len(rows) if parents else 0, np.int32)
    found = None
    code, width, ex, flag = np.zeros(1, np.uint16), 2, None, None
    n_lines = int(line.max()) + 1 if len(line) else 0
    line_ok = values_at(line, rows, n_lines)
    if exec_name is not None:
        code, width = _codes(name_code)
        ex, flag = _c(exec_name, np.uint8), _c(call_flag, np.uint8)
        found = np.zeros(len(rows), np.uint8)
        if not parents:  # rows on lines without a flagged name find nothing
            line_ok &= values_at(line, code_rows(code, ex.view(bool)), n_lines)
    check(lib().tfp_nest_query(0 if o is None else _p(o), len(line), _p(line), _p(begin),
                               _p(dur), 0 if sk is None else _p(sk), _p(line_ok), _p(rows),
                               len(rows), _p(parent) if parents else 0, _p(code), width,
                               0 if ex is None else _p(ex), 0 if flag is None else _p(flag),
                               levels, 0 if found is None else _p(found),
                               _threads(threads)))
    return parent if parents else None, None if found is None else found.view(bool)


def nesting_order_or_none(line: np.ndarray, begin: np.ndarray, dur: np.ndarray):
    """:func:`nesting_order`, or None when the rows are in that order already."""
    line, begin, dur = _c(line, np.int32), _c(begin, np.int64), _c(dur, np.int64)
    if lib().tfp_is_nesting_order(_p(line), _p(begin), _p(dur), len(line)):
        return None
    return argsort(line, begin, -dur)


def nest_loose(line: np.ndarray, begin: np.ndarray, dur: np.ndarray):
    """(parent int32, depth int32, child_ps int64) of the loose nesting of rows by line
    (an event's parent is the innermost open event that ends after it starts)."""
    line, begin, dur = _c(line, np.int32), _c(begin, np.int64), _c(dur, np.int64)
    n = len(line)
    order = nesting_order(line, begin, dur)
    parent = np.empty(n, np.int32)
    depth = np.empty(n, np.int32)
    child = np.zeros(n, np.int64)
    stack = np.empty(n + 1, np.int32)
    lib().tfp_nest_loose(_p(order), n, _p(line), _p(begin), _p(dur), _p(parent), _p(depth),
                         _p(child), _p(stack))
    return parent, depth, child


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


def csr(src: np.ndarray, dst: np.ndarray, n: int):
    """Adjacency lists (offsets int32 of n + 1, targets int32) of edges src -> dst."""
    src, dst = _c(src, np.int32), _c(dst, np.int32)
    off = np.empty(n + 1, np.int32)
    tgt = np.empty(len(src), np.int32)
    if lib().tfp_csr(_p(src), _p(dst), len(src), n, _p(off), _p(tgt)) < 0:
        raise MemoryError("out of memory while building adjacency lists")
    return off, tgt


def _take_edges(rc: int, handle) -> tuple[np.ndarray, np.ndarray]:
    check(rc)  # (a failed join has freed its handle)
    try:
        src, dst = np.empty(rc, np.int32), np.empty(rc, np.int32)
    except BaseException:  # (MemoryError, KeyboardInterrupt: the handle is freed all the same)
        lib().tfp_join_free(handle)
        raise
    lib().tfp_join_take(handle, _p(src), _p(dst))
    return src, dst


def join_on_keys(a_rows, a_keys: tuple, b_rows, b_keys: tuple, limit: int = 0,
                 threads: int | None = None):
    """Pairs (a row, b row) whose two keys are equal, for every b entry in b's order and,
    within one, a's entries in a's order (a radix-partitioned hash join); keys where both
    sides have ``limit`` or more rows are skipped (0: no limit; at most limit - 1 pairs per
    row of a key's larger side).  See :func:`join_one_on_ids` for one pair per b row."""
    ar, br = _c(a_rows, np.int32), _c(b_rows, np.int32)
    a0, a1 = _c(a_keys[0], np.int64), _c(a_keys[1], np.int64)
    b0, b1 = _c(b_keys[0], np.int64), _c(b_keys[1], np.int64)
    handle = ctypes.c_void_p()
    rc = lib().tfp_join_keys(_p(ar), _p(a0), _p(a1), len(ar), _p(br), _p(b0), _p(b1), len(br),
                             limit, _threads(threads), ctypes.byref(handle))
    return _take_edges(rc, handle)


# join_on_ids looks ids up in a table when a's ids span at most this many slots per a entry
# (plus DIRECT_SPAN_MIN): a table of int32 rows, where the hash join holds 16 bytes an entry
DIRECT_SPAN_PER_ROW = 4
DIRECT_SPAN_MIN = 1 << 16


def join_on_ids(a_rows, a_ids, b_rows, b_ids, limit: int = 0):
    """:func:`join_on_keys` on one integer id: pairs (a row, b row) with equal ids, in b's
    order.  When a's ids are distinct and dense (CUPTI's correlation ids count up from one),
    each b id is looked up in a table indexed by id, in two passes of numpy over the rows;
    otherwise, or when ``limit`` would skip every key (1), the hash join."""
    a_rows, b_rows = _c(a_rows, np.int32), _c(b_rows, np.int32)
    a_ids, b_ids = _c(a_ids, np.int64), _c(b_ids, np.int64)
    if len(a_ids) and len(b_ids) and limit != 1:
        lo, hi = int(a_ids.min()), int(a_ids.max())
        if hi - lo < DIRECT_SPAN_PER_ROW * len(a_ids) + DIRECT_SPAN_MIN:
            table = np.full(hi - lo + 1, -1, np.int32)
            slot = a_ids - lo
            table[slot] = a_rows
            if np.array_equal(table[slot], a_rows):  # (a repeated id keeps only its last row)
                inside = (b_ids >= lo) & (b_ids <= hi)
                src = np.full(len(b_ids), -1, np.int32)
                src[inside] = table[b_ids[inside] - lo]
                hit = src >= 0
                return src[hit], b_rows[hit]
    zeros_a, zeros_b = np.zeros(len(a_ids), np.int64), np.zeros(len(b_ids), np.int64)
    return join_on_keys(a_rows, (zeros_a, a_ids), b_rows, (zeros_b, b_ids), limit)


_JOIN_ONE = {"first": -1, "last": -2}  # links.c's JOIN_FIRST, JOIN_LAST


def join_one_on_ids(a_rows, a_ids, b_rows, b_ids, keep: str = "last",
                    threads: int | None = None):
    """(a rows, b rows, duplicates): each b entry paired with one a entry of its id, the
    first or the last (``keep``: the smallest or the largest a row), in b's order: at most
    one pair per b entry however often the ids repeat (xprof links a kernel to the last
    launch of its correlation id).  ``duplicates``: the a entries left out because another
    has their id (ids some b entry has only)."""
    if keep not in _JOIN_ONE:
        raise ValueError("keep must be 'first' or 'last'")
    a_rows, b_rows = _c(a_rows, np.int32), _c(b_rows, np.int32)
    a_ids, b_ids = _c(a_ids, np.int64), _c(b_ids, np.int64)
    direct = _one_by_table(a_rows, a_ids, b_rows, b_ids, keep)
    if direct is not None:
        return direct
    zeros_a, zeros_b = np.zeros(len(a_ids), np.int64), np.zeros(len(b_ids), np.int64)
    handle = ctypes.c_void_p()
    rc = lib().tfp_join_keys(_p(a_rows), _p(zeros_a), _p(a_ids), len(a_rows), _p(b_rows),
                             _p(zeros_b), _p(b_ids), len(b_rows), _JOIN_ONE[keep],
                             _threads(threads), ctypes.byref(handle))
    dups = int(lib().tfp_join_duplicates(handle)) if rc >= 0 else 0
    src, dst = _take_edges(rc, handle)
    return src, dst, dups


def _one_by_table(a_rows, a_ids, b_rows, b_ids, keep: str):
    """:func:`join_one_on_ids` by a table indexed by id, when a's rows increase and its ids
    are dense (see :func:`join_on_ids`); None otherwise."""
    if not len(a_ids) or not len(b_ids):
        return np.empty(0, np.int32), np.empty(0, np.int32), 0
    lo, hi = int(a_ids.min()), int(a_ids.max())
    if hi - lo >= DIRECT_SPAN_PER_ROW * len(a_ids) + DIRECT_SPAN_MIN or \
            not (a_rows[1:] > a_rows[:-1]).all():
        return None
    slot = a_ids - lo
    # a's rows increase: the last of an id is its largest row, the first its smallest (ufunc
    # .at, not a fancy assignment, whose order for repeated slots numpy leaves unspecified)
    if keep == "last":
        table = np.full(hi - lo + 1, -1, np.int32)
        np.maximum.at(table, slot, a_rows.astype(np.int32, copy=False))
    else:
        none = np.iinfo(np.int32).max
        table = np.full(hi - lo + 1, none, np.int32)
        np.minimum.at(table, slot, a_rows.astype(np.int32, copy=False))
        table[table == none] = -1
    inside = np.flatnonzero((b_ids >= lo) & (b_ids <= hi))
    src = table[b_ids[inside] - lo]
    hit = src >= 0
    used = np.zeros(len(table), bool)
    used[b_ids[inside[hit]] - lo] = True
    dups = int(np.count_nonzero(used[slot])) - int(np.count_nonzero(used))
    return src[hit], b_rows[inside[hit]], dups


LINK_PASS_ENTRIES = 4 << 20  # producers and consumers past which links take 2 passes


def context_links(name_code, owner_kind, kind, raw, owner, codes: tuple, caps: tuple,
                  extra: tuple, limit: int = 0, threads: int | None = None,
                  passes: int | None = None):
    """Producer -> consumer pairs (producer row, consumer row) of events, straight from the
    stat table: ``codes`` (pt, p, ct, c) name the stats (-1: absent); events carrying pt and
    p produce (pt, p), events carrying ct and c consume (ct, c), and ``extra`` (rows, k0, k1)
    consumers follow them.  ``caps``: upper bounds on producers and consumers.  Pairs come in
    consumer order (see :func:`join_on_keys`).  ``passes`` (1, 2 or 4; default: 2 past
    LINK_PASS_ENTRIES entries) joins the keys in that many shares one after the other, each
    scanning the stats again: the join holds one share of the entries at a time."""
    if passes is None:  # (4 passes hold less but scan the stats twice more: 2 pay better)
        passes = 2 if int(caps[0]) + int(caps[1]) + len(extra[0]) > LINK_PASS_ENTRIES else 1
    if passes not in (1, 2, 4):
        raise ValueError("passes must be 1, 2 or 4")
    name_code, width = _codes(name_code)
    owner_kind, kind, raw, owner = _stat_columns(owner_kind, kind, raw, owner)
    xr, x0, x1 = _c(extra[0], np.int32), _c(extra[1], np.int64), _c(extra[2], np.int64)
    handle = ctypes.c_void_p()
    rc = lib().tfp_context_links(
        _p(name_code), width, _p(owner_kind), _p(kind), _p(raw), _p(owner), len(name_code),
        *map(int, codes),
        int(caps[0]), int(caps[1]), _p(xr), _p(x0), _p(x1), len(xr), limit, _threads(threads),
        passes, ctypes.byref(handle))
    return _take_edges(rc, handle)


def spread_groups(roots: np.ndarray, root_level: np.ndarray, n_real: int, nesting: tuple,
                  parents: tuple, by_source: tuple):
    """(group int32 per node, root of each group int32): each root in order starts a group
    unless it is grouped or has a root ancestor of its level, and the group spreads to every
    ungrouped node it reaches over nesting and extra edges (see tfp_spread_groups).
    ``nesting``: (visit order of the real nodes or None, its inverse or None, line per real
    node, skip flags or None); ``parents``: (nesting parent per node, extra edges'
    destinations sorted, their sources); ``by_source``: the extra edges again, sorted by their
    source's visit position (positions, destinations)."""
    roots = _c(roots, np.int32)
    root_level = _c(root_level, np.int8)
    n = len(root_level)
    order, pos, line, skip = nesting
    order = None if order is None else _c(order, np.int32)
    pos = None if pos is None else _c(pos, np.int32)
    line = _c(line, np.int32)
    skip = None if skip is None else _c(skip, np.uint8)
    parent, x_dst, x_src = (_c(a, np.int32) for a in parents)
    s_key, s_dst = (_c(a, np.int32) for a in by_source)
    group = np.empty(n, np.int32)
    root_of_group = np.empty(max(len(roots), 1), np.int32)
    k = check(lib().tfp_spread_groups(
        _p(roots), len(roots), _p(root_level), int(n_real), n,
        0 if order is None else _p(order), 0 if pos is None else _p(pos), _p(line),
        0 if skip is None else _p(skip), _p(parent), _p(x_dst), _p(x_src), len(x_dst),
        _p(s_key), _p(s_dst), len(s_key), _p(group), _p(root_of_group)))
    return group, root_of_group[:k]


def threadpool_regions(is_start, line, t, ctx):
    """Regions (line int32, begin, end, context int64) from rows sorted by (line, time)."""
    is_start, line = _c(is_start, np.uint8), _c(line, np.int32)
    t, ctx = _c(t, np.int64), _c(ctx, np.int64)
    m = len(line)
    r_line = np.empty(m, np.int32)
    r_begin = np.empty(m, np.int64)
    r_end = np.empty(m, np.int64)
    r_ctx = np.empty(m, np.int64)
    k = lib().tfp_threadpool_regions(m, _p(is_start), _p(line), _p(t), _p(ctx), _p(r_line),
                                     _p(r_begin), _p(r_end), _p(r_ctx))
    return r_line[:k], r_begin[:k], r_end[:k], r_ctx[:k]


def regions_from_rows(starts, ctx, stops, line, begin, has=None, with_ctx: bool = True):
    """:func:`threadpool_regions` straight from the start rows (with contexts, or None: all
    0; ``has``: a bool per start, False leaving it out) and the stop rows (both increasing),
    when row order is (line, time) order; None otherwise.  Without ``with_ctx`` the regions'
    contexts come back None."""
    starts, stops, line = _c(starts, np.int32), _c(stops, np.int32), _c(line, np.int32)
    ctx = None if ctx is None else _c(ctx, np.int64)
    begin = _c(begin, np.int64)
    has = None if has is None else _c(has, np.uint8)
    m = len(stops)
    r_line, r_begin = np.empty(m, np.int32), np.empty(m, np.int64)
    r_end = np.empty(m, np.int64)
    r_ctx = np.empty(m, np.int64) if with_ctx else None
    k = lib().tfp_regions_from_rows(_p(starts), 0 if ctx is None else _p(ctx),
                                    0 if has is None else _p(has), len(starts), _p(stops), m,
                                    _p(line), _p(begin), _p(r_line), _p(r_begin), _p(r_end),
                                    0 if r_ctx is None else _p(r_ctx))
    if k == -2:
        return None
    return r_line[:k], r_begin[:k], r_end[:k], None if r_ctx is None else r_ctx[:k]


def step_breakdown(rows, kind, group, step_of_group, events: tuple, step_begin, step_end,
                   threads: int | None = None):
    """(time per step and type int64 (n_steps, N_TYPES), types present (bool)) of the event
    ``rows`` typed ``kind``: row r belongs to step step_of_group[group[r]] and reads its
    (begin, duration) from ``events``.  The highest type code wins where events overlap."""
    rows, kind, group = _c(rows, np.int32), _c(kind, np.int8), _c(group, np.int32)
    step_of_group = _c(step_of_group, np.int32)
    begin, dur = _c(events[0], np.int64), _c(events[1], np.int64)
    step_begin, step_end = _c(step_begin, np.int64), _c(step_end, np.int64)
    n_steps = len(step_begin)
    out = np.zeros((n_steps, N_TYPES), np.int64)
    present = np.zeros((n_steps, N_TYPES), np.uint8)
    check(lib().tfp_step_breakdown(len(rows), _p(rows), _p(kind), _p(group), _p(step_of_group),
                                   len(step_of_group), _p(begin), _p(dur), n_steps,
                                   _p(step_begin), _p(step_end), _p(out), _p(present),
                                   _threads(threads)))
    return out, present.astype(bool)


_IV_MODES = {"union": 0, "intersect": 1, "subtract": 2}
_ERR_UNSORTED = -20


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


def _op_outputs(n_keys: int, n_lines: int) -> list:
    return [np.zeros(n_keys, np.int64), np.zeros(n_keys, np.int64), np.zeros(n_keys, np.int64),
            np.full(n_keys, -1, np.int32), np.zeros(n_lines, np.int64),
            np.full(n_lines, np.iinfo(np.int64).min, np.int64), np.zeros(n_lines, np.int64)]


def op_stack_walk(act, inst_line, inst_begin, inst_end, inst_key, inst_type, n_keys, n_lines):
    """Occurrences, time and self time per op key, first type per key, and per line the op
    self time and first/last activity times (INT64_MIN first: a line without ops) of
    activities sorted by (line, time, insertion order) (see tfp_op_stack_walk)."""
    act = _c(act, np.int32)
    inst_line, inst_key, inst_type = (_c(a, np.int32) for a in (inst_line, inst_key, inst_type))
    inst_begin, inst_end = _c(inst_begin, np.int64), _c(inst_end, np.int64)
    out = _op_outputs(n_keys, n_lines)
    check(lib().tfp_op_stack_walk(_p(act), len(act), _p(inst_line), _p(inst_begin),
                                  _p(inst_end), _p(inst_key), _p(inst_type),
                                  *(_p(a) for a in out)))
    return tuple(out)


def op_walk_rows(rows, line, begin, dur, inst_key, inst_type, n_keys, n_lines):
    """:func:`op_stack_walk` of instances at event ``rows`` (columns ``line``, ``begin``,
    ``dur`` of every event) without sorting their activities; None when the instances are not
    ordered by (line, begin) (then sort them and use op_stack_walk)."""
    rows, line = _c(rows, np.int32), _c(line, np.int32)
    begin, dur = _c(begin, np.int64), _c(dur, np.int64)
    inst_key, inst_type = _c(inst_key, np.int32), _c(inst_type, np.int32)
    out = _op_outputs(n_keys, n_lines)
    rc = check(lib().tfp_op_walk_rows(_p(rows), len(rows), _p(line), _p(begin), _p(dur),
                                      _p(inst_key), _p(inst_type), *(_p(a) for a in out)))
    return None if rc == 1 else tuple(out)


def host_step_rows(line, code, line_ok, group, explicit, not_compute, kind_of, flag_rows,
                   flag_bits, cap: int):
    """(work rows int32, their types int8, marker rows int32) of the events on ``line_ok``
    lines in a group (see tfp_host_step_rows); ``cap`` bounds both."""
    line, group = _c(line, np.int32), _c(group, np.int32)
    code, width = _codes(code)
    line_ok, explicit, not_compute = (_c(a, np.bool_) for a in (line_ok, explicit, not_compute))
    kind_of = _c(kind_of, np.int8)
    flag_rows, flag_bits = _c(flag_rows, np.int32), _c(flag_bits, np.uint8)
    rows, kinds = np.empty(cap, np.int32), np.empty(cap, np.int8)
    markers, counts = np.empty(cap, np.int32), np.zeros(2, np.int64)
    check(lib().tfp_host_step_rows(_p(line), _p(code), width, len(code), _p(line_ok), _p(group),
                                   _p(explicit), _p(not_compute), _p(kind_of), _p(flag_rows),
                                   _p(flag_bits), len(flag_rows), _p(rows), _p(kinds),
                                   _p(markers), _p(counts)))
    k, km = (int(x) for x in counts)
    return rows[:k], kinds[:k], markers[:km]


def inherit_from_allocations(is_alloc, address) -> np.ndarray:
    """For each deallocation, the row of the live allocation at its address (-1 if none)."""
    is_alloc, address = _c(is_alloc, np.uint8), _c(address, np.int64)
    source = np.empty(len(address), np.int64)
    if lib().tfp_inherit_from_allocations(len(address), _p(is_alloc), _p(address),
                                          _p(source)) < 0:
        raise MemoryError("out of memory while matching deallocations")
    return source


def active_at_peak(is_alloc, address, step, time, alloc_bytes, peak_time, peak_step):
    """(active flag per row, unattributed bytes) at an allocator's peak."""
    is_alloc = _c(is_alloc, np.uint8)
    address, step, time, alloc_bytes = (_c(a, np.int64) for a in (address, step, time,
                                                                  alloc_bytes))
    active = np.zeros(len(address), np.uint8)
    unmapped = lib().tfp_active_at_peak(len(address), _p(is_alloc), _p(address), _p(step),
                                        _p(time), _p(alloc_bytes), int(peak_time),
                                        int(peak_step), _p(active))
    if unmapped == np.iinfo(np.int64).min:
        raise MemoryError("out of memory at the memory peak")
    return active.astype(bool), int(unmapped)


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
