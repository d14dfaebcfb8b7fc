"""TensorFlow function runs waiting for their executor's work on other threads.

A function run carries the step id (stat ``id``) of the executor that runs its ops:
``FunctionRun`` (a ``tf.function`` call) and tf.data's captured functions
(``InstantiatedCapturedFunction::Run*``: a map's function, run for each element).  The
executor's events carry the same id on the threads that ran them (``ExecutorState::Process``,
``ExecutorDoneCallback``); the events nested in those are its work.  xprof's event grouping
uses the same ids (the step ids of the captured functions are tf.data's; ``ExecutorState::Process``
events of one id are one function's work).

The run waits for the work: an end edge from the latest-ending work event that ends inside it
(on another thread), kind ``context`` (the same relation as TF's producer -> consumer contexts,
by step id); so does each enclosing event that outlives the run while the work still runs (a
short, asynchronous ``FunctionRun`` inside ``KernelAndDeviceFunc::Run``, which waits for the
function's last op): its time after the run is waiting, not its own work.  The work of
tf.data's functions (and the runs) are ``input``.

An op the executor hands to another thread (an async kernel such as
``IteratorGetNextOp::DoCompute`` on tf.data's ``get_next`` thread) carries the run's step id
too: when it is the first event of its thread's activity (top level, nothing else starts it),
its start waits for the executor event of that id that started last before it on another
thread (the one that scheduled it), not for the thread's previous event: a replay moves it
with the step that asked for it instead of keeping it at its measured time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.hostdata.host import HostData
from .distinct_codes import distinct_codes, sorted_member

__all__ = ["add_executor_waits"]

_RUN, _TF_DATA_RUN = "FunctionRun", "InstantiatedCapturedFunction::Run"
_EXECUTOR = ("ExecutorState::Process", "ExecutorDoneCallback")
_LEVELS = 8  # enclosing events tried above a run


def _named(hd: HostData, g, rows: np.ndarray):
    """(run mask, tf.data run mask, executor mask) of the graph nodes at host ``rows``."""
    codes, inverse = distinct_codes(hd.name_code[rows], len(hd.names))
    names = [str(n) for n in hd.names[codes]]
    tf_data = np.array([n.startswith(_TF_DATA_RUN) for n in names], bool)
    run = np.array([n == _RUN for n in names], bool) | tf_data
    executor = np.array([n in _EXECUTOR for n in names], bool)
    return run[inverse], tf_data[inverse], executor[inverse]


def _owner(g, executor_nodes: np.ndarray) -> np.ndarray:
    """Each node's executor event (itself or its nearest such ancestor; -1: none)."""
    owner = np.full(len(g), -1, np.int64)
    owner[executor_nodes] = executor_nodes
    todo = np.flatnonzero((owner < 0) & (g.parent >= 0))  # (the nodes that may still inherit)
    pending = np.zeros(len(g), bool)
    pending[todo] = True
    for _ in range(256):  # one level a pass (every node reads the owners the last pass left)
        got = owner[g.parent[todo]]
        hit = got >= 0
        if not hit.any():
            break
        owner[todo[hit]] = got[hit]
        pending[todo[hit]] = False
        todo = todo[~hit]
        # a node whose parent neither has an owner nor may still get one never will
        parent = g.parent[todo]
        keep = pending[parent] | (owner[parent] >= 0)
        pending[todo[~keep]] = False
        todo = todo[keep]
    return owner


def add_executor_waits(g, hd: HostData, node_of: np.ndarray, input_code: int,
                       context_kind: int) -> None:
    """Sets ``end_src`` (kind ``context_kind``) of each run, or its enclosing event, to the
    latest-ending work of its step id inside it; tf.data's runs and work get ``input_code``."""
    ids = hd.int_stat("id")
    if not len(ids):
        return
    rows = np.asarray(ids.rows, np.int64)
    node = node_of[rows]
    rows, node = rows[node >= 0], node[node >= 0]
    if not len(node):
        return
    step_id, _ = ids.lookup(rows)
    run, tf_data, executor = _named(hd, g, rows)
    if not run.any() or not executor.any():
        return
    owner = _owner(g, node[executor])
    id_of = np.zeros(len(g), np.int64)
    id_of[node[executor]] = step_id[executor]
    work = np.flatnonzero(owner >= 0)
    work_id = id_of[owner[work]]
    del owner, id_of  # (per node: freed before the joins)
    data_ids = np.unique(step_id[tf_data])
    g.category[work[sorted_member(work_id, data_ids)]] = input_code
    g.category[node[tf_data]] = input_code
    _link(g, node[run], step_id[run], work, work_id, context_kind)
    _dispatch(g, node, step_id, run, executor, context_kind)


