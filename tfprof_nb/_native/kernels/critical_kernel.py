"""The critical path walk of many windows of one dependency graph (critical.c)."""

from __future__ import annotations

import ctypes

import numpy as np

from .. import lib
from ..layout import ERR
from ._calls import _c, _p, check
from .order_kernel import argsort

__all__ = ["critical_walk", "walk_graph", "walk_part", "take_walks", "SEGMENT_COLUMNS",
           "inherit", "latest_per_target", "asof_by_id", "flow_edges", "wake_ups", "input_inside",
           "executor_work", "replay_visit"]

# the columns of the walk's segments, with their dtypes
SEGMENT_COLUMNS = {"window": np.int32, "start": np.int64, "end": np.int64,
                   "resource": np.int32, "category": np.int8, "kind": np.int8,
                   "node": np.int64, "waited_on": np.int64}


def critical_walk(nodes: dict, spans: tuple, codes, t0, t1) -> dict:
    """The segments of windows ``[t0[w], t1[w])`` (see critical.c), in time order within each
    window, windows in order: {column of :data:`SEGMENT_COLUMNS`: array}.  ``nodes``: the
    graph's columns begin, end, parent, resource, category, is_device, start_src, start_kind,
    end_src, end_kind; ``spans``: (resource keys ascending, first node, end node) of each
    resource's run of nodes; ``codes``: the graph's ELEMENT, HOST_WAIT, IDLE, INPUT,
    KERNEL_LAUNCH, LAUNCH, STREAM_WAIT and SYNC codes."""
    graph = walk_graph(nodes, spans, codes)
    return take_walks([walk_part(graph, t0, t1)])


class WalkGraph(tuple):
    """A graph's columns checked once for :func:`walk_part` (the kernel's arguments)."""


class Walked:
    """The segments of one :func:`walk_part`, held in C until :func:`take_walks` (or
    :meth:`free`) gives them back."""

    def __init__(self, handle: ctypes.c_void_p, count: int, windows: int):
        self.handle, self.count, self.windows = handle, int(count), int(windows)

    def free(self) -> None:
        if self.handle is not None:
            lib().tfp_cp_free(self.handle)
            self.handle = None


def walk_graph(nodes: dict, spans: tuple, codes) -> WalkGraph:
    """The graph's columns (see :func:`critical_walk`) checked and made contiguous once, for
    any number of :func:`walk_part` calls (side by side on threads: the kernel only reads
    them)."""
    cols = [_c(nodes[k], t) for k, t in (
        ("begin", np.int64), ("end", np.int64), ("parent", np.int32), ("resource", np.int32),
        ("category", np.int8), ("is_device", np.uint8), ("start_src", np.int32),
        ("start_kind", np.int8), ("end_src", np.int32), ("end_kind", np.int8))]
    n = len(cols[0])
    if any(len(c) != n for c in cols):
        raise ValueError("critical_walk takes node columns of one length")
    for c in (cols[2], cols[6], cols[8]):  # parent, start_src, end_src: nodes or -1
        if n and (c.min() < -1 or c.max() >= n):
            raise ValueError("critical_walk takes node references in [-1, nodes)")
    keys, lo, hi = _c(spans[0], np.int32), _c(spans[1], np.int64), _c(spans[2], np.int64)
    if len(lo) != len(keys) or len(hi) != len(keys) or (len(keys) and (
            lo.min() < 0 or hi.max() > n or (lo > hi).any() or (keys[1:] <= keys[:-1]).any())):
        raise ValueError("critical_walk takes ascending resource keys, one span (0 <= lo <= hi"
                         " <= nodes) each")
    codes = _c(codes, np.int64)
    if len(codes) != 8:
        raise ValueError("critical_walk takes 8 codes")
    return WalkGraph((*cols, keys, lo, hi, codes))


def walk_part(graph: WalkGraph, t0, t1) -> Walked:
    """The segments of windows ``[t0[w], t1[w])`` of ``graph`` (:func:`walk_graph`), held in
    C (the GIL released: parts of one graph's windows walk side by side on threads)."""
    t0, t1 = _c(t0, np.int64), _c(t1, np.int64)
    if len(t0) != len(t1):
        raise ValueError("critical_walk takes as many ends as starts")
    *cols, keys, lo, hi, codes = graph
    handle = ctypes.c_void_p()
    count = check(lib().tfp_cp_walk(*(_p(c) for c in cols), len(keys), _p(keys), _p(lo),
                                    _p(hi), _p(codes), len(t0), _p(t0), _p(t1),
                                    ctypes.byref(handle)))
    return Walked(handle, count, len(t0))


