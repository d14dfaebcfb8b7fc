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
lie on events of the previous step (asynchronous dispatch).  Scalars are read from compact
``array.array`` copies of the graph's columns (8 bytes an event, fast to index; one walk step
is a few reads and a bisect).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from .graph import (ELEMENT, HOST_WAIT, IDLE, INPUT, KERNEL_LAUNCH, LAUNCH, STREAM_WAIT, SYNC,
                    DepGraph)

__all__ = ["Walker", "Segment"]

EVENT, WAIT, IDLE_KIND = "event", "wait", "idle"
_MAX_SEGMENTS = 1_000_000


@dataclass(slots=True)
class Segment:
    resource: int
    start: int  # ps
    end: int  # ps
    category: int
    kind: str  # EVENT, WAIT, IDLE_KIND
    node: int  # the event (-1: none)
    waited_on: int  # the node waited for (-1: none)


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

    def walk(self, t0: int, t1: int) -> list[Segment]:
        """The segments of window ``[t0, t1)``, latest first."""
        out: list[Segment] = []
        if not self.span or t1 <= t0:
            return out
        r, t = self.start_resource(t1), t1
        for _ in range(_MAX_SEGMENTS):
            if t <= t0:
                break
            r, t = self._step(r, t, t0, out)
        for s in out:
            s.start = max(s.start, t0)
        return [s for s in out if s.end > s.start]

    def _step(self, r: int, t: int, t0: int, out: list) -> tuple[int, int]:
        k = self.innermost(r, t)
        if k < 0:
            prev = self._previous_end(r, t)
            start = t0 if prev is None else max(prev, t0)
            out.append(Segment(r, start, t, IDLE, IDLE_KIND, -1, -1))
            return r, start
        src = self.end_src[k]
        child = self._last_child(r, t, k)
        if src >= 0 and self.begin[k] < self.end[src] <= t and \
                (child < 0 or self.end[child] <= self.end[src]):
            cat = HOST_WAIT if self.end_kind[k] == SYNC else \
                INPUT if self.end_kind[k] == ELEMENT else self.cat[k]
            out.append(Segment(r, self.end[src], t, cat, WAIT, k, src))
            return self.res[src], self.end[src]
        if child >= 0:
            out.append(Segment(r, self.end[child], t, self.cat[k], EVENT, k, -1))
            return r, self.end[child]
        out.append(Segment(r, self.begin[k], t, self.cat[k], EVENT, k, -1))
        return self._at_start(r, k, out)

    def _last_child(self, r: int, t: int, k: int) -> int:
        """The child of ``k`` that ended last before ``t`` (-1: none started)."""
        j = self._last_before(r, t)
        for _ in range(256):
            if j < 0 or j == k:
                return -1
            if self.parent[j] == k:
                return j if self.end[j] < t else -1
            j = self.parent[j]
        return -1

    def _at_start(self, r: int, k: int, out: list) -> tuple[int, int]:
        """Where the walk goes from the start of node ``k`` (see the module doc, 4)."""
        b = self.begin[k]
        if self.parent[k] >= 0:
            return self._nested_start(r, k, out)
        prev = self._previous_end(r, b)
        src = self.start_src[k]
        if src >= 0 and self.begin[src] <= b:
            at = min(self.end[src], b)  # (a kernel may start before its launch returns)
            if prev is None or at > prev:
                kind = self.start_kind[k]
                cat = KERNEL_LAUNCH if kind == LAUNCH else INPUT if kind == ELEMENT else \
                    self.cat[src] if kind == STREAM_WAIT else IDLE
                out.append(Segment(r, at, b, cat, WAIT, k, src))
                return self.res[src], at
        if prev is None:
            return r, b  # (the next step finds nothing before: idle to the window's start)
        out.append(Segment(r, prev, b, IDLE, IDLE_KIND, -1, -1))
        return r, prev

    def _nested_start(self, r: int, k: int, out: list) -> tuple[int, int]:
        """At the start of nested ``k``: its parent waited for ``k``'s producer when that ended
        after the parent's start and its previous child (a tf.data consumer's ``Iterator::``
        event waiting for the element); else the walk continues in the parent."""
        b, p, src = self.begin[k], self.parent[k], self.start_src[k]
        if src < 0 or self.start_kind[k] == LAUNCH:
            return r, b
        j = self._last_before(r, b)
        for _ in range(256):
            if j < 0 or j == p or self.parent[j] == p:
                break
            j = self.parent[j]
        floor = self.begin[p] if j < 0 or j == p else min(self.end[j], b)
        at = self.end[src]
        if not floor < at <= b:
            return r, b
        kind = self.start_kind[k]
        cat = INPUT if kind == ELEMENT else HOST_WAIT if kind == SYNC else self.cat[p]
        out.append(Segment(r, at, b, cat, WAIT, k, src))
        return self.res[src], at
