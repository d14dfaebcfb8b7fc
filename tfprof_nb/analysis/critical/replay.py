"""A replay of one host's :class:`.graph.DepGraph` with some durations scaled.

Each node has two points, its start and its end.  The constraints between points are:

* start of ``n``: the previous node with the same resource and parent (its end; for top-level
  nodes the graph's ``ORDER`` edge, for nested ones the sibling before it), the parent's
  start (``NEST_BEGIN``) and ``start_src`` (``LAUNCH``: the launch's start; ``CONTEXT`` /
  ``ELEMENT``: the producer's end, its start when ``n`` started while it ran);
* end of ``n``: its own start, the end of each child (``NEST_END``) and ``end_src``
  (``SYNC``, ``ELEMENT``, ``CONTEXT``).

Each constraint has a measured gap (target time - source time).  For every point the
*binding* constraints are those whose source point was measured latest (what it waited
for); they keep their gap, the others only their order (``min(gap, 0)``, a launch its
median binding latency at most: a kernel queued behind another starts once the stream is
free, not a queueing delay later).  The replayed time of a point is the latest of
``source's replayed time + kept gap`` over its constraints; a point with no constraint (the
first event of a resource) keeps its measured time.  With no scaling every point replays to
its measured time.

Scaling ``n`` by ``f`` multiplies the gaps that are ``n``'s own time: a leaf's duration, a
parent's time before its first child, between children and after its last child.  The
factor for ``idle`` multiplies the gaps between consecutive top-level events of a resource
(untraced host Python between events, a stream's idle time).  Gaps on launch, flow and wait
edges (latencies) are never scaled.

The points are visited in a topological order (Kahn's algorithm in C: replay.c, a few
nanoseconds an edge); points left on a cycle (never seen on captures) keep their measured
times and are counted in :attr:`Replay.unresolved`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._native.kernels.critical_kernel import replay_visit
from .graph import LAUNCH, DepGraph

__all__ = ["Replay", "replay", "siblings"]


@dataclass
class Replay:
    begin: np.ndarray  # float64 ps, replayed start per node
    end: np.ndarray  # float64 ps, replayed end per node
    unresolved: int  # points left on a cycle (kept as measured)


def siblings(g: DepGraph) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) pairs of nodes with the same resource and parent, in graph order."""
    order = np.lexsort((np.arange(len(g)), g.parent, g.resource))
    same = (g.resource[order[1:]] == g.resource[order[:-1]]) & \
        (g.parent[order[1:]] == g.parent[order[:-1]])
    return order[:-1][same], order[1:][same]


def _constraints(g: DepGraph, node_factor: np.ndarray, idle_factor: float):
    """(src point, dst point, gap scale, is launch) of every constraint (points: 2n, 2n+1)."""
    n = np.arange(len(g))
    child = np.flatnonzero(g.parent >= 0)
    prev, nxt = siblings(g)
    has_s, has_e = np.flatnonzero(g.start_src >= 0), np.flatnonzero(g.end_src >= 0)
    launch = g.start_kind[has_s] == LAUNCH
    inside = g.end[g.start_src[has_s]] > g.begin[has_s]  # (scheduled from inside its source)
    s_src = np.where(launch | inside, 2 * g.start_src[has_s], 2 * g.start_src[has_s] + 1)
    p_prev = g.parent[nxt]
    sib_scale = np.where(p_prev >= 0, node_factor[np.maximum(p_prev, 0)], idle_factor)
    ones = np.ones
    parts = [(2 * prev + 1, 2 * nxt, sib_scale, np.zeros(len(nxt), bool)),
             (2 * g.parent[child], 2 * child, node_factor[g.parent[child]],
              np.zeros(len(child), bool)),
             (s_src, 2 * has_s, ones(len(has_s)), launch),
             (2 * n, 2 * n + 1, node_factor, np.zeros(len(n), bool)),
             (2 * child + 1, 2 * g.parent[child] + 1, node_factor[g.parent[child]],
              np.zeros(len(child), bool)),
             (2 * g.end_src[has_e] + 1, 2 * has_e + 1, ones(len(has_e)),
              np.zeros(len(has_e), bool))]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))


def _kept_gaps(times, src, dst, scale, is_launch):
    """(kept gap per constraint, mask of constraints kept): binding ones keep their gap
    (scaled), the others their order."""
    gap = times[dst] - times[src]
    latest = np.full(len(times), -np.inf)
    np.maximum.at(latest, dst, times[src])
    binding = times[src] >= latest[dst]
    floor = np.zeros(len(src))
    launch_gaps = gap[binding & is_launch]
    if len(launch_gaps):
        floor[is_launch] = max(float(np.median(launch_gaps)), 0.0)
    kept = np.where(binding, gap * scale, np.minimum(gap, floor))
    return kept, binding | (gap >= 0)


def replay(g: DepGraph, node_factor: np.ndarray | None = None,
           idle_factor: float = 1.0) -> Replay:
    """Replayed start and end of every node (see the module doc)."""
    if node_factor is None:
        node_factor = np.ones(len(g))
    times = np.empty(2 * len(g), np.float64)
    times[0::2], times[1::2] = g.begin, g.end
    src, dst, scale, is_launch = _constraints(g, np.asarray(node_factor, float), idle_factor)
    kept, keep = _kept_gaps(times, src, dst, scale, is_launch)
    src, dst, kept = src[keep], dst[keep], kept[keep]
    new, left = replay_visit(times, src, dst, kept)
    return Replay(new[0::2], new[1::2], left)
