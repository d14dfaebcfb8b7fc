"""The critical path of one window (a step), walked backwards over a :class:`.graph.DepGraph`.

The walk holds a cursor (resource, time), starting at the step's end on the resource whose
activity ends there (a device before a host thread), and repeats until the step's start:

1. the innermost event ``k`` running on the resource just before the cursor is found;
2. if ``k``'s end waits for another event (``SYNC``: a host wait on the device; ``ELEMENT``
   or ``CONTEXT``: a consumer waiting for its producer, a function run for its executor's
   work) that ended inside ``k`` before the cursor and after ``k``'s last child, the rest of
   ``k`` is a ``wait`` segment and the cursor jumps to that event's end;
3. else, if a child of ``k`` ended before the cursor, ``k``'s own time since then is a
   segment and the cursor goes to the child's end;
4. else ``k``'s time since its start is a segment, and at its start: a nested event continues
   in its parent, or, when the event it waits for (its producer) ended inside the parent after
   the previous child, the parent's time since then is a ``wait`` segment and the cursor jumps
   there (a tf.data consumer waiting for its element); a top-level one continues where it
   waited longest: the previous event on its resource (the gap an ``idle`` segment) or the
   event its start waits for (its launch, its producer; the gap a ``wait`` segment), whichever
   ended later;
5. a resource with nothing running before the cursor is ``idle`` back to its last event.

Segments are cut to the step's window, so they cover it end to end without overlap; they may
lie on events of the previous step (asynchronous dispatch).  :func:`walk_windows` walks many
windows at once in C (``tfp_cp_walk``, ``_native/critical.c``: no Python per segment; at most
1,000,000 steps a window, 256 levels of nesting, 4096 events back to a lasting one);
:class:`Walker` answers single questions (the resource and the event a time belongs to) from
compact ``array.array`` copies of the graph's columns.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from ..._interrupt import helper_thread, in_this_run
from ..._native.kernels.critical_kernel import take_walks, walk_graph, walk_part
from .graph import (ELEMENT, HOST_WAIT, IDLE, INPUT, KERNEL_LAUNCH, LAUNCH, STREAM_WAIT, SYNC,
                    DepGraph)

__all__ = ["Walker", "walk_windows", "resource_spans", "beside", "on_helper", "SEGMENT_KINDS"]

SEGMENT_KINDS = ("event", "wait", "idle")  # a segment's kind code -> its name
_CODES = (ELEMENT, HOST_WAIT, IDLE, INPUT, KERNEL_LAUNCH, LAUNCH, STREAM_WAIT, SYNC)
_SPLIT_MIN_NODES = 1 << 22  # graphs this large walk their windows on two threads


def resource_spans(resource: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(resource keys ascending, first node, end node) of each resource's run of nodes: the
    first node of each key and the next key's first (as ``np.unique``), read from the runs
    when they come in ascending key order (a graph's always do)."""
    n = len(resource)
    cut = np.flatnonzero(resource[1:] != resource[:-1]) + 1 if n else np.zeros(0, np.int64)
    lo = np.concatenate(([0], cut)).astype(np.int64) if n else np.zeros(0, np.int64)
    keys = resource[lo]
    if len(keys) > 1 and not (keys[1:] > keys[:-1]).all():
        keys, lo = np.unique(resource, return_index=True)
        lo = lo.astype(np.int64)
    return keys, lo, np.append(lo[1:], n).astype(np.int64)


def walk_windows(g: DepGraph, t0, t1, threads: int | None = None) -> dict:
    """The segments of windows ``[t0[w], t1[w])`` of ``g``: {window, start, end (ps),
    resource, category, kind (code into :data:`SEGMENT_KINDS`), node, waited_on (-1: none)}
    arrays, each window's segments in time order (its start first), windows in order.
    ``threads``: 2 walks the later half of the windows on a helper thread beside this one
    (the same segments; None: 2 for a graph of millions of nodes on more than one core)."""
    nodes = {k: getattr(g, k) for k in ("begin", "end", "parent", "resource", "category",
                                        "is_device", "start_src", "start_kind", "end_src",
                                        "end_kind")}
    if len(nodes["is_device"]) != len(g):  # (a graph built without it: no device)
        nodes["is_device"] = np.zeros(len(g), bool)
    graph = walk_graph(nodes, resource_spans(np.asarray(g.resource)), np.asarray(_CODES))
    t0, t1 = np.asarray(t0, np.int64), np.asarray(t1, np.int64)
    if threads is None:
        threads = 2 if len(g) >= _SPLIT_MIN_NODES and (os.cpu_count() or 1) > 1 else 1
    half = len(t0) // 2 if threads > 1 else 0
    if not half:
        return take_walks([walk_part(graph, t0, t1)])
    with ThreadPoolExecutor(1) as pool:
        later = pool.submit(in_this_run(on_helper), walk_part, graph, t0[half:], t1[half:])
        parts = []
        try:
            parts.append(walk_part(graph, t0[:half], t1[:half]))
            parts.append(later.result())
        except BaseException:
            for part in parts:
                part.free()
            if len(parts) < 2 and later.exception() is None:
                later.result().free()
            raise
    return take_walks(parts)


