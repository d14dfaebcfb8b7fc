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

from ..._native.kernels.critical_kernel import asof_by_id, executor_work, latest_per_target
from ..._native.kernels.order_kernel import argsort
from ..runtime.hostdata.host import HostData
from .async_runs import ASYNC_RUN
from .distinct_codes import distinct_codes, sorted_member

__all__ = ["add_executor_waits"]

_RUN, _TF_DATA_RUN = "FunctionRun", "InstantiatedCapturedFunction::Run"
_EXECUTOR = ("ExecutorState::Process", "ExecutorDoneCallback")
_LEVELS = 8  # enclosing events tried above a run
_DEPTH = 256  # levels a work event may lie below its executor event


def _named(hd: HostData, g, rows: np.ndarray):
    """(run mask, tf.data run mask, executor mask, async run mask) of the graph nodes at host
    ``rows``."""
    codes, inverse = distinct_codes(hd.name_code[rows], len(hd.names))
    names = [str(n) for n in hd.names[codes]]
    tf_data = np.array([n.startswith(_TF_DATA_RUN) for n in names], bool)
    run = np.array([n == _RUN for n in names], bool) | tf_data
    executor = np.array([n in _EXECUTOR for n in names], bool)
    is_async = np.array([n == ASYNC_RUN for n in names], bool)
    return run[inverse], tf_data[inverse], executor[inverse], is_async[inverse]


