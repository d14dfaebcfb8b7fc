"""One host's dependency graph: what had to happen before each event could start or end.

Nodes are the events that occupy a resource: every event of a host thread (``/host:CPU``
lines, not the profiler's derived lines, async events left out) and every device activity
event (GPU stream lines, TPU ``XLA Ops``; see :mod:`..gpu.activity`).  A node has a
resource (its line), a begin and an end (ps, the host's axis), a category (as the step-time
breakdown's; host work nested inside an input event, such as a map function that a
consumer's ``Iterator::`` event runs on its own thread, is input as well: the step breakdown
counts it in the input wait) and its innermost parent on the same line.

Edges (``DepGraph.edges``, each with a kind, a source point and a target point) are:

* ``ORDER``: on each resource, a top-level event's end -> the next top-level event's start
  (program order on a thread, a stream's queue), where the next one starts after it ends
  (top-level events that overlap on one line, such as a CUDA graph's concurrent kernels, are
  left unordered);
* ``NEST_BEGIN`` / ``NEST_END``: a parent's start -> its child's start, the child's end -> the
  parent's end (a parent spans its children);
* ``LAUNCH``: a host launch's start -> the device event it launched (``correlation_id``; a
  command buffer's launch -> each of its kernels);
* ``CONTEXT`` / ``ELEMENT``: TensorFlow's producer -> consumer contexts and tf.data's
  elements (:mod:`..trace.flow_links`): the producer's end -> the consumer's start (its start
  when the consumer started while it ran: it was scheduled from inside it), or -> the
  consumer's end when the producer ends while the consumer runs (the consumer waited for it);
  and a TensorFlow function run (a ``tf.function`` call, a tf.data map's function) -> the
  end of its executor's work on other threads, by step id (:mod:`.executor_waits`; a tf.data
  consumer's ``Iterator::`` wait is then explained by the producer's chain down to the map's
  function); an instant that woke a thread (a thread pool's ``StartRegion``) hands its
  producer to the thread's next lasting event; a tf.data producer whose buffer was full
  waits for the consumer that took an element (:mod:`.back_pressure`);
* ``SYNC``: a device event's end -> the end of a host wait (``*Synchronize``,
  ``BlockHostUntilReady``, ``block_until_ready``, ``Wait for ...``, a blocking copy) during
  which it ended: the last device event of the host to end inside the wait; a PjRt buffer
  wait on XLA:CPU's ops on other threads (:mod:`.pjrt_waits`);
* ``COLLECTIVE`` / ``STREAM_WAIT``: a collective's participants on the host's devices -> the
  last arrival (each participant's end waits for its end), an async ``*-start`` -> its
  ``*-done`` on another stream (:mod:`.device_waits`).

A replay (scaled durations) can run over it: each node's start is the latest of its incoming
start edges (plus the observed gap), its end its start plus its duration or the latest
incoming end edge.  Every edge goes forward in the observed times (its source point is not
after its target point), so replaying the observed durations gives the observed times.

Not covered yet: collectives across hosts (each host's graph is its own), stream waits the
trace does not name (``cudaStreamWaitEvent`` without its streams), and host threads woken by
anything but the edges above.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...constants import COUNTERS_LINE, HOST_PLANE
from ..gpu.activity import COLLECTIVE, COPY, device_activity, stream_names
from ..._native.kernels.critical_kernel import flow_edges, input_inside, wake_ups
from ..._native.kernels.order_kernel import nesting_order_or_none
from ..runtime.hostdata.host import HostData
from ..steps.breakdown import HOST_TO_DEVICE, HOST_WAIT_INPUT, classify_host
from .back_pressure import add_back_pressure
from .device_waits import add_device_waits
from .async_runs import wake_after_async_runs
from .executor_waits import add_executor_waits
from .pjrt_waits import add_pjrt_waits

__all__ = ["CATEGORIES", "EDGE_KINDS", "DepGraph", "EveryRow", "dependency_graph"]

CATEGORIES = ("device_compute", "device_collectives", "device_to_device", "input", "output",
              "kernel_launch", "host_compute", "host_wait", "compilation", "idle")
(DEVICE_COMPUTE, DEVICE_COLLECTIVES, DEVICE_TO_DEVICE, INPUT, OUTPUT, KERNEL_LAUNCH,
 HOST_COMPUTE, HOST_WAIT, COMPILATION, IDLE) = range(len(CATEGORIES))
EDGE_KINDS = ("order", "nest_begin", "nest_end", "launch", "context", "element", "sync",
              "collective", "stream_wait")
(ORDER, NEST_BEGIN, NEST_END, LAUNCH, CONTEXT, ELEMENT, SYNC, COLLECTIVE_WAIT,
 STREAM_WAIT) = range(len(EDGE_KINDS))
_SYNC_PART = ("synchronize", "blockhostuntil", "block_until_ready")
_SYNC_PREFIX = ("wait for ", "waitforbuffer", "pjrt_buffer_await")
_BLOCKING_COPY = ("cumemcpy", "cudamemcpy", "hipmemcpy", "cumemset", "cudamemset")
_LAUNCH_PART = ("launchkernel", "graphlaunch", "launchcooperativekernel", "cumodulelaunch",
                "hipmodulelaunch", "hipextmodulelaunch")


@dataclass
class DepGraph:
    """Nodes (arrays by node, sorted by resource, begin, longest first) and edges."""

    rows: np.ndarray  # int64 event row of the host (or EveryRow: node i is row i)
    resource: np.ndarray  # int32 line key
    begin: np.ndarray  # int64 ps
    end: np.ndarray  # int64 ps
    category: np.ndarray  # int8 into CATEGORIES
    parent: np.ndarray  # int32 node (-1: top level)
    start_src: np.ndarray  # int32 node whose event this one's start waits for (-1)
    start_kind: np.ndarray  # int8 edge kind of start_src
    end_src: np.ndarray  # int32 node whose end this one's end waits for (-1)
    end_kind: np.ndarray  # int8 edge kind of end_src
    resource_names: dict = field(default_factory=dict)  # line key -> "plane / line"
    is_device: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # per node

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def edges(self) -> pd.DataFrame:
        """Every edge: src, dst (nodes), kind (code into EDGE_KINDS), src_point and
        dst_point ("begin"/"end")."""
        return graph_edges(self)


def _by_name(hd: HostData, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, list]:
    """(each row's name code, the distinct codes, their names lower-cased); rows None: every
    event of the host."""
    if rows is None:  # (the names of every event: counted once per host, no pass here)
        code, codes = hd.name_code, np.flatnonzero(hd.name_counts > 0)
        return code, codes, [str(n).lower() for n in hd.names[codes]]
    code = hd.name_code[rows]
    present = np.zeros(max(len(hd.names), int(code.max()) + 1 if len(code) else 0), bool)
    present[code] = True
    codes = np.flatnonzero(present)
    return code, codes, [str(n).lower() for n in hd.names[codes]]


def _per_row(code: np.ndarray, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (one per distinct code) at each row (its ``code``)."""
    table = np.zeros(int(codes[-1]) + 1 if len(codes) else 0, values.dtype)
    table[codes] = values
    return table[code]


def _host_categories(hd: HostData, rows: np.ndarray | None,
                     sync: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """(category per host row, bool per row: a host wait on the device, None unless
    ``sync``); rows None: every event of the host."""
    code, codes, low = _by_name(hd, rows)
    kind = classify_host(pd.Series(hd.names[codes], dtype=object))
    cat = np.full(len(low), HOST_COMPUTE, np.int8)
    cat[(kind == HOST_WAIT_INPUT) | (kind == HOST_TO_DEVICE)] = INPUT
    cat[np.array([n.startswith("iterator::") for n in low], bool).reshape(-1)] = INPUT  # tf.data
    cat[np.array(["compile" in n for n in low], bool).reshape(-1)] = COMPILATION
    launch = np.array([any(p in n for p in _LAUNCH_PART) for n in low], bool).reshape(-1)
    cat[launch] = KERNEL_LAUNCH
    if not sync:
        return _per_row(code, codes, cat), None
    sync = np.array([any(p in n for p in _SYNC_PART) or n.startswith(_SYNC_PREFIX)
                     or (n.startswith(_BLOCKING_COPY) and "async" not in n) for n in low],
                    bool).reshape(-1)
    return _per_row(code, codes, cat), _per_row(code, codes, sync)


def _device_categories(hd: HostData, rows: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    code, codes, low = _by_name(hd, rows)
    copy_cat = np.array([INPUT if ("h2d" in n or "htod" in n or "hosttodevice" in n) else
                         OUTPUT if ("d2h" in n or "dtoh" in n or "devicetohost" in n) else
                         DEVICE_TO_DEVICE for n in low], np.int8).reshape(-1)
    cat = np.full(len(rows), DEVICE_COMPUTE, np.int8)
    cat[kinds == COLLECTIVE] = DEVICE_COLLECTIVES
    copy = kinds == COPY
    cat[copy] = _per_row(code[copy], codes, copy_cat)
    return cat


def _host_rows(hd: HostData) -> np.ndarray | None:
    """Rows of the host threads' events (not derived lines, not async ones); None: every
    event of the host (told from the lines when no event is async: no mask of the events)."""
    a = hd.int_stat("_a")
    if not (a.values != 0).any():
        names = np.asarray(hd.space.line_names, dtype=object)
        line_ok = hd.plane_lines(lambda p: (p == HOST_PLANE).to_numpy()) & \
            ~hd.derived_lines() & (names != COUNTERS_LINE if len(names) else True)
        if len(line_ok) == len(hd.line_counts) and line_ok[hd.line_counts > 0].all():
            return None
    on_host = hd.plane_is(HOST_PLANE) & ~hd.derived_line_mask() & ~hd.counter_line_mask()
    on_host[a.rows[a.values != 0]] = False
    return None if on_host.all() else np.flatnonzero(on_host)


class _SameRows:
    """``node_of`` of a graph whose nodes are the host's events in row order: each row is its
    node (no array of the host's length; ``rows`` itself when it is int64 already: callers
    only read it)."""

    def __getitem__(self, rows) -> np.ndarray:
        return np.asarray(rows, np.int64)


class EveryRow:
    """``DepGraph.rows`` of a graph whose nodes are the host's events in row order (``n`` of
    them): node ``i`` is row ``i``, read as an int64 array (no array of the host's length)."""

    dtype, ndim = np.dtype(np.int64), 1

    def __init__(self, n: int):
        self.n = int(n)

    def __len__(self) -> int:
        return self.n

    @property
    def shape(self) -> tuple:
        return (self.n,)

    def __getitem__(self, nodes):
        if isinstance(nodes, slice):
            return np.arange(self.n, dtype=np.int64)[nodes]
        if np.isscalar(nodes) and not isinstance(nodes, (bool, np.bool_)):
            return np.int64(range(self.n)[int(nodes)])
        nodes = np.asarray(nodes)
        if nodes.dtype == bool:
            if nodes.shape != (self.n,):
                raise IndexError("a boolean index of every node")
            return np.flatnonzero(nodes)
        out = nodes.astype(np.int64)  # (a copy, as an array's indexing gives)
        if out.size and (out.min() < -self.n or out.max() >= self.n):
            raise IndexError(f"node index out of range [0, {self.n})")
        out[out < 0] += self.n
        return out

    def __array__(self, dtype=None, copy=None):
        return np.arange(self.n, dtype=dtype or np.int64)

    def __eq__(self, other) -> bool:
        return isinstance(other, EveryRow) and other.n == self.n


def _resource_names(hd: HostData, keys: np.ndarray) -> dict:
    lines = stream_names(hd)
    sp = hd.space
    first = {int(k): i for i, k in reversed(list(enumerate(hd.line_key.tolist())))}
    planes = sp.plane_names
    return {int(k): f"{planes[int(sp.line_plane[first[int(k)]])]} / {lines[int(k)]}"
            for k in keys}


def dependency_graph(hd: HostData, launches: pd.DataFrame | None = None,
                     flows: pd.DataFrame | None = None) -> DepGraph:
    """The graph of one host; ``launches``/``flows``: the host's partials of ``launch_links``
    and ``flow_links`` (host rows)."""
    host = _host_rows(hd)
    nodes = _every_event(hd) if host is None else None
    if nodes is None:
        nodes = _some_events(hd, np.arange(len(hd)) if host is None else host)
    rows, resource, begin, end, category, is_device, is_sync, parent, node_of = nodes
    del nodes
    if len(rows) >= 2**31:
        raise ValueError("a dependency graph holds fewer than 2**31 nodes")
    g = DepGraph(rows, resource, begin, end, category, parent,
                 np.full(len(rows), -1, np.int32), np.zeros(len(rows), np.int8),
                 np.full(len(rows), -1, np.int32), np.zeros(len(rows), np.int8),
                 _resource_names(hd, _distinct_sorted(resource, hd.line_key)), is_device)
    _input_inside_input(g)
    _add_launches(g, node_of, launches)
    _add_flows(g, node_of, flows)
    async_work = add_executor_waits(g, hd, node_of, INPUT, CONTEXT)
    _add_wake_ups(g)
    add_back_pressure(g, ELEMENT)
    wake_after_async_runs(g, *async_work, CONTEXT)  # (after the waits it may give way to)
    add_pjrt_waits(g, hd, node_of, SYNC)
    add_device_waits(g, hd, DEVICE_COLLECTIVES, COLLECTIVE_WAIT, STREAM_WAIT)
    _add_syncs(g, is_sync)
    return g


def _every_event(hd: HostData) -> tuple | None:
    """The node columns when every event of the host is a node and they come in node order
    (a CPU host's threads): the host's begin and line columns themselves (never written),
    no reordering, no row map; None when they are not in node order."""
    begin, resource = np.asarray(hd.begin, np.int64), np.asarray(hd.line, np.int32)
    if hd.nesting_order() is not None:  # (the node order: found once per host, cached)
        return None
    end = begin + hd.duration
    category, _ = _host_categories(hd, None, sync=False)  # (no device: no host wait on one)
    parent = np.asarray(hd.nesting_parent(), np.int32)  # (shared: the graph never writes it)
    if len(parent) and parent.min() < -1:
        parent = np.where(parent < 0, -1, parent).astype(np.int32)
    return (EveryRow(len(hd)), resource, begin, end, category, np.zeros(len(hd), bool), None,
            parent, _SameRows())


def _some_events(hd: HostData, host: np.ndarray) -> tuple:
    """The node columns of the host rows ``host`` and the device activity, in node order."""
    act = device_activity(hd)
    rows = np.concatenate([host, act.rows.astype(np.int64)])
    host_cat, sync = _host_categories(hd, host) if len(host) else (np.zeros(0, np.int8),
                                                                    np.zeros(0, bool))
    dev_cat = _device_categories(hd, act.rows, act.kind) if len(act) else np.zeros(0, np.int8)
    category = np.concatenate([host_cat, dev_cat])
    is_device = np.concatenate([np.zeros(len(host), bool), np.ones(len(act), bool)])
    is_sync = np.concatenate([sync, np.zeros(len(act), bool)])
    begin = hd.begin[rows].astype(np.int64, copy=False)
    end = begin + hd.duration[rows].astype(np.int64, copy=False)
    resource = hd.line[rows].astype(np.int32, copy=False)
    order = _node_order(resource, begin, end)
    if order is not None:
        rows, resource, begin, end = rows[order], resource[order], begin[order], end[order]
        category, is_device, is_sync = category[order], is_device[order], is_sync[order]
        del order
    node_of = np.full(len(hd), -1, np.int64)
    node_of[rows] = np.arange(len(rows))
    parent = hd.nesting_parent()[rows].astype(np.int64, copy=False)
    parent = np.where(parent >= 0, node_of[np.maximum(parent, 0)], -1).astype(np.int32)
    return rows, resource, begin, end, category, is_device, is_sync, parent, node_of


def _node_order(resource: np.ndarray, begin: np.ndarray, end: np.ndarray,
                duration: np.ndarray | None = None) -> np.ndarray | None:
    """The order of the nodes by (resource, begin, longest first), ties as given; None when
    they already are in it (a host's threads usually are: no sort, no copies); ``duration``:
    ``end - begin`` when the caller has it."""
    if len(resource) < 2:
        return None
    return nesting_order_or_none(resource, begin, end - begin if duration is None else duration)


def _distinct_sorted(values: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The distinct values of the sorted array ``values``, each one of ``candidates`` (a few:
    line keys), ascending: a binary search per candidate, no pass over ``values``."""
    cand = np.unique(np.asarray(candidates))
    present = np.searchsorted(values, cand, "left") < np.searchsorted(values, cand, "right")
    return cand[present].astype(values.dtype)


def _add_wake_ups(g: DepGraph) -> None:
    """An instant that woke a thread (a thread pool's ``StartRegion``: a consumer context)
    hands its producer to the thread's next top-level event that lasts: that event's start
    waits for it, unless it waits for something that ended later (in C: ``wake_ups``)."""
    wake_ups(g)


def _add_launches(g: DepGraph, node_of: np.ndarray, launches) -> None:
    if launches is None or not len(launches):
        return
    src = node_of[launches.launch_event.to_numpy()]
    dst = node_of[launches.kernel_event.to_numpy()]
    ok = (src >= 0) & (dst >= 0)
    g.start_src[dst[ok]] = src[ok]
    g.start_kind[dst[ok]] = LAUNCH
    g.category[src[ok]] = KERNEL_LAUNCH


def _add_flows(g: DepGraph, node_of: np.ndarray, flows) -> None:
    """Each consumer's latest-ending producer: an end edge when it ended while the consumer
    ran, else a start edge (in C: ``flow_edges``)."""
    if flows is None or not len(flows):
        return
    src = node_of[flows.producer_event.to_numpy()]
    dst = node_of[flows.consumer_event.to_numpy()]
    flow_edges(src, dst, flows.kind.to_numpy() == 1, g, (ELEMENT, CONTEXT, INPUT))


def _input_inside_input(g: DepGraph) -> None:
    """Host compute nested (at any depth) inside a host input event becomes input (a host
    node's ancestors are on its thread: host nodes too)."""
    input_inside(g.parent, g.is_device, g.category, (INPUT, HOST_COMPUTE))


def _add_syncs(g: DepGraph, is_sync: np.ndarray | None) -> None:
    """Each host wait's device event: the last to end inside the wait (``is_sync`` None: the
    graph has no device node)."""
    if is_sync is None:
        return
    waits = np.flatnonzero(is_sync & (g.end_src < 0))
    dev = np.flatnonzero(g.is_device)
    if not len(waits) or not len(dev):
        return
    by_end = dev[np.argsort(g.end[dev], kind="stable")]
    ends = g.end[by_end]
    at = np.searchsorted(ends, g.end[waits], side="right") - 1
    ok = at >= 0
    cand = by_end[np.maximum(at, 0)]
    ok &= g.end[cand] > g.begin[waits]
    g.end_src[waits[ok]], g.end_kind[waits[ok]] = cand[ok], SYNC
    g.category[waits[ok]] = HOST_WAIT


def graph_edges(g: DepGraph) -> pd.DataFrame:
    """The edges of :class:`DepGraph` as a table (see the module doc)."""
    n = np.arange(len(g))
    top = np.flatnonzero(g.parent < 0)
    same = (g.resource[top[1:]] == g.resource[top[:-1]]) & (g.end[top[:-1]] <= g.begin[top[1:]])
    child = np.flatnonzero(g.parent >= 0)
    has_s, has_e = np.flatnonzero(g.start_src >= 0), np.flatnonzero(g.end_src >= 0)
    parts = [(top[:-1][same], top[1:][same], ORDER, "end", "begin"),
             (g.parent[child], child, NEST_BEGIN, "begin", "begin"),
             (child, g.parent[child], NEST_END, "end", "end"),
             (g.start_src[has_s], n[has_s], g.start_kind[has_s], "end", "begin"),
             (g.end_src[has_e], n[has_e], g.end_kind[has_e], "end", "end")]
    frames = [pd.DataFrame({"src": s, "dst": d, "kind": np.broadcast_to(np.int8(k), len(s))
                            if np.isscalar(k) else k, "src_point": sp, "dst_point": dp})
              for s, d, k, sp, dp in parts]
    out = pd.concat(frames, ignore_index=True)
    src, dst = out.src.to_numpy(), out.dst.to_numpy()
    inside = (out.dst_point == "begin").to_numpy() & (g.end[src] > g.begin[dst])
    out.loc[(out.kind == LAUNCH).to_numpy() | inside, "src_point"] = "begin"
    return out
