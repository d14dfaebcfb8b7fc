"""numpy-facing wrappers of the native kernels: arrays in, arrays out, dtypes checked.

Row numbers are int32 (a host holds fewer than 2**31 events), times int64 picoseconds.
"""

from __future__ import annotations

import numpy as np

from . import lib
from .layout import N_STEP_TYPES

__all__ = ["argsort", "select_rows", "nesting_order", "nest_strict", "nest_loose", "csr",
           "tl_rows", "tree_csr", "join_on_keys", "assign_groups", "is_sorted_by", "int_stat", "int_stats",
           "sparse_lookup", "sparse_intersect", "threadpool_regions", "step_breakdown",
           "nonzero", "span", "op_stack_walk", "inherit_from_allocations", "active_at_peak",
           "N_TYPES"]

N_TYPES = N_STEP_TYPES  # step-time event types (see analysis.steps)


def _c(a: np.ndarray, dtype) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def _p(a: np.ndarray) -> int:
    return a.ctypes.data


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
        if rc < 0:
            raise MemoryError("out of memory while sorting")
    return order


def is_sorted_by(line: np.ndarray, t: np.ndarray) -> bool:
    """Whether rows are ordered by (line, t) already."""
    line, t = _c(line, np.int32), _c(t, np.int64)
    return bool(lib().tfp_is_sorted_by(_p(line), _p(t), len(line)))


def int_stat(name_code, owner_kind, kind, raw, owner, code: int):
    """(event rows int32, values int64) of the integer stat ``code`` of events: doubles
    truncated, the last value of an event that carries the stat twice."""
    name_code, width = _codes(name_code)
    args = (_p(name_code), width, _p(owner_kind), _p(kind), _p(raw), _p(owner), len(name_code),
            int(code))
    k = lib().tfp_int_stat(*args, 0, 0, 0)  # count, then fill arrays of the exact size
    rows, values = np.empty(k, np.int32), np.empty(k, np.int64)
    if lib().tfp_int_stat(*args, _p(rows), _p(values), k) != k:
        raise RuntimeError("the stat table changed between two passes")
    return rows, values


def int_stats(name_code, owner_kind, kind, raw, owner, codes: list[int]) -> list[tuple]:
    """:func:`int_stat` of several stat codes in two passes over the stat table (count, then
    fill): one (rows, values) pair per code."""
    name_code, width = _codes(name_code)
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
        lib().tfp_int_stats(_p(name_code), width, _p(owner_kind), _p(kind), _p(raw), _p(owner),
                            len(name_code), _p(slot_of_code), n_codes, _p(rows_addr),
                            _p(values_addr), _p(caps), _p(counts), _p(last), k)

    empty_rows = [np.empty(1, np.int32) for _ in codes]
    scan(empty_rows, [np.empty(1, np.int64) for _ in codes], [0] * k)
    rows = [np.empty(int(c), np.int32) for c in counts]
    values = [np.empty(int(c), np.int64) for c in counts]
    scan(rows, values, counts.copy())
    return list(zip(rows, values))


def sparse_lookup(rows: np.ndarray, values: np.ndarray, query: np.ndarray):
    """(values int64, hit bool) of a sparse column (rows increasing) at ``query`` rows."""
    rows, values, query = _c(rows, np.int32), _c(values, np.int64), _c(query, np.int32)
    out = np.empty(len(query), np.int64)
    hit = np.empty(len(query), np.uint8)
    lib().tfp_sparse_lookup(_p(rows), _p(values), len(rows), _p(query), len(query), _p(out),
                            _p(hit))
    return out, hit.view(bool)


def sparse_intersect(rows_a, values_a, rows_b, values_b):
    """(rows int32, values of a, values of b) of the rows in both sparse columns."""
    ra, va = _c(rows_a, np.int32), _c(values_a, np.int64)
    rb, vb = _c(rows_b, np.int32), _c(values_b, np.int64)
    k = min(len(ra), len(rb))
    rows, out_a, out_b = np.empty(k, np.int32), np.empty(k, np.int64), np.empty(k, np.int64)
    k = lib().tfp_sparse_intersect(_p(ra), _p(va), len(ra), _p(rb), _p(vb), len(rb),
                                   _p(rows), _p(out_a), _p(out_b))
    return rows[:k], out_a[:k], out_b[:k]


def _codes(code: np.ndarray) -> tuple[np.ndarray, int]:
    """A code column as stored (uint16 or int32) and its width in bytes."""
    if code.dtype == np.uint16:
        return _c(code, np.uint16), 2
    return _c(code, np.int32), 4


