"""``replay_graph``: each host's dependency graph as a partial, for ``prof.what_if``.

One :class:`ReplayGraph` per host: the :class:`.graph.DepGraph`, each node's name, the host's
time shift and its steps' windows (ps on the host's own axis), so replays run without the
host's data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis, parts_dict
from .path import _windows
from .graph import DepGraph, dependency_graph

__all__ = ["ANALYSES", "ReplayGraph", "host_replay_graph"]


@dataclass
class ReplayGraph:
    graph: DepGraph
    names: np.ndarray  # object: each node's event name
    event_rows: np.ndarray  # int64: each node's row of the host (prof.events: + offset)
    shift_ps: int
    steps: np.ndarray  # int64 step ids
    t0: np.ndarray  # int64 ps, each step's start on the host's axis
    t1: np.ndarray  # int64 ps, each step's end


def host_replay_graph(hd: HostData, shift_ps: int = 0, steps: pd.DataFrame | None = None,
                      launch_links: pd.DataFrame | None = None,
                      flow_links: pd.DataFrame | None = None) -> ReplayGraph | None:
    if steps is None or steps.empty or not len(hd):
        return None
    g = dependency_graph(hd, launch_links, flow_links)
    if not len(g):
        return None
    t0, t1 = _windows(steps, shift_ps)
    names = hd.name_of(g.rows).astype(object) if len(g) else np.zeros(0, object)
    return ReplayGraph(g, names, g.rows.astype(np.int64), int(shift_ps),
                       np.asarray(steps.index, np.int64), t0, t1)


ANALYSES = (Analysis("replay_graph", host=host_replay_graph, combine=parts_dict,
                     host_needs=("steps", "launch_links", "flow_links"), host_cost=30.0),)
