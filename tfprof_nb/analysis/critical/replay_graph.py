"""``replay_graph``: each host's dependency graph as a partial, for ``prof.what_if``.

One :class:`ReplayGraph` per host: the :class:`.graph.DepGraph`, each node's name (its code
into the host's table of distinct names: names are resolved only for the nodes asked about),
the host's time shift and its steps' windows (ps on the host's own axis), so replays run
without the host's data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis, parts_dict
from .path import _windows, names_of
from .graph import DepGraph, EveryRow, dependency_graph

__all__ = ["ANALYSES", "ReplayGraph", "host_replay_graph"]


@dataclass
class ReplayGraph:
    graph: DepGraph
    name_codes: np.ndarray  # each node's event name: its code into name_table
    name_table: np.ndarray  # object: the host's distinct event names
    event_rows: np.ndarray  # int64 (or EveryRow): each node's row of the host (prof.events:
    # + offset)
    shift_ps: int
    steps: np.ndarray  # int64 step ids
    t0: np.ndarray  # int64 ps, each step's start on the host's axis
    t1: np.ndarray  # int64 ps, each step's end

    def name_of(self, nodes: np.ndarray, none: str = "") -> np.ndarray:
        """Object array: the event name of each node, ``none`` where it is -1."""
        return names_of(self.name_table, self.name_codes, np.asarray(nodes, np.int64), none)

    def nodes_named(self, name: str) -> np.ndarray:
        """The nodes whose event is named ``name``, in order."""
        return np.flatnonzero(np.isin(self.name_codes, np.flatnonzero(self.name_table == name)))


def host_replay_graph(hd: HostData, shift_ps: int = 0, steps: pd.DataFrame | None = None,
                      launch_links: pd.DataFrame | None = None,
                      flow_links: pd.DataFrame | None = None) -> ReplayGraph | None:
    if steps is None or steps.empty or not len(hd):
        return None
    g = dependency_graph(hd, launch_links, flow_links)
    if not len(g):
        return None
    t0, t1 = _windows(steps, shift_ps)
    if isinstance(g.rows, EveryRow):  # (node i is row i: the host's columns themselves)
        codes, rows = hd.name_code, g.rows
    else:
        codes, rows = hd.name_code[g.rows], np.asarray(g.rows, np.int64)
    return ReplayGraph(g, codes, hd.names, rows, int(shift_ps),
                       np.asarray(steps.index, np.int64), t0, t1)


ANALYSES = (Analysis("replay_graph", host=host_replay_graph, combine=parts_dict,
                     host_needs=("steps", "launch_links", "flow_links"), host_cost=30.0),)
