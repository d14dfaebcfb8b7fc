"""Event grouping: which step (group) every event belongs to.

Raw ``.xplane.pb`` files carry no ``group_id``; the reference converters derive it.  This does
the same over one host's events in compiled kernels: events form a forest through (1) nesting
by time on each thread, (2) producer/consumer links (``_pt``/``_p`` -> ``_ct``/``_c``),
(3) ``ExecutorState::Process`` -> ``IteratorGetNext*::DoCompute``
with equal ``id``/``iter_num`` and (4) kernel launch -> kernel execution by ``correlation_id``.
Events with an ``_r`` stat are roots, and so are, as in the reference, tf.keras's step markers
before TF 2.4 (``TraceContext``) and the batching runtimes' events (``_NAMED_ROOTS``); each
root, by level then time, starts a group unless an ancestor is a root of its level, and the
group spreads to every ungrouped event it reaches (the reference spreads breadth-first over
child lists; the kernel scans nesting subtrees, contiguous in visit order, and follows the
other edges from a copy sorted by source, which gives the same groups without the lists).

Thread-pool regions (``ThreadpoolListener::Region``, from each StopRegion back to the last
StartRegion on its thread) are synthetic nodes numbered after the real events.  The reference
adds them to the thread too, and there they stay ungrouped: nothing links a region to the
caller's ``Record`` event, so a region and the work nested in it (a pool thread's
``ExecutorState::Process``, tf.data's map functions) join a step only through links of their
own.  Regions here are nesting nodes alone, as there (checked event by event against the
group ids of the reference's trace viewer on real captures).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._interrupt import helper_thread, in_this_run
from ..._native import release_free_memory
from ..._native.kernels import (argsort, context_links, is_sorted_by, join_on_keys,
                               join_one_on_ids, keys_in, nest_strict, nesting_order,
                               regions_from_rows, sort_pairs, spread_groups, take_rows,
                               threadpool_regions)
from ...constants import CORRELATION_ID_KEEP
from ..runtime.hostdata.host import HOST_PLANE, HostData, SparseStat

__all__ = ["Grouping", "GroupingGraph", "group_events", "grouping_graph", "producer_consumer_links",
           "IMPLICIT_ROOTS", "HOST_PLANE"]

IMPLICIT_ROOTS = frozenset({"FunctionRun", "SessionRun", "RunGraph", "ExecutorState::Process"})
_ITERATOR_GET_NEXT = ("IteratorGetNextOp::DoCompute", "IteratorGetNextAsOptionalOp::DoCompute")
_MAX_CONTEXT_FANOUT = 64
# the context links join every producer and consumer in one pass while their entries (16
# bytes each) take at most this share of the file's size (else as context_links decides: two
# passes of half the entries each past a few million; each pass scans the stat table again,
# 0.1-0.4 s on a 60 M-stat host).  The links are built at the grouping's first peak of memory,
# with a step beside it: a fifth keeps a 1 GB host's peak well under 2.5x its file (a third
# left it at 2.4-2.5x).
_ONE_PASS_SHARE_OF_FILE = 1 / 5
_LINK_ENTRY_BYTES = 16
# Roots besides the events with an ``_r`` stat, as the reference takes them: tf.keras's step
# marker before TF 2.4 (``TraceContext`` with ``graph_type`` and ``step_num``: level 1 unless
# it has an ``_r``), and the batching runtimes' events (these levels replace any ``_r``).
LEGACY_ROOT = "TraceContext"
_NAMED_ROOTS = {"BatchingSessionRun": 1, "ProcessBatch": 2, "OrbaxServing::ProcessBatch": 2}


@dataclass
class Regions:
    """Synthetic thread-pool region nodes (rows n.. of the grouping graph)."""

    line: np.ndarray  # int32 line key
    begin: np.ndarray  # int64 ps
    duration: np.ndarray  # int64 ps

    def __len__(self) -> int:
        return len(self.line)


@dataclass
class Grouping:
    """Per-node group ids (-1: ungrouped) over the real events then the regions, per-node
    nesting parent on the same line, and per-group root, name and step number."""

    group: np.ndarray  # int32, len(hd) + n_regions
    parent: np.ndarray  # int32, same length
    groups: pd.DataFrame  # index group id: root (node), name, step_num, implicit
    n_regions: int


_GRAPH_STATS = ("_a", "correlation_id")
_KEPT_STATS = ("iter_num", "_r", "step_num")


def threadpool_regions_of(hd: HostData, at: dict | None = None) -> Regions:
    """Regions from each StopRegion back to the last StartRegion (with ``_c``) on its line
    (``at``: the queries of :func:`_graph_queries`, when made already)."""
    at = _graph_queries(hd, None) if at is None else at
    empty = Regions(np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    starts, stops = at["rows"]["starts"], at["rows"]["stops"]
    if not len(starts) or not len(stops):
        return empty
    has_c = at["c"]
    if not has_c.any():
        return empty
    found = regions_from_rows(starts, None, stops, hd.line, hd.begin, has=has_c,
                              with_ctx=False)
    if found is not None:  # rows in (line, time) order already, as files usually are
        r_line, r_begin, r_end, _ = found
        r_end -= r_begin  # (durations, in place)
        return Regions(r_line, r_begin, r_end)
    starts = starts[has_c]
    rows = np.concatenate([starts, stops])
    order = np.argsort(rows, kind="stable")  # file order breaks ties in time
    rows = rows[order]
    is_start = order < len(starts)
    ctx = np.zeros(len(rows), np.int64)  # (the regions' contexts are not used)
    del order
    line, t = hd.line[rows], hd.begin[rows]
    if not is_sorted_by(line, t):
        order = argsort(line, t)
        rows, line, t, is_start, ctx = (a[order] for a in (rows, line, t, is_start, ctx))
    r_line, r_begin, r_end, _ = threadpool_regions(is_start, line, t, ctx)
    return Regions(r_line, r_begin, r_end - r_begin)


def _graph_queries(hd: HostData, r) -> dict:
    """The event rows the graph needs by name, and the stats it reads at them: whether each
    StartRegion carries ``_c`` (``c``: a bool per start), ``id`` and ``iter_num`` at
    executors and IteratorGetNext, ``id`` at tf.data captured functions and at the roots
    ``r`` (the ``_r`` stat; None: no roots)."""
    rows = hd.name_rows_many({
        "starts": lambda s: (s == "ThreadpoolListener::StartRegion").to_numpy(),
        "stops": lambda s: (s == "ThreadpoolListener::StopRegion").to_numpy(),
        "executor": lambda s: (s == "ExecutorState::Process").to_numpy(),
        "getnext": lambda s: s.isin(_ITERATOR_GET_NEXT).to_numpy(),
        "tf_data": lambda s: s.str.startswith("InstantiatedCapturedFunction::").to_numpy(),
        "legacy": lambda s: (s == LEGACY_ROOT).to_numpy(),
        **{name: (lambda s, name=name: (s == name).to_numpy()) for name in _NAMED_ROOTS}})
    legacy, named = rows.pop("legacy"), [(rows.pop(k), v) for k, v in _NAMED_ROOTS.items()]
    roots = None if r is None else _root_events(r, legacy, named)
    rows["roots"] = np.empty(0, np.int32) if roots is None else roots.rows
    queries = {"c": ("_c", rows["starts"] if len(rows["stops"]) else rows["stops"])}
    if len(rows["executor"]) and len(rows["getnext"]):
        queries.update(e_id=("id", rows["executor"]), e_it=("iter_num", rows["executor"]),
                       g_id=("id", rows["getnext"]), g_it=("iter_num", rows["getnext"]))
    if len(rows["tf_data"]) and len(rows["roots"]):
        queries.update(tf=("id", rows["tf_data"]), root=("id", rows["roots"]))
    found = hd.stats_at(queries)
    found["c"] = found["c"][1]  # (only whether a start has a context: its value goes now)
    return {"rows": rows, "roots": roots, **found}


def _root_events(r: SparseStat, legacy: np.ndarray, named: list) -> SparseStat:
    """The root events and their levels (as a stat): the events with an ``_r`` stat (``r``),
    ``legacy`` rows without one at level 1, and each (rows, level) of ``named`` at its level,
    whatever their ``_r``."""
    if not len(legacy) and not any(len(rows) for rows, _ in named):
        return r
    legacy = legacy[~np.isin(legacy, r.rows)]
    parts = [(r.rows, r.values.astype(np.int64)), (legacy, np.ones(len(legacy), np.int64))]
    parts += [(rows, np.full(len(rows), level, np.int64)) for rows, level in named]
    rows = np.concatenate([p[0] for p in parts]).astype(np.int32)
    levels = np.concatenate([p[1] for p in parts])
    order = np.argsort(rows, kind="stable")  # a named level comes after the row's _r
    rows, levels = rows[order], levels[order]
    last = np.append(rows[1:] != rows[:-1], True)
    return SparseStat(rows[last], levels[last])


def _nesting(hd: HostData, regions: Regions, a, order: np.ndarray | None) -> tuple:
    """Strict nesting parent over the real events (visited in ``order``, None: row order;
    see HostData.nesting_order) and the regions (async events, ``a`` set, skipped), with the
    skip flags the group spread needs to scan nesting subtrees (None: no async event)."""
    n = len(hd)
    real = (hd.line, hd.begin, hd.duration)
    extra = (regions.line, regions.begin, regions.duration)
    extra_order = nesting_order(*extra) + np.int32(n) if len(regions) else None
    async_rows = a.rows[a.values != 0]
    skip = None  # (a flag per node only when some event is async)
    if len(async_rows):
        skip = np.zeros(n + len(regions), np.uint8)
        skip[async_rows] = 1
    return nest_strict(order, n, real, extra, skip, extra_order), skip


def producer_consumer_links(hd: HostData):
    """Producer -> consumer edges by (type, id), read from the stat table, sorted by
    destination (read-only arrays).  Joined once per host while kept: the steps' grouping and
    the flow links start side by side and both need them (the second waits for the first)."""
    return hd.shared("context_links", lambda: _read_only(_context_links(hd)))


def _read_only(arrays: tuple) -> tuple:
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _context_links(hd: HostData):
    st = hd.space.stats
    codes = [st.names.index(k) if k in st.names else -1 for k in ("_pt", "_p", "_ct", "_c")]
    counts = st.counts_by_name()
    cap_p, cap_c = (min(int(counts[a]) if a >= 0 else 0, int(counts[b]) if b >= 0 else 0)
                    for a, b in (codes[:2], codes[2:]))
    if not cap_p or not cap_c:
        return np.empty(0, np.int32), np.empty(0, np.int32)
    extra = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    one_pass = (cap_p + cap_c) * _LINK_ENTRY_BYTES <= hd.space.n_bytes * _ONE_PASS_SHARE_OF_FILE
    return context_links(st.name_code, st.owner_kind, st.kind, st.raw_value, st.owner, codes,
                         (cap_p, cap_c), extra, limit=_MAX_CONTEXT_FANOUT,
                         passes=1 if one_pass else None)


def _other_edges(hd: HostData, corr, at: dict) -> list:
    """Edge blocks (src, dst) besides the context links, each sorted by destination: the last
    ExecutorState::Process of an (id, iter_num) -> the IteratorGetNext of that key, and
    kernel launches on the host -> kernels on a device by correlation id (``corr``); ``at``:
    see :func:`_graph_queries`."""
    blocks = []
    executor, getnext = at["rows"]["executor"], at["rows"]["getnext"]
    if "e_id" in at:
        (e_id, e_has), (e_it, e_it_has) = at["e_id"], at["e_it"]
        keep = at["g_id"][1] & at["g_it"][1]
        g_rows, g_id, g_it = getnext[keep], at["g_id"][0][keep], at["g_it"][0][keep]
        if len(g_rows) and (e_has & e_it_has).any():
            # only executors whose key an IteratorGetNext has can link (the executors are
            # millions: their key columns are picked once, at the few that do), the last of
            # each key: its largest row (the rows increase)
            hit = e_has & e_it_has & keys_in((e_id, e_it), (g_id, g_it))
            blocks.append(join_on_keys(executor[hit], (e_id[hit], e_it[hit]), g_rows,
                                       (g_id, g_it), keep="last"))
    if len(corr):
        host_lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy())
        on_host = take_rows(host_lines, take_rows(hd.space.events.line, corr.rows))
        # one launch per kernel, the last of its id as xprof links them (however often an id
        # repeats, the edges are at most the kernels)
        blocks.append(join_one_on_ids(corr.rows[on_host], corr.values[on_host],
                                      corr.rows[~on_host], corr.values[~on_host],
                                      keep=CORRELATION_ID_KEEP)[:2])
    return blocks


def _merge_edges(blocks: list) -> tuple[np.ndarray, np.ndarray]:
    """One edge list sorted by destination from blocks each sorted by it (a destination's
    sources in block order)."""
    blocks = [b for b in blocks if len(b[0])]
    if not blocks:
        return np.empty(0, np.int32), np.empty(0, np.int32)
    if len(blocks) == 1:
        return blocks[0]
    src = np.concatenate([b[0] for b in blocks])
    dst = np.concatenate([b[1] for b in blocks])
    order = np.argsort(dst, kind="stable")  # merges the sorted runs
    return src[order], dst[order]


def _root_levels(n_nodes: int, r, at: dict) -> np.ndarray:
    """int8 root level of every node (-1: not a root): the root events ``r`` (see
    :func:`_root_events`), except tf.data's captured-function runs (``at``: see
    :func:`_graph_queries`)."""
    root_level = np.full(n_nodes, -1, np.int8)  # _r levels are small: 1, 2, ...
    root_level[r.rows] = np.clip(r.values, 0, 127)
    if "tf" in at:
        tf_data_ids = at["tf"][0][at["tf"][1]]
        root_ids, has_id = at["root"]
        if len(tf_data_ids):
            root_level[r.rows[has_id & keys_in((root_ids,), (tf_data_ids,))]] = -1
    return root_level


@dataclass
class GroupingGraph:
    """The grouping graph of a host before groups are assigned: nesting parents, the visit
    order that makes nesting subtrees contiguous (``order`` None: row order; ``pos`` its
    inverse), the skip flags of async events, the parents besides the nesting one (extra
    edges sorted by destination) and the root level of every node (-1: not a root); of the
    regions only their starts are kept (their lines and lengths go once nested)."""

    parent: np.ndarray
    order: np.ndarray | None
    pos: np.ndarray | None
    skip: np.ndarray | None
    parents: tuple
    root_level: np.ndarray
    region_begin: np.ndarray  # int64 start of each region (node n_real + i)
    n_real: int
    context: dict  # the stats that name the groups (held here: a step beside may drop caches)

    def begin_of(self, hd: HostData, nodes: np.ndarray) -> np.ndarray:
        """int64 start of ``nodes`` (real events and regions)."""
        real = nodes < self.n_real
        out = np.empty(len(nodes), np.int64)
        out[real] = hd.begin[nodes[real]]
        out[~real] = self.region_begin[nodes[~real] - self.n_real]
        return out


def _by_source(src: np.ndarray, dst: np.ndarray, pos: np.ndarray | None) -> tuple:
    """(source visit position, destination) of the extra edges, sorted by the position."""
    return sort_pairs(src, dst, pos)


def _edges(links, blocks: list) -> tuple:
    """(src, dst) of every extra edge sorted by destination, once the context links are done.
    (Their order by source is made when groups are spread, not here: beside the nesting its
    sort's arrays would add to the grouping's peak of memory.)"""
    blocks.insert(0, links.result())
    src, dst = _merge_edges(blocks)
    blocks.clear()
    return src, dst


def _helping(fn, *args):
    """``fn(*args)`` on the helper thread, counted as a helper while it runs (and stopped
    with the run the caller works for: see _interrupt.in_this_run)."""
    with helper_thread():
        return fn(*args)


def grouping_graph(hd: HostData) -> GroupingGraph:
    """Build the graph :func:`group_events` spreads groups over.  The context links (the
    largest stage, in C without the GIL), then the edges' merge, run on a helper thread
    beside the stat queries, the regions and the nesting (other steps wait for a core
    while the helper works, not while it waits: see _interrupt.helper_thread); stats are read
    only where needed and dropped once used."""
    n = len(hd)
    with ThreadPoolExecutor(1) as pool:
        links = pool.submit(in_this_run(_helping), producer_consumer_links, hd)
        # one pass over the stat table for the graph's stats and those that name the groups
        stats = hd.int_stats(_GRAPH_STATS + _KEPT_STATS)
        at = _graph_queries(hd, stats["_r"])
        regions = threadpool_regions_of(hd, at)
        root_level = _root_levels(n + len(regions), at.pop("roots"), at)
        blocks = _other_edges(hd, stats["correlation_id"], at)
        del at
        hd.drop_stats(("correlation_id",))
        order = hd.nesting_order()
        pos = None
        if order is not None:
            pos = np.empty(n, np.int32)
            pos[order] = np.arange(n, dtype=np.int32)
        edges = pool.submit(in_this_run(_helping), _edges, links, blocks)  # (after the links)
        parent, skip = _nesting(hd, regions, stats["_a"], order)
        region_begin = regions.begin
        del regions  # (its lines and lengths: 12 bytes a region, millions on big hosts)
        hd.drop_stats(("_a",))
        iter_num, step_num = stats["iter_num"], stats["step_num"]
        del stats
        src, dst = edges.result()
    del blocks, links, edges
    release_free_memory()  # the stages' temporaries, before the next one's
    context = {"graph_type": hd.str_stat("graph_type"), "iter_num": iter_num,
               "step_num": step_num}
    return GroupingGraph(parent, order, pos, skip, (parent, dst, src), root_level,
                         region_begin, n, context)


def group_events(hd: HostData, extra_roots: np.ndarray | None = None,
                 graph: GroupingGraph | None = None) -> Grouping:
    """Group ``hd``'s events.  ``extra_roots`` (event rows) act as level-1 roots in addition
    to the events with an ``_r`` stat (used for inferred steps); ``graph`` reuses a graph
    built by :func:`grouping_graph` (the extra edges sorted by their source's visit position
    are made here, for the spread only)."""
    graph = grouping_graph(hd) if graph is None else graph
    root_level = graph.root_level
    if extra_roots is not None and len(extra_roots):
        root_level = root_level.copy()
        root_level[extra_roots] = 1
    roots = np.flatnonzero(root_level >= 0).astype(np.int32)
    roots = roots[argsort(-root_level[roots].astype(np.int32), graph.begin_of(hd, roots))]
    by_source = _by_source(graph.parents[2], graph.parents[1], graph.pos)
    group, root_of_group = spread_groups(
        roots, root_level, graph.n_real, (graph.order, graph.pos, hd.line, graph.skip),
        graph.parents, by_source)
    del roots, by_source  # (not needed by the group table)
    return Grouping(group, graph.parent,
                    _group_table(hd, root_of_group, graph.parents, graph.context),
                    len(graph.region_begin))


def _parents_of(par, node: np.ndarray, owner: np.ndarray):
    """(owner, parent) pairs of every parent of each node: its nesting parent first, then
    its extra parents in edge order (``par``: see GroupingGraph.parents)."""
    parent, x_dst, x_src = par
    key = node.astype(x_dst.dtype)  # (an int64 key would copy x_dst to int64)
    lo = np.searchsorted(x_dst, key, side="left")
    hi = np.searchsorted(x_dst, key, side="right")
    tree = parent[node]
    counts = (tree >= 0).astype(np.int64) + (hi - lo)
    out_owner = np.repeat(owner, counts)
    out_node = np.empty(int(counts.sum()), np.int64)
    first = np.cumsum(counts) - counts
    has_tree = tree >= 0
    out_node[first[has_tree]] = tree[has_tree]
    n_extra = hi - lo
    starts = first + has_tree
    pos = np.repeat(starts, n_extra) + (np.arange(int(n_extra.sum())) -
                                        np.repeat(np.cumsum(n_extra) - n_extra, n_extra))
    out_node[pos] = x_src[np.repeat(lo, n_extra) + (pos - np.repeat(starts, n_extra))]
    return out_owner, out_node


def _context(hd: HostData, roots: np.ndarray, par, stat) -> tuple[np.ndarray, np.ndarray]:
    """(value, found) of ``stat`` on each root or, breadth-first over parent edges, on its
    nearest ancestor that has it (the first found in breadth-first order).  All roots walk up
    together, one level at a time."""
    n = len(hd)
    values = np.zeros(len(roots), dtype=stat.values.dtype)
    found = np.zeros(len(roots), dtype=bool)
    owner = np.arange(len(roots))
    node = roots.astype(np.int64)
    n_nodes = len(par[0])
    for _ in range(100):
        if not len(node):
            break
        real = node < n
        hit = np.zeros(len(node), dtype=bool)
        value = np.zeros(len(node), dtype=values.dtype)
        value[real], hit[real] = stat.lookup(node[real])
        hit &= ~found[owner]
        if hit.any():
            first = np.unique(owner[hit], return_index=True)[1]
            who = owner[hit][first]
            values[who] = value[hit][first]
            found[who] = True
        live = ~found[owner]
        owner, node = _parents_of(par, node[live], owner[live])
        if len(node) > 2 * len(roots):  # diamonds: keep each (root, node) pair once
            keep = np.sort(np.unique(owner * (n_nodes + 1) + node, return_index=True)[1])
            owner, node = owner[keep], node[keep]
    return values, found


def _group_table(hd: HostData, root_of_group: np.ndarray, par, stats: dict) -> pd.DataFrame:
    k = len(root_of_group)
    if not k:
        return pd.DataFrame({"root": pd.Series(dtype=np.int64), "name": pd.Series(dtype=object),
                             "step_num": pd.Series(dtype=np.int64),
                             "implicit": pd.Series(dtype=bool)},
                            index=pd.Index([], name="group", dtype=np.int64))
    n = len(hd)
    real_root = np.minimum(root_of_group, n - 1)
    root_name = np.where(root_of_group < n, hd.name_of(real_root), "ThreadpoolListener::Region")
    implicit = np.isin(root_name, list(IMPLICIT_ROOTS))
    graph_code, has_graph = _context(hd, root_of_group, par, stats["graph_type"])
    graph_type = stats["graph_type"].text(np.where(has_graph, graph_code, -1).astype(np.int64))
    iter_num, has_iter = _context(hd, root_of_group, par, stats["iter_num"])
    step_num, has_step = _context(hd, root_of_group, par, stats["step_num"])
    g = np.arange(k)
    number = np.where(has_iter, iter_num, np.where(has_step, step_num, g))
    prefix = np.where(has_graph, pd.Series(graph_type, dtype=object).astype(str) + " ",
                      np.where(implicit, "", pd.Series(root_name, dtype=object) + " "))
    names = pd.Series(prefix, dtype=object) + pd.Series(number, dtype=object).astype(str)
    return pd.DataFrame({"root": root_of_group.astype(np.int64), "name": names.to_numpy(),
                         "step_num": np.where(has_step, step_num, g).astype(np.int64),
                         "implicit": implicit},
                        index=pd.Index(g, name="group", dtype=np.int64))
