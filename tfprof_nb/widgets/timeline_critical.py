"""The trace viewer's critical path: the chain of events that bounds the step chosen in the
step menu (``prof.critical_path``, :mod:`tfprof_nb.analysis.critical`), as timeline rows.

The browser asks with ``critical_step`` (a row of the step menu, -1: off) and gets
``{"step", "nodes", "more", "sentence"}``: the path's events in order (consecutive segments of
one event merged: ``row``, ``start`` and ``dur`` of its part on the path in us, ``name``,
``category``), at most MAX_NODES, and the step's sentence from its segments.  It outlines the
nodes and draws an arrow from each to the next (``js/src/timeline/critical.ts``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.critical.path_summary import critical_path_summary

__all__ = ["MAX_NODES", "critical_answer"]

MAX_NODES = 2000


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


def critical_answer(prof, steps: pd.DataFrame | None, row_of_event: np.ndarray,
                    step_index: int) -> dict:
    """The path of the step at ``step_index`` (a row of ``steps``) as timeline nodes."""
    out = {"step": int(step_index), "nodes": [], "more": 0, "sentence": ""}
    if steps is None or not 0 <= step_index < len(steps):
        return out
    host, step = steps["host"].iloc[step_index], steps.index[step_index]
    cp = prof.critical_path
    seg = cp[(cp.host == host) & (cp.step == step)].sort_values("order")
    ids = seg.event_id.to_numpy(np.int64)
    rows = np.where(ids >= 0, row_of_event[np.maximum(ids, 0)], -1) if len(ids) else ids
    nodes = _merged(seg, rows)
    out["nodes"] = [{"row": int(r.row), "start": float(r.start), "dur": float(r.end - r.start),
                     "name": str(r.name), "category": str(r.category)}
                    for r in nodes.head(MAX_NODES).itertuples()]
    out["more"] = max(len(nodes) - MAX_NODES, 0)
    sentence = critical_path_summary(seg).attrs.get("sentence", "")
    out["sentence"] = sentence.replace("The steps are bound by", f"Step {step} is bound by") \
        .replace(" (their critical paths)", " (its critical path)")
    return out