def _dispatch(g, node, step_id, run, executor, kind: int) -> None:
    """Start edges of the ops an executor handed to another thread (see the module doc)."""
    run_ids = np.unique(step_id[run])
    cand = ~run & ~executor & sorted_member(step_id, run_ids)
    dst, dst_id = node[cand], step_id[cand]
    ok = (g.parent[dst] < 0) & (g.start_src[dst] < 0) & ~g.is_device[dst]
    dst, dst_id = dst[ok], dst_id[ok]
    src_mask = run | executor
    if not len(dst) or not src_mask.any():
        return
    left = pd.DataFrame({"id": dst_id, "t": g.begin[dst], "dst": dst}).sort_values(
        "t", kind="stable")
    right = pd.DataFrame({"id": step_id[src_mask], "t": g.begin[node[src_mask]],
                          "src": node[src_mask]}).sort_values("t", kind="stable")
    hit = pd.merge_asof(left, right, on="t", by="id", direction="backward")
    hit = hit[hit.src.notna()]
    d, s = hit.dst.to_numpy(np.int64), hit.src.to_numpy(np.int64)
    ok = g.resource[s] != g.resource[d]
    g.start_src[d[ok]], g.start_kind[d[ok]] = s[ok], kind


def _queries(g, runs, run_ids) -> pd.DataFrame:
    """What :func:`_link` looks up, every level at once: per run (``i``) and enclosing level,
    its id, the level's event (``dst``) and its end (``t``), and the time its work must end
    after (``floor``: the run's start, or the end of the level below); ``seq`` numbers them
    level by level, each level by ``t``; sorted by ``t``."""
    level_dst, inner_end = runs.copy(), g.begin[runs].copy()
    frames = []
    for _ in range(_LEVELS):
        todo = np.flatnonzero(level_dst >= 0)
        if not len(todo):
            break
        a = level_dst[todo]
        frames.append(pd.DataFrame({
            "id": run_ids[todo], "t": g.end[a], "i": todo, "dst": a,
            "floor": np.maximum(g.begin[runs[todo]], inner_end[todo])}).sort_values(
                "t", kind="stable"))
        inner_end = np.where(level_dst >= 0, g.end[np.maximum(level_dst, 0)], inner_end)
        level_dst = np.where(level_dst >= 0, g.parent[np.maximum(level_dst, 0)], -1)
    q = pd.concat(frames, ignore_index=True)
    q["seq"] = np.arange(len(q))
    return q.sort_values("t", kind="stable")


def _link(g, runs, run_ids, work, work_id, kind: int) -> None:
    """Each run, and each enclosing event that outlives it while its work still runs, waits
    for the latest-ending work of its id inside it (on another thread): one backward as-of
    join of every level's events with the work, by id."""
    by_end = np.argsort(g.end[work], kind="stable")  # (one frame, built in the order)
    right = pd.DataFrame({"id": work_id[by_end], "t": g.end[work[by_end]],
                          "src": work[by_end]})
    del by_end
    hit = pd.merge_asof(_queries(g, runs, run_ids), right, on="t", by="id",
                        direction="backward")
    hit = hit[hit.src.notna()].sort_values("seq")
    i, src = hit.i.to_numpy(np.int64), hit.src.to_numpy(np.int64)
    ok = (g.end[src] > hit.floor.to_numpy()) & (g.resource[src] != g.resource[runs[i]])
    src, dst = src[ok], hit.dst.to_numpy(np.int64)[ok]
    latest = np.lexsort((g.end[src], dst))
    src, dst = src[latest], dst[latest]
    last = np.ones(len(dst), bool)
    last[:-1] = dst[1:] != dst[:-1]
    src, dst = src[last], dst[last]
    free = g.end_src[dst] < 0
    g.end_src[dst[free]], g.end_kind[dst[free]] = src[free], kind
