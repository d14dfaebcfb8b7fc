"""Stat lookups: integer stats of events, stats at rows, name counts."""

from __future__ import annotations

import numpy as np

from .. import lib
from ._calls import _c, _p, check
from .order_kernel import _codes

__all__ = ["int_stat", "int_stats", "stats_at", "stat_name_counts", "line_name_rows"]


def _stat_columns(owner_kind, kind, raw, owner) -> tuple:
    """A stat table's owner kind, kind, raw value and owner columns as the kernels read them
    (int8, int8, int64, int32, contiguous), copied only when they are not."""
    return (_c(owner_kind, np.int8), _c(kind, np.int8), _c(raw, np.int64),
            _c(owner, np.int32))


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
