"""``prof.critical_path``: per step, the chain of events that bounds it.

Each host's dependency graph (:mod:`.graph`) is walked backwards from each step's end to its
start (:mod:`.walk`).  One row per segment of the path, latest last: ``host``, ``step``,
``order`` (0 at the step's start), ``start_us``, ``duration_us`` (the segment's time on the
path: segments cover the step end to end without overlap), ``resource`` (``plane / line``),
``category`` (as the step-time breakdown's, plus ``host_wait``: a host still blocked after
the device event it waited for ended, and ``idle``), ``kind`` (``event``: an event's own
time; ``wait``: an event waiting for another one, named in ``waited_on``; ``idle``: nothing
ran), ``name``, ``event_id`` (the row of ``prof.events``; -1 for idle), ``waited_on`` and
``waited_on_id``.  Summaries: :mod:`.path_summary`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from .graph import CATEGORIES, dependency_graph
from .walk import Walker

__all__ = ["ANALYSES", "CRITICAL_PATH_COLUMNS", "host_critical_path", "combine_critical_path",
           "empty_critical_path"]

CRITICAL_PATH_COLUMNS = ["host", "step", "order", "start_us", "duration_us", "resource",
                         "category", "kind", "name", "event_id", "waited_on", "waited_on_id"]


def empty_critical_path() -> pd.DataFrame:
    types = {"host": object, "step": "int64", "order": "int64", "start_us": "float64",
             "duration_us": "float64", "resource": object, "category": object, "kind": object,
             "name": object, "event_id": "int64", "waited_on": object, "waited_on_id": "int64"}
    return pd.DataFrame({c: pd.Series(dtype=types[c]) for c in CRITICAL_PATH_COLUMNS})


def _windows(steps: pd.DataFrame, shift_ps: int) -> tuple[np.ndarray, np.ndarray]:
    """(begin, end) ps of each step on the host's own axis."""
    begin = np.rint(steps.start_us.to_numpy(float) * 1e6).astype(np.int64) - shift_ps
    return begin, begin + np.rint(steps.duration_ms.to_numpy(float) * 1e9).astype(np.int64)


def host_critical_path(hd: HostData, shift_ps: int = 0, steps: pd.DataFrame | None = None,
                       launch_links: pd.DataFrame | None = None,
                       flow_links: pd.DataFrame | None = None,
                       replay_graph=None) -> pd.DataFrame:
    """One host's segments (``event_id``/``waited_on_id``: host rows); ``replay_graph``: the
    host's :class:`.replay_graph.ReplayGraph`, whose dependency graph it walks (built here
    when it is not given)."""
    if steps is None or steps.empty or not len(hd):
        return empty_critical_path()
    g = replay_graph.graph if replay_graph is not None else \
        dependency_graph(hd, launch_links, flow_links)
    if not len(g):
        return empty_critical_path()
    walker = Walker(g)
    begin, end = _windows(steps, shift_ps)
    segments, step_of, order = [], [], []
    for step, t0, t1 in zip(steps.index.tolist(), begin.tolist(), end.tolist()):
        path = walker.walk(t0, t1)[::-1]
        segments += path
        step_of += [step] * len(path)
        order += range(len(path))
    cols = {key: [getattr(s, field) for s in segments] for key, field in (
        ("start", "start"), ("end", "end"), ("resource", "resource"), ("category", "category"),
        ("kind", "kind"), ("node", "node"), ("waited", "waited_on"))}
    cols["step"], cols["order"] = step_of, order
    return _table(hd, g, cols, shift_ps)


def _table(hd: HostData, g, cols: dict, shift_ps: int) -> pd.DataFrame:
    if not cols["step"]:
        return empty_critical_path()
    start, end = np.asarray(cols["start"], np.int64), np.asarray(cols["end"], np.int64)
    node, waited = np.asarray(cols["node"], np.int64), np.asarray(cols["waited"], np.int64)
    row = np.where(node >= 0, g.rows[np.maximum(node, 0)], -1)
    wrow = np.where(waited >= 0, g.rows[np.maximum(waited, 0)], -1)
    names = np.where(row >= 0, hd.name_of(np.maximum(row, 0)), "idle").astype(object)
    wnames = np.where(wrow >= 0, hd.name_of(np.maximum(wrow, 0)), "").astype(object)
    resource = pd.Series(cols["resource"]).map(g.resource_names).to_numpy(object)
    return pd.DataFrame({
        "host": hd.name, "step": np.asarray(cols["step"], np.int64),
        "order": np.asarray(cols["order"], np.int64), "start_us": (start + shift_ps) / 1e6,
        "duration_us": (end - start) / 1e6, "resource": resource,
        "category": np.asarray(CATEGORIES, object)[np.asarray(cols["category"], np.int64)],
        "kind": np.asarray(cols["kind"], object), "name": names, "event_id": row,
        "waited_on": wnames, "waited_on_id": wrow})


def combine_critical_path(parts: dict, event_offsets: dict) -> pd.DataFrame:
    """Every host's segments, event ids as rows of ``prof.events``."""
    frames = []
    for host, part in parts.items():
        if len(part):
            offset = event_offsets[host]
            frames.append(part.assign(
                event_id=np.where(part.event_id >= 0, part.event_id + offset, -1),
                waited_on_id=np.where(part.waited_on_id >= 0, part.waited_on_id + offset, -1)))
    if not frames:
        return empty_critical_path()
    return pd.concat(frames, ignore_index=True)[CRITICAL_PATH_COLUMNS]


ANALYSES = (Analysis("critical_path", host=host_critical_path, combine=combine_critical_path,
                     host_needs=("steps", "replay_graph"), needs=("event_offsets",),
                     host_cost=25.0),)
