"""A bounded buffer's producer waiting for its consumer (tf.data's back-pressure).

tf.data's ``prefetch`` (and the other stages that run ahead) fill a buffer of a few elements
on their own thread and stop when it is full: the next element is made only once a consumer
has taken one.  The trace shows the element links (``PrefetchProduce`` -> ``PrefetchConsume``,
:mod:`..trace.flow_links`) but not the slot a consumer frees, so without this edge a replay
keeps each production at its measured time and a step made faster still waits for an
element that was made late only because the buffer was full.

The edge: on each thread whose events made elements, a top-level event that nothing else
starts waits for the last consumer of that thread's elements to start before it (its end
when it ended before, else its start: the consumer was still running).  Where the producer
was not held back (it started right after its previous event), the thread's order is the
latest constraint and the replay keeps that instead (see :mod:`.replay`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["add_back_pressure"]


def _consumers(g, element_kind: int) -> tuple[np.ndarray, np.ndarray]:
    """(consumer node, its producer node) of every element link."""
    by_start = np.flatnonzero(g.start_kind == element_kind)
    by_start = by_start[g.start_src[by_start] >= 0]
    by_end = np.flatnonzero(g.end_kind == element_kind)
    by_end = by_end[g.end_src[by_end] >= 0]
    return (np.concatenate([by_start, by_end]),
            np.concatenate([g.start_src[by_start], g.end_src[by_end]]))


def add_back_pressure(g, element_kind: int) -> None:
    """Sets ``start_src`` (kind ``element_kind``) of each producer thread's free top-level
    events to the last consumer of its elements that started before them."""
    consumer, producer = _consumers(g, element_kind)
    for r in np.unique(g.resource[producer]).tolist():
        mine = consumer[g.resource[producer] == r]
        mine = np.unique(mine)
        mine = mine[np.argsort(g.begin[mine], kind="stable")]
        lo, hi = np.searchsorted(g.resource, r, "left"), np.searchsorted(g.resource, r, "right")
        span = slice(lo, hi)  # (the resource's run of nodes: they come sorted by resource)
        free = lo + np.flatnonzero((g.parent[span] < 0) & (g.start_src[span] < 0)
                                   & ~g.is_device[span])
        at = np.searchsorted(g.begin[mine], g.begin[free], side="left") - 1
        ok = at >= 0
        src, dst = mine[at[ok]], free[ok]
        other = g.resource[src] != r
        g.start_src[dst[other]], g.start_kind[dst[other]] = src[other], element_kind
