"""Event nesting: parents, depths, groups spread from their roots, regions."""

from __future__ import annotations

import numpy as np

from .. import lib
from ._calls import _c, _p, _threads, check
from .codes_kernel import values_at, code_rows
from .order_kernel import nesting_order, _codes

__all__ = ["nest_strict", "nest_query", "nest_loose", "csr", "spread_groups", "threadpool_regions",
           "regions_from_rows"]


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


def csr(src: np.ndarray, dst: np.ndarray, n: int):
    """Adjacency lists (offsets int32 of n + 1, targets int32) of edges src -> dst."""
    src, dst = _c(src, np.int32), _c(dst, np.int32)
    off = np.empty(n + 1, np.int32)
    tgt = np.empty(len(src), np.int32)
    if lib().tfp_csr(_p(src), _p(dst), len(src), n, _p(off), _p(tgt)) < 0:
        raise MemoryError("out of memory while building adjacency lists")
    return off, tgt


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
