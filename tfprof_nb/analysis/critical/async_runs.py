"""The thread that ran a function asynchronously waits for its work to end.

``InstantiatedCapturedFunction::RunAsync`` (a tf.data map's function, run for an element)
returns at once: the function's ops run on tf.data's thread pool (the executor's events carry
the run's step id, :mod:`.executor_waits`) and its last event there is the done callback,
which wakes whoever waits for the element.  A sequential map's runner thread sleeps until the
element is done; a parallel one's when too many are in flight.  So the first event of the
run's thread to start once the work's last event has started, where the thread was idle when
that event ended, was woken by it: its start waits for that event (kind ``context``; from its
start where it still ran then), unless it already waits for something that ended later.
Without the edge its wait reads as a gap with no traced event (Keras 3 over a plain ``.map()``:
81% of the path), where it is the map's work (input).
"""

from __future__ import annotations

import numpy as np

from ..._native.kernels.critical_kernel import latest_per_target
from ..._native.kernels.order_kernel import argsort

__all__ = ["ASYNC_RUN", "wake_after_async_runs"]

ASYNC_RUN = "InstantiatedCapturedFunction::RunAsync"


def _next_top_level(g, resource: int, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """On ``resource`` (nodes sorted by resource, begin): for each time in ``t``, the first
    top-level node starting at or after it (-1 where there is none) and the end of the
    top-level node before that one (the least int64 where there is none)."""
    keys = np.array([resource, resource + 1], g.resource.dtype)  # (not an int64 copy of it)
    lo, hi = np.searchsorted(g.resource, keys)
    top = lo + np.flatnonzero(g.parent[lo:hi] < 0)
    if not len(top):
        return np.full(len(t), -1, np.int64), np.full(len(t), np.iinfo(np.int64).min)
    order = argsort(t)  # (sorted keys search a long array at a fraction of the cost)
    at = np.empty(len(t), np.int64)
    at[order] = np.searchsorted(g.begin[top], t[order], side="left")
    found = at < len(top)
    nxt = np.where(found, top[np.minimum(at, len(top) - 1)], -1)
    before = np.where(at > 0, g.end[top[np.maximum(at - 1, 0)]], np.iinfo(np.int64).min)
    return nxt, before


def wake_after_async_runs(g, runs: np.ndarray, work: np.ndarray, kind: int) -> None:
    """Start edges from each async run's last work event (``work``: a node per run of
    ``runs``, -1: none found) to the event that its end woke on the run's thread (see the
    module doc), in place; set after the graph's other start edges (a producer's wait for
    the consumer, when its buffer was full), so that the later of two waits wins."""
    ok = work >= 0
    runs, work = runs[ok], work[ok]
    ok = g.resource[work] != g.resource[runs]
    runs, work = runs[ok], work[ok]
    if not len(runs):
        return
    src, dst = [], []
    resource = g.resource[runs]
    order = np.argsort(resource, kind="stable")  # (the runs by resource, once)
    runs, work, resource = runs[order], work[order], resource[order]
    bounds = np.flatnonzero(np.diff(resource)) + 1
    for lo, hi in zip(np.r_[0, bounds].tolist(), np.r_[bounds, len(resource)].tolist()):
        mine = work[lo:hi]
        # (from the run's end: never the run's own enclosing event)
        since = np.maximum(g.begin[mine], g.end[runs[lo:hi]])
        nxt, before = _next_top_level(g, int(resource[lo]), since)
        woke = (nxt >= 0) & (before <= g.end[mine])  # (the thread idle when the work ended)
        src.append(mine[woke])
        dst.append(nxt[woke])
    src, dst = np.concatenate(src), np.concatenate(dst)
    if not len(src):
        return
    last = latest_per_target(src, dst, g.end)
    src, dst = src[last], dst[last]
    waits = g.start_src[dst]
    later = (waits >= 0) & (g.end[np.maximum(waits, 0)] >= g.end[src])
    src, dst = src[~later], dst[~later]
    g.start_src[dst], g.start_kind[dst] = src, kind
