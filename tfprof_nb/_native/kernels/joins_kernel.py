"""Joins by keys and ids (launches to kernels, producers to consumers)."""

from __future__ import annotations

import ctypes

import numpy as np

from .. import lib
from ._calls import _c, _p, _threads, check
from .order_kernel import _codes
from .stats_kernel import _stat_columns

__all__ = ["keys_in", "join_on_keys", "join_on_ids", "join_one_on_ids", "context_links"]


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


def _take_edges(rc: int, handle) -> tuple[np.ndarray, np.ndarray]:
    check(rc)  # (a failed join has freed its handle)
    try:
        src, dst = np.empty(rc, np.int32), np.empty(rc, np.int32)
    except BaseException:  # (MemoryError, KeyboardInterrupt: the handle is freed all the same)
        lib().tfp_join_free(handle)
        raise
    lib().tfp_join_take(handle, _p(src), _p(dst))
    return src, dst


_JOIN_ONE = {"first": -1, "last": -2}  # links.c's JOIN_FIRST, JOIN_LAST


def join_on_keys(a_rows, a_keys: tuple, b_rows, b_keys: tuple, limit: int = 0,
                 threads: int | None = None, keep: str | None = None):
    """Pairs (a row, b row) whose two keys are equal, for every b entry in b's order and,
    within one, a's entries in a's order (a radix-partitioned hash join); keys where both
    sides have ``limit`` or more rows are skipped (0: no limit; at most limit - 1 pairs per
    row of a key's larger side).  ``keep`` ("first", "last") pairs each b entry with one a
    entry of its keys instead, the smallest or the largest a row (``limit`` unused; see
    :func:`join_one_on_ids`)."""
    if keep is not None:
        if keep not in _JOIN_ONE:
            raise ValueError("keep must be 'first' or 'last'")
        limit = _JOIN_ONE[keep]
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