def _ranked(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` by the native stable argsort (int32
    ranks)."""
    order = argsort(values)
    ordered = values[order]
    new = np.empty(len(values), bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    rank = np.empty(len(values), np.int32)
    rank[order] = np.cumsum(new, dtype=np.int32) - 1
    return ordered[new], rank


def _seeds(nodes: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The executor events ascending, each with its id's rank (an event listed twice: its
    last rank)."""
    if len(nodes) < 2 or (nodes[1:] > nodes[:-1]).all():
        return nodes, ranks
    order = argsort(nodes)
    nodes, ranks = nodes[order], ranks[order]
    last = np.append(nodes[1:] != nodes[:-1], True)
    return nodes[last], ranks[last]


_NONE = (np.empty(0, np.int32), np.empty(0, np.int64))


def add_executor_waits(g, hd: HostData, node_of: np.ndarray, input_code: int,
                       context_kind: int) -> tuple[np.ndarray, np.ndarray]:
    """Sets ``end_src`` (kind ``context_kind``) of each run, or its enclosing event, to the
    latest-ending work of its step id inside it; tf.data's runs and work get ``input_code``.
    Returns (the asynchronous runs, each one's last work event): the wake-ups of
    :func:`.async_runs.wake_after_async_runs`, set once every other wait is known."""
    ids = hd.int_stat("id")
    if not len(ids):
        return _NONE
    rows = np.asarray(ids.rows, np.int64)
    node = node_of[rows]
    if len(node) and node.min() < 0:  # (some rows are no node)
        rows, node = rows[node >= 0], node[node >= 0]
    if not len(node):
        return _NONE
    step_id, _ = ids.lookup(rows)
    run, tf_data, executor, is_async = _named(hd, g, rows)
    if not run.any() or not executor.any():
        return _NONE
    ex_ids, ex_rank = _ranked(step_id[executor])
    seeds = _seeds(node[executor], ex_rank)
    data = sorted_member(ex_ids, np.unique(step_id[tf_data]))  # (per executor id)
    wakes = _link(g, (node[run], is_async[run]), step_id[run], (ex_ids, seeds),
                  (data, input_code), context_kind)
    g.category[node[tf_data]] = input_code
    _dispatch(g, node, step_id, run, executor, context_kind)
    return wakes


def _dispatch(g, node, step_id, run, executor, kind: int) -> None:
    """Start edges of the ops an executor handed to another thread (see the module doc)."""
    run_ids = np.unique(step_id[run])
    cand = np.flatnonzero(~run & ~executor)
    cand = cand[sorted_member(step_id[cand], run_ids)]
    dst, dst_id = node[cand], step_id[cand]
    ok = (g.parent[dst] < 0) & (g.start_src[dst] < 0) & ~g.is_device[dst]
    dst, dst_id = dst[ok], dst_id[ok]
    src = node[run | executor]
    if not len(dst) or not len(src):
        return
    by_time = argsort(g.begin[dst])  # (the edges set in time order)
    dst, dst_id = dst[by_time], dst_id[by_time]
    src_id = step_id[run | executor]
    right = argsort(src_id, g.begin[src])  # by (id, start), ties in their order
    at = asof_by_id(src_id[right], g.begin[src[right]], dst_id, g.begin[dst])
    d, s = dst[at >= 0], src[right[at[at >= 0]]]
    ok = g.resource[s] != g.resource[d]
    g.start_src[d[ok]], g.start_kind[d[ok]] = s[ok], kind


def _levels(g, runs) -> list:
    """Per enclosing level of the runs: (the runs still enclosed (int32 places in ``runs``),
    the level's events, which of the level below's runs are still enclosed (None: all))."""
    i, dst, live = np.arange(len(runs), dtype=np.int32), runs, None
    levels = []
    for _ in range(_LEVELS):
        live = dst >= 0
        live = None if live.all() else live
        if live is not None:
            i, dst = i[live], dst[live]
        if not len(i):
            break
        levels.append((i, dst, live))
        dst = g.parent[dst]
    return levels


def _queries(g, runs, run_ids) -> tuple[np.ndarray, ...]:
    """What :func:`_link` looks up, level by level: per run (``i``) and enclosing level, its
    id (int32 ``run_ids``), the level's event (``dst``) and its end (``t``), and the time its
    work must end after (``floor``: the run's start, or the end of the level below).  Each
    level holds only the runs still enclosed (the order of a level's queries of one event: by
    run, as :func:`_link` keeps the last of ties), written in place (no parts joined)."""
    levels = _levels(g, runs)
    total = sum(len(level[0]) for level in levels)
    rank, t, floor = np.empty(total, np.int32), np.empty(total, np.int64), np.empty(total, np.int64)
    i, dst = np.empty(total, np.int32), np.empty(total, np.int32)
    at, below, begin = 0, None, g.begin[runs]
    for level_i, level_dst, live in levels:
        here = slice(at, at + len(level_i))
        np.take(run_ids, level_i, out=rank[here])
        np.take(g.end, level_dst, out=t[here])
        i[here], dst[here] = level_i, level_dst
        if below is None:
            floor[here] = begin
        else:
            begin = begin if live is None else begin[live]
            np.maximum(begin, t[below] if live is None else t[below][live], out=floor[here])
        at, below = here.stop, here
    return rank, t, i, dst, floor


def _link(g, runs: tuple, run_ids, executors: tuple, data: tuple,
          kind: int) -> tuple[np.ndarray, np.ndarray]:
    """Each run, and each enclosing event that outlives it while its work still runs, waits
    for the latest-ending work of its id inside it (on another thread): one backward as-of
    lookup of every level's events in the work, by id, in one pass over the nodes that finds
    each node's executor (``executors``: the executors' ids, sorted, and (executor events,
    each one's place among them)); the work of ids with ``data[0]`` (per id) gets category
    ``data[1]`` on the way.  ``runs``: (the run nodes, which of them are asynchronous); the
    same pass finds each asynchronous run's last work event, whose end wakes its thread
    (:mod:`.async_runs`): (those runs, those events) are returned."""
    runs, is_async = runs
    ex_ids, seeds = executors
    at = np.minimum(np.searchsorted(ex_ids, run_ids), len(ex_ids) - 1)
    run_rank = np.where(ex_ids[at] == run_ids, at, -1).astype(np.int32)  # (-1: no work)
    q_rank, q_t, i, dst, floor = _queries(g, runs, run_rank)
    tail = np.flatnonzero(is_async)  # (their whole work: as of the end of time)
    if len(tail):
        q_rank = np.concatenate([q_rank, run_rank[tail]])
        q_t = np.concatenate([q_t, np.full(len(tail), np.iinfo(np.int64).max)])
    found = executor_work(g.parent, g.end, seeds, _DEPTH, (data[0], data[1], g.category),
                          (q_rank, q_t))
    wakes = runs[tail], found[len(found) - len(tail):]
    found = found[:len(found) - len(tail)]
    hit = found >= 0
    i, dst, floor, src = i[hit], dst[hit], floor[hit], found[hit]
    ok = (g.end[src] > floor) & (g.resource[src] != g.resource[runs[i]])
    src, dst = src[ok], dst[ok]
    last = latest_per_target(src, dst, g.end)
    src, dst = src[last], dst[last]
    free = g.end_src[dst] < 0
    g.end_src[dst[free]], g.end_kind[dst[free]] = src[free], kind
    return wakes