def take_walks(parts: list) -> dict:
    """The segments of :func:`walk_part` calls over consecutive runs of windows, in their
    order, as one set of columns (each part copied into place once; window numbers counted
    across the parts); every part is freed."""
    try:
        out = {k: np.empty(sum(p.count for p in parts), t) for k, t in SEGMENT_COLUMNS.items()}
        at = first_window = 0
        for part in parts:
            if part.count:
                cols = [out[k][at:] for k in ("window", "start", "end", "resource", "category",
                                              "kind", "node", "waited_on")]
                lib().tfp_cp_take(part.handle, *(_p(c) for c in cols))
                if first_window:
                    out["window"][at:at + part.count] += first_window
            at, first_window = at + part.count, first_window + part.windows
        return out
    finally:
        for part in parts:
            part.free()


def _nodes(a, n: int, what: str) -> np.ndarray:
    a = _c(a, np.int64)
    if len(a) and (a.min() < 0 or a.max() >= n):
        raise ValueError(f"{what} takes nodes in [0, {n})")
    return a


def inherit(parent, seed, max_depth: int = -1) -> np.ndarray:
    """int32 per node: the nearest of itself and its ancestors (``parent``, -1 at the top)
    that is a ``seed`` (bool per node), at most ``max_depth`` levels up (< 0: any); -1: none
    (depgraph.c)."""
    parent, seed = _c(parent, np.int32), _c(seed, np.uint8)
    if len(seed) != len(parent) or max_depth > 65534 or len(parent) >= 2**31:
        raise ValueError("inherit takes one seed flag per node (under 2**31) and max_depth "
                         "<= 65534")
    owner = np.empty(len(parent), np.int32)
    check(lib().tfp_cp_inherit(_p(parent), _p(seed), len(parent), int(max_depth), _p(owner)))
    return owner


def latest_per_target(src, dst, end) -> np.ndarray:
    """Indices of the pairs (``src[k]`` -> ``dst[k]``, nodes) that keep, for each distinct
    target, the source ending latest (``end``: per node; the last pair on ties), by target
    ascending: ``np.lexsort((end[src], dst))``'s last of each target, without the sort."""
    end = _c(end, np.int64)
    n = len(end)
    src, dst = _nodes(src, n, "latest_per_target"), _nodes(dst, n, "latest_per_target")
    if len(src) != len(dst):
        raise ValueError("latest_per_target takes as many sources as targets")
    if len(dst) * 16 < n:  # (a few pairs: a sort of them, not a pass over every node)
        order = np.lexsort((end[src], dst))
        last = np.ones(len(order), bool)
        last[:-1] = dst[order][1:] != dst[order][:-1]
        return order[last].astype(np.int64)
    out = np.empty(len(dst), np.int64)
    count = check(lib().tfp_cp_latest(_p(src), _p(dst), len(dst), _p(end), n, _p(out)))
    return out[:count]


def asof_by_id(r_id, r_t, q_id, q_t) -> np.ndarray:
    """int64 per query: the last right entry (``r_id``/``r_t`` sorted by (id, t)) of the
    query's id at or before its time (-1: none): a backward ``merge_asof(by=id)``."""
    r_id, r_t, q_id, q_t = (_c(a, np.int64) for a in (r_id, r_t, q_id, q_t))
    if len(r_id) != len(r_t) or len(q_id) != len(q_t):
        raise ValueError("asof_by_id takes one time per id")
    q_order = argsort(q_id, q_t)
    out = np.empty(len(q_id), np.int64)
    if lib().tfp_cp_asof(_p(r_id), _p(r_t), len(r_id), _p(q_id), _p(q_t), len(q_id),
                         _p(q_order), _p(out)) < 0:
        raise ValueError("asof_by_id takes the right side sorted by (id, t)")
    return out


def _out(a: np.ndarray, dtype) -> np.ndarray:
    """An array a kernel writes into: contiguous and of its dtype already (never a copy)."""
    if a.dtype != dtype or not a.flags.c_contiguous or not a.flags.writeable:
        raise ValueError(f"a kernel writes a contiguous {np.dtype(dtype)} array, not {a.dtype}")
    return a


def flow_edges(src, dst, is_element, g, codes: tuple) -> None:
    """Sets graph ``g``'s flow edges in place (depgraph.c's tfp_cp_flows; graph.py's
    ``_add_flows``): each consumer's latest-ending producer; ``codes``: (ELEMENT, CONTEXT,
    INPUT)."""
    n = len(g.begin)
    src, dst = _c(src, np.int64), _c(dst, np.int64)
    for a in (src, dst):
        if len(a) and (a.min() < -1 or a.max() >= n):
            raise ValueError(f"flow_edges takes nodes in [-1, {n})")
    is_element = _c(is_element, np.uint8)
    if len(dst) != len(src) or len(is_element) != len(src):
        raise ValueError("flow_edges takes one producer, consumer and kind a pair")
    begin, end, dev = _c(g.begin, np.int64), _c(g.end, np.int64), _c(g.is_device, np.uint8)
    codes = _c(codes, np.int64)
    outs = [_out(g.start_src, np.int32), _out(g.start_kind, np.int8),
            _out(g.end_src, np.int32), _out(g.end_kind, np.int8), _out(g.category, np.int8)]
    if len(end) != n or len(dev) != n or any(len(o) != n for o in outs) or len(codes) != 3:
        raise ValueError("flow_edges takes a graph's columns, one entry a node, and 3 codes")
    check(lib().tfp_cp_flows(_p(src), _p(dst), _p(is_element), len(src), _p(begin), _p(end),
                             _p(dev), n, _p(codes), *(_p(o) for o in outs)))


