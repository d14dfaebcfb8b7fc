"""The trace viewer's critical path: the chain of events that bounds the step chosen in the
step menu (``prof.critical_path``, :mod:`tfprof_nb.analysis.critical`), as timeline rows.

The browser asks with ``critical_step`` (a row of the step menu, -1: off) and gets
``{"step", "nodes", "more", "sentence"}``: the path's events in order (consecutive segments of
one event merged: ``row``, ``start`` and ``dur`` of its part on the path in us, ``name``,
``category``), at most MAX_NODES, and the step's sentence from its segments.  It outlines the
nodes and draws an arrow from each to the next (``js/src/timeline/critical.ts``).  A page
without a kernel carries the first steps' answers (:func:`offline_paths`, the trait
``critical_paths``) and the same code draws them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.critical.path_summary import critical_path_summary, untold_on
from ..analysis.findings.overview import OVERVIEW_PATH_MAX_EVENTS

__all__ = ["MAX_NODES", "OFFLINE_NODES", "critical_answer", "offline_paths"]

MAX_NODES = 2000
# the nodes of every step's path a page without a kernel carries, at most (about 100 packed
# bytes each, names and all): the first steps' paths, whole, as far as they reach
OFFLINE_NODES = 10000


def _merged(seg: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """Consecutive segments of one timeline row as one node (start, end, first category)."""
    seg = seg.assign(row=rows, end=seg.start_us + seg.duration_us)
    seg = seg[seg.row >= 0]
    new = np.ones(len(seg), bool)
    new[1:] = seg.row.to_numpy()[1:] != seg.row.to_numpy()[:-1]
    run = np.cumsum(new)
    return seg.groupby(run).agg(row=("row", "first"), start=("start_us", "first"),
                                end=("end", "last"), name=("name", "first"),
                                category=("category", "first"))


def _answer(seg: pd.DataFrame, step: str, row_of_event: np.ndarray, step_index: int,
            max_nodes: int) -> dict:
    """The answer for one step's segments (in order): its nodes, how many more, its sentence
    (``step``: the step as the menu names it, "step 1498" or on a pod
    "127.0.0.1_24214 step 1498")."""
    ids = seg.event_id.to_numpy(np.int64)
    rows = np.where(ids >= 0, row_of_event[np.maximum(ids, 0)], -1) if len(ids) else ids
    nodes = _merged(seg, rows)
    sentence = critical_path_summary(seg).attrs.get("sentence", "")
    return {"step": int(step_index),
            "nodes": [{"row": int(r.row), "start": float(r.start), "dur": float(r.end - r.start),
                       "name": str(r.name), "category": str(r.category)}
                      for r in nodes.head(max_nodes).itertuples()],
            "more": max(len(nodes) - max_nodes, 0),
            "sentence": sentence.replace("On its critical path, the step is bound by",
                                         f"On its critical path, {step} is bound by")}


def critical_answer(prof, steps: pd.DataFrame | None, row_of_event: np.ndarray,
                    step_index: int) -> dict:
    """The path of the step at ``step_index`` (a row of ``steps``) as timeline nodes."""
    if steps is None or not 0 <= step_index < len(steps):
        return {"step": int(step_index), "nodes": [], "more": 0, "sentence": ""}
    untold = untold_on(prof.result("environment"))
    if untold:
        return {"step": int(step_index), "nodes": [], "more": 0, "sentence": untold}
    host, step = steps["host"].iloc[step_index], steps.index[step_index]
    cp = prof.critical_path
    seg = cp[(cp.host == host) & (cp.step == step)].sort_values("order")
    return _answer(seg, _step_words(steps, host, step), row_of_event, step_index, MAX_NODES)


def _step_words(steps: pd.DataFrame, host, step) -> str:
    """"step 1498", or where the steps are of several hosts "127.0.0.1_24214 step 1498" (each
    host has a step 1498): the step as the step menu names it."""
    return f"{host} step {step}" if steps["host"].nunique() > 1 else f"step {step}"


def offline_paths(prof, steps: pd.DataFrame | None, row_of_event: np.ndarray) -> dict:
    """Every step's answer for a page without a kernel, in step order while they fit
    OFFLINE_NODES nodes in all: ``{"paths": {step index (text): answer}, "steps": how many
    steps there are}`` (the page says which steps it holds the path of).  A profile over
    OVERVIEW_PATH_MAX_EVENTS events whose critical path is not computed yet gets none, and a
    ``reason`` the page shows instead: the view's first state does not wait for it; on TPUs
    none either, the reason saying why (:func:`untold_on`)."""
    if steps is None or not len(steps):
        return {"paths": {}, "steps": 0}
    untold = untold_on(prof.result("environment"))
    if untold:
        return {"paths": {}, "steps": len(steps), "reason": untold}
    if prof.n_events > OVERVIEW_PATH_MAX_EVENTS and not prof._results.ready("critical_path"):
        return {"paths": {}, "steps": len(steps), "reason": (
            f"This page holds no critical path: for {prof.n_events / 1e6:.1f} M events it was "
            "left out so the view would not wait for it (a running kernel finds any step's; "
            "computed before the view is shown, prof.critical_path is carried here).")}
    cp = prof.critical_path.sort_values(["host", "step", "order"], kind="stable")
    groups = {key: seg for key, seg in cp.groupby(["host", "step"], sort=False)}
    paths, left = {}, OFFLINE_NODES
    for i, (host, step) in enumerate(zip(steps["host"], steps.index)):
        if left <= 0:
            break
        seg = groups.get((host, step), cp.iloc[:0])
        paths[str(i)] = _answer(seg, _step_words(steps, host, step), row_of_event, i,
                                min(MAX_NODES, left))
        left -= len(paths[str(i)]["nodes"])
    return {"paths": paths, "steps": len(steps)}
