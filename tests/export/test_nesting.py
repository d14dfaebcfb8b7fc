"""Event nesting by time on each line (the native ``nest_loose`` behind the exports' tracks)
against a brute-force reference on real profiles."""

from __future__ import annotations

import numpy as np
import pandas as pd

import tfprof_nb as tp
from tfprof_nb._native.kernels import nest_loose


def event_nesting(line: np.ndarray, start_ps: np.ndarray, duration_ps: np.ndarray) -> pd.DataFrame:
    """Parent (-1 for roots), depth and self time of each event (``line``: a line's code,
    unique across hosts and planes): an event is a child of the innermost earlier event on its
    line still open when it starts; self time is the duration less the children's."""
    duration = np.ascontiguousarray(duration_ps, dtype=np.int64)
    parent, depth, child_ps = nest_loose(np.asarray(line).astype(np.int32), start_ps, duration)
    return pd.DataFrame({"parent": parent.astype(np.int64), "depth": depth,
                         "self_ps": duration - child_ps},
                        index=pd.Index(np.arange(len(parent)), name="event"))


def _brute_force(line, start, dur):
    """Parent = the innermost (latest-starting, then shortest) event on the same line that
    contains the start, by the same ordering rules, in O(n^2) per line."""
    n = len(line)
    order = np.lexsort((-dur, start, line))
    rank = np.empty(n, int)
    rank[order] = np.arange(n)
    parent = np.full(n, -1)
    for i in range(n):
        best = -1
        for j in range(n):
            if j == i or line[j] != line[i] or rank[j] > rank[i]:
                continue
            if start[j] <= start[i] < start[j] + dur[j]:
                if best < 0 or rank[j] > rank[best]:
                    best = j
        parent[i] = best
    return parent


def _check(prof, limit_lines=40, max_events=400):
    ev = prof.events
    codes = ev["line"].cat.codes.to_numpy().astype(np.int64) + \
        ev["host"].cat.codes.to_numpy().astype(np.int64) * 100000
    nest = event_nesting(codes, ev.start_ps.to_numpy(), ev.duration_ps.to_numpy())
    checked = 0
    for code in np.unique(codes)[:limit_lines]:
        idx = np.flatnonzero(codes == code)[:max_events]
        ref = _brute_force(codes[idx], ev.start_ps.to_numpy()[idx], ev.duration_ps.to_numpy()[idx])
        # within the sample, parents that the reference found must match
        ours = nest.parent.to_numpy()[idx]
        mapped = np.where(ref >= 0, idx[np.maximum(ref, 0)], -1)
        keep = ours < idx.max() + 1  # parents inside the sample window
        assert np.array_equal(ours[keep], mapped[keep])
        checked += len(idx)
    assert checked > 500
    # self time: never negative, never above the duration
    assert (nest.self_ps >= 0).all()
    assert (nest.self_ps <= ev.duration_ps.to_numpy()).all()
    return nest


def test_nesting_matches_brute_force_cpu(cpu_file):
    nest = _check(tp.load(cpu_file))
    assert nest.depth.max() >= 2


def test_nesting_matches_brute_force_gpu(gpu_fixture_file):
    _check(tp.load(gpu_fixture_file))


def test_step_marker_contains_its_ops(cpu_file):
    prof = tp.load(cpu_file)
    ev = prof.events
    codes = ev["line"].cat.codes.to_numpy().astype(np.int64)
    nest = event_nesting(codes, ev.start_ps.to_numpy(), ev.duration_ps.to_numpy())
    steps = ev.index[ev.name == "train"]
    children = nest.index[np.isin(nest.parent, steps)]
    assert len(children) >= len(steps)
    total_child = ev.loc[children].groupby(nest.parent[children]).duration_ps.sum()
    assert (total_child <= ev.loc[total_child.index].duration_ps + 1).all()