def wake_ups(g) -> None:
    """Sets graph ``g``'s wake-up start edges in place (depgraph.c's tfp_cp_wake_ups; graph.py's
    ``_add_wake_ups``); its nodes in node order."""
    n = len(g.begin)
    cols = [_c(g.parent, np.int32), _c(g.is_device, np.uint8), _c(g.begin, np.int64),
            _c(g.end, np.int64), _c(g.resource, np.int32)]
    start_src, start_kind = _out(g.start_src, np.int32), _out(g.start_kind, np.int8)
    if any(len(c) != n for c in (*cols, start_src, start_kind)):
        raise ValueError("wake_ups takes a graph's columns, one entry a node")
    if n and (start_src.min() < -1 or start_src.max() >= n):
        raise ValueError("wake_ups takes start sources in [-1, nodes)")
    lib().tfp_cp_wake_ups(n, *(_p(c) for c in cols), _p(start_src), _p(start_kind))


def input_inside(parent, is_device, category, codes: tuple) -> None:
    """Host nodes of category ``codes[1]`` (compute) with a host ancestor of category
    ``codes[0]`` (input) become input, in place (depgraph.c's tfp_cp_input_inside: any
    depth, parents before or after their children, a cycle ends a chain)."""
    parent, dev = _c(parent, np.int32), _c(is_device, np.uint8)
    category = _out(category, np.int8)
    if len(dev) != len(parent) or len(category) != len(parent) or len(parent) >= 2**31:
        raise ValueError("input_inside takes one parent, device flag and category a node")
    check(lib().tfp_cp_input_inside(_p(parent), _p(dev), len(parent), int(codes[0]),
                                    int(codes[1]), _p(category)))


def executor_work(parent, end, seeds: tuple, max_depth: int, data: tuple, queries: tuple):
    """int64 per query (``queries``: (rank, t), -1 rank: none): the node ending latest (the
    last node on ties) at or before ``t`` among the work of the query's rank: the nodes whose
    nearest executor ancestor-or-self (``seeds``: (nodes, the rank of each), at most
    ``max_depth`` levels up) has that rank; work of a rank with ``data[0][rank]`` (bool per
    rank) gets category ``data[1]`` in ``data[2]`` (in place; depgraph.c's tfp_cp_exec_work)."""
    parent, end = _c(parent, np.int32), _c(end, np.int64)
    nodes, ranks = _c(seeds[0], np.int64), _c(seeds[1], np.int32)
    is_data, category = _c(data[0], np.uint8), _out(data[2], np.int8)
    q_rank, q_t = _c(queries[0], np.int32), _c(queries[1], np.int64)
    n = len(parent)
    if len(end) != n or len(category) != n or len(nodes) != len(ranks) or \
            len(q_rank) != len(q_t) or not 0 <= max_depth <= 65534:
        raise ValueError("executor_work takes node columns of one length, a rank a seed, a "
                         "time a query and 0 <= max_depth <= 65534")
    order = argsort(q_rank, q_t)  # (the kernel reads the queries in this order)
    out = np.empty(len(q_rank), np.int64)
    rc = lib().tfp_cp_exec_work(n, _p(parent), _p(end), _p(nodes), _p(ranks), len(nodes),
                                len(is_data), int(max_depth), _p(is_data), int(data[1]),
                                _p(category), _p(q_rank), _p(q_t), _p(order), len(q_rank),
                                _p(out))
    if rc == ERR.UNSORTED:
        raise ValueError("executor_work takes seeds ascending with ranks in [0, ranks) and "
                         "query ranks in [-1, ranks)")
    check(rc)
    return out


def replay_visit(times, src, dst, gap) -> tuple[np.ndarray, int]:
    """(each point's replayed time, the points left as measured): point ``p`` is the largest
    ``replayed[src[k]] + gap[k]`` over the constraints ``k`` into it once all their sources
    are known, ``times[p]`` when it has none; points on a cycle or after one, or whose value
    is not finite, keep ``times[p]`` and are counted (replay.c's tfp_cp_replay_visit; Kahn's
    algorithm, so the order points are visited in changes nothing)."""
    times = _c(times, np.float64)
    src, dst, gap = _c(src, np.int64), _c(dst, np.int64), _c(gap, np.float64)
    n, m = len(times), len(src)
    if len(dst) != m or len(gap) != m:
        raise ValueError("replay_visit takes one source, target and gap a constraint")
    if m and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError("replay_visit takes constraints between points in [0, points)")
    out = np.empty(n, np.float64)
    left = check(lib().tfp_cp_replay_visit(_p(times), n, _p(src), _p(dst), _p(gap), m, _p(out)))
    return out, left