def select_rows(code: np.ndarray, value: int, kind: np.ndarray | None = None,
                kind_value: int = 0) -> np.ndarray:
    """int32 rows r where code[r] == value (and kind[r] == kind_value), increasing; codes are
    uint16 or int32."""
    code, width = _codes(code)
    kind_arr = None if kind is None else _c(kind, np.int8)
    args = (_p(code), width, 0 if kind_arr is None else _p(kind_arr), len(code), int(value),
            int(kind_value))
    k = lib().tfp_select_rows(*args, 0, 0)  # count, then fill an array of the exact size
    out = np.empty(k, np.int32)
    lib().tfp_select_rows(*args, _p(out), k)
    return out


def nesting_order(line: np.ndarray, begin: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """int32 rows ordered by (line, begin, longest first); ties keep row order."""
    line, begin, dur = _c(line, np.int32), _c(begin, np.int64), _c(dur, np.int64)
    n = len(line)
    if lib().tfp_is_nesting_order(_p(line), _p(begin), _p(dur), n):
        return np.arange(n, dtype=np.int32)
    return argsort(line, begin, -dur)


def merge_orders(a: np.ndarray, b: np.ndarray, n_first: int, first: tuple, second: tuple):
    """Merge two nesting orders of node rows (rows < n_first index the ``first`` (line,
    begin, dur) arrays, the others ``second`` at row - n_first); ``a`` wins ties."""
    a, b = _c(a, np.int32), _c(b, np.int32)
    l1, b1, d1 = _c(first[0], np.int32), _c(first[1], np.int64), _c(first[2], np.int64)
    l2, b2, d2 = _c(second[0], np.int32), _c(second[1], np.int64), _c(second[2], np.int64)
    out = np.empty(len(a) + len(b), np.int32)
    lib().tfp_merge_nesting_order(_p(a), len(a), _p(b), len(b), n_first, _p(l1), _p(b1),
                                  _p(d1), _p(l2), _p(b2), _p(d2), _p(out))
    return out


def nest_strict(order: np.ndarray, n_first: int, first: tuple, second: tuple,
                skip: np.ndarray | None = None) -> np.ndarray:
    """int32 parent of each node: the innermost earlier node on its line that fully contains
    it (-1: none); ``skip`` nodes get no parent and are never parents."""
    order = _c(order, np.int32)
    m = len(order)
    l1, b1, d1 = _c(first[0], np.int32), _c(first[1], np.int64), _c(first[2], np.int64)
    l2, b2, d2 = _c(second[0], np.int32), _c(second[1], np.int64), _c(second[2], np.int64)
    skip_arr = None if skip is None else _c(skip, np.uint8)
    parent = np.empty(m, np.int32)
    stack = np.empty(m + 1, np.int32)
    lib().tfp_nest_strict(_p(order), m, n_first, _p(l1), _p(b1), _p(d1), _p(l2), _p(b2),
                          _p(d2), 0 if skip_arr is None else _p(skip_arr), _p(parent),
                          _p(stack))
    return parent


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


def tree_csr(parent: np.ndarray, src: np.ndarray, dst: np.ndarray):
    """Adjacency lists (offsets, targets; int32) of the tree edges parent[i] -> i followed by
    the edges src -> dst."""
    parent, src, dst = _c(parent, np.int32), _c(src, np.int32), _c(dst, np.int32)
    m = len(parent)
    n_edges = int(np.count_nonzero(parent >= 0)) + len(src)
    off = np.empty(m + 1, np.int32)
    tgt = np.empty(n_edges, np.int32)
    if lib().tfp_tree_csr(_p(parent), m, _p(src), _p(dst), len(src), _p(off), _p(tgt)) < 0:
        raise MemoryError("too many edges for 32-bit adjacency lists")
    return off, tgt


def join_on_keys(a_rows, a_keys: tuple, b_rows, b_keys: tuple, limit: int = 0):
    """Pairs (a row, b row) whose two keys are equal; keys where both sides have ``limit`` or
    more rows are skipped (0: no limit).  A hash join over hash partitions, so the pairs come
    partition by partition."""
    ar, br = _c(a_rows, np.int32), _c(b_rows, np.int32)
    a0, a1 = _c(a_keys[0], np.int64), _c(a_keys[1], np.int64)
    b0, b1 = _c(b_keys[0], np.int64), _c(b_keys[1], np.int64)
    cap = max(len(ar), len(br))
    while True:
        out_a, out_b = np.empty(cap, np.int32), np.empty(cap, np.int32)
        k = lib().tfp_hash_join(_p(ar), _p(a0), _p(a1), len(ar), _p(br), _p(b0), _p(b1),
                                len(br), limit, _p(out_a), _p(out_b), cap)
        if k < 0:
            raise MemoryError("out of memory while joining events on keys")
        if k <= cap:
            return out_a[:k], out_b[:k]
        cap = k


def assign_groups(roots: np.ndarray, root_level: np.ndarray, children: tuple,
                  parents: tuple):
    """(group int32 per node, root of each group int32) by breadth-first spreading from
    ``roots`` in order (see tfp_assign_groups); ``children``: CSR lists; ``parents``: (nesting
    parent per node, extra edges' destinations sorted, their sources)."""
    roots = _c(roots, np.int32)
    root_level = _c(root_level, np.int8)
    n = len(root_level)
    group = np.empty(n, np.int32)
    root_of_group = np.empty(max(len(roots), 1), np.int32)
    ch_off, ch_tgt = _c(children[0], np.int32), _c(children[1], np.int32)
    parent, x_dst, x_src = (_c(a, np.int32) for a in parents)
    k = lib().tfp_assign_groups(_p(roots), len(roots), _p(root_level), n, _p(ch_off),
                                _p(ch_tgt), _p(parent), _p(x_dst), _p(x_src), len(x_dst),
                                _p(group), _p(root_of_group))
    if k < 0:
        raise MemoryError("out of memory while grouping events")
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


def step_breakdown(rows, kind, group, step_of_group, first: tuple, second: tuple,
                   step_begin, step_end):
    """(time per step and type int64 (n_steps, N_TYPES), types present (bool)) of the graph
    nodes ``rows`` typed ``kind``: node r belongs to step step_of_group[group[r]]; nodes below
    len(first[0]) read (begin, duration) from ``first``, the others from ``second``.  The
    highest type code wins where events overlap."""
    rows, kind, group = _c(rows, np.int32), _c(kind, np.int8), _c(group, np.int32)
    step_of_group = _c(step_of_group, np.int32)
    b1, d1 = _c(first[0], np.int64), _c(first[1], np.int64)
    b2, d2 = _c(second[0], np.int64), _c(second[1], np.int64)
    step_begin, step_end = _c(step_begin, np.int64), _c(step_end, np.int64)
    n_steps = len(step_begin)
    out = np.zeros((n_steps, N_TYPES), np.int64)
    present = np.zeros((n_steps, N_TYPES), np.uint8)
    if lib().tfp_step_breakdown(len(rows), _p(rows), _p(kind), _p(group), _p(step_of_group),
                                len(step_of_group), len(b1), _p(b1), _p(d1), _p(b2), _p(d2),
                                n_steps, _p(step_begin), _p(step_end), _p(out),
                                _p(present)) < 0:
        raise MemoryError("out of memory in the step-time breakdown")
    return out, present.astype(bool)


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


def op_stack_walk(act, inst_line, inst_begin, inst_end, inst_key, inst_type, n_keys, n_lines):
    """Occurrences, time and self time per op key, first type per key, and per line the op
    self time and first/last activity times (see tfp_op_stack_walk)."""
    act = _c(act, np.int32)
    inst_line, inst_key, inst_type = (_c(a, np.int32) for a in (inst_line, inst_key, inst_type))
    inst_begin, inst_end = _c(inst_begin, np.int64), _c(inst_end, np.int64)
    occ = np.zeros(n_keys, np.int64)
    time_ps = np.zeros(n_keys, np.int64)
    self_ps = np.zeros(n_keys, np.int64)
    first_type = np.full(n_keys, -1, np.int32)
    line_op = np.zeros(n_lines, np.int64)
    line_first = np.zeros(n_lines, np.int64)
    line_last = np.zeros(n_lines, np.int64)
    if lib().tfp_op_stack_walk(_p(act), len(act), _p(inst_line), _p(inst_begin), _p(inst_end),
                               _p(inst_key), _p(inst_type), _p(occ), _p(time_ps), _p(self_ps),
                               _p(first_type), _p(line_op), _p(line_first),
                               _p(line_last)) < 0:
        raise MemoryError("out of memory in the op stack walk")
    return occ, time_ps, self_ps, first_type, line_op, line_first, line_last


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