@contextmanager
def beside(when: bool, fn, *args):
    """``fn(*args)`` computed on a helper thread (:func:`on_helper`, under the run's cancel
    token) beside the with-block when ``when``, else where it is asked for: yields the
    callable that gives its answer (the block leaves once the helper has ended)."""
    if not when:
        yield lambda: fn(*args)
        return
    with ThreadPoolExecutor(1) as pool:
        yield pool.submit(in_this_run(on_helper), fn, *args).result


def on_helper(fn, *args):
    """``fn(*args)`` on a helper thread beside the task's, counted as one while it runs (see
    _interrupt.helper_thread); submit it as ``in_this_run(on_helper)``: stopped with the
    run it works for."""
    with helper_thread():
        return fn(*args)


def _compact(values: np.ndarray, code: str = "q") -> array:
    out = array(code)
    out.frombytes(np.ascontiguousarray(values, np.int64 if code == "q" else np.int8).tobytes())
    return out


class Walker:
    """Walks windows of one graph (its columns as compact arrays; each resource's nodes are
    one run of them, by begin)."""

    def __init__(self, g: DepGraph):
        self.g = g
        self.begin, self.end = _compact(g.begin), _compact(g.end)
        self.parent, self.res = _compact(g.parent), _compact(g.resource)
        self.cat, self.dev = _compact(g.category, "b"), _compact(g.is_device, "b")
        self.start_src, self.start_kind = _compact(g.start_src), _compact(g.start_kind, "b")
        self.end_src, self.end_kind = _compact(g.end_src), _compact(g.end_kind, "b")
        keys, lo = np.unique(g.resource, return_index=True)
        hi = np.append(lo[1:], len(g)).astype(np.int64)
        self.span = {int(k): (int(a), int(b)) for k, a, b in zip(keys, lo, hi)}

    def _last_before(self, r: int, t: int) -> int:
        """The last node of resource ``r`` (in order) that starts before ``t`` (-1)."""
        lo, hi = self.span[r]
        i = bisect_left(self.begin, t, lo, hi) - 1
        return i if i >= lo else -1

    def innermost(self, r: int, t: int) -> int:
        """The innermost node on ``r`` running just before ``t`` (-1: none)."""
        k = self._last_before(r, t)
        for _ in range(256):
            if k < 0 or self.end[k] >= t:
                return k
            k = self.parent[k]
        return -1

    def _previous_end(self, r: int, t: int) -> int | None:
        """End of the last top-level event of ``r`` that started before ``t`` (None);
        instants (a thread pool's ``StartRegion`` markers) are passed over: they hold no
        time, the event after one waits for what woke the thread."""
        k, lo = self._last_before(r, t), self.span[r][0]
        for _ in range(4096):
            if k < lo:
                return None
            if self.parent[k] >= 0:
                k = self.parent[k]
            elif self.end[k] == self.begin[k]:
                k -= 1
            else:
                return min(self.end[k], t)
        return None

    def start_resource(self, t: int) -> int:
        """The resource whose activity ends at ``t``: of those running just before ``t``, the
        event ending first (a device first on ties); else the last to have run."""
        best, best_key = None, None
        for r in self.span:
            k = self.innermost(r, t)
            if k >= 0:
                key = (1, -self.end[k], self.dev[k])
            else:
                prev = self._previous_end(r, t)
                key = (0, prev if prev is not None else -(1 << 62), False)
            if best_key is None or key > best_key:
                best, best_key = r, key
        return best
