"""The Python critical path walk the native one (``tfp_cp_walk``) replaced: the reference
the tests compare it with, segment by segment (the rules: :mod:`tfprof_nb.analysis.critical.walk`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tfprof_nb.analysis.critical.graph import (ELEMENT, HOST_WAIT, IDLE, INPUT, KERNEL_LAUNCH,
                                               LAUNCH, STREAM_WAIT, SYNC)
from tfprof_nb.analysis.critical.walk import Walker

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


class ReferenceWalker(Walker):
    """:class:`Walker` with the Python walk of one window."""

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
