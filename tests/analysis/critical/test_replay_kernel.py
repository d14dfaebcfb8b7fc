"""replay.c's visit gives what the Python loop it replaced gave (Kahn's algorithm over lists,
kept here as the oracle): on random constraint graphs (ties, unreachable and cyclic parts, gaps
that are not finite), on a real capture's replay constraints, and nothing at all."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb._native.kernels.critical_kernel import replay_visit
from tfprof_nb.analysis.critical.replay import _constraints, _kept_gaps

DATA = Path(__file__).resolve().parents[2] / "data"


def _visit_python(times, src, dst, kept):
    """The loop replay.py ran before replay.c: a stack of points whose sources are known."""
    n = len(times)
    order = np.argsort(src, kind="stable")
    ptr = np.searchsorted(src[order], np.arange(n + 1)).tolist()
    out_dst, out_gap = dst[order].tolist(), kept[order].tolist()
    indeg = np.bincount(dst, minlength=n)
    new = np.where(indeg > 0, -np.inf, times).tolist()
    indeg = indeg.tolist()
    stack = [p for p in range(n) if indeg[p] == 0]
    while stack:
        p = stack.pop()
        v = new[p]
        for e in range(ptr[p], ptr[p + 1]):
            d = out_dst[e]
            c = v + out_gap[e]
            if c > new[d]:
                new[d] = c
            indeg[d] -= 1
            if indeg[d] == 0:
                stack.append(d)
    out = np.asarray(new, np.float64)
    stuck = ~np.isfinite(out) | (np.asarray(indeg) > 0)
    out[stuck] = times[stuck]
    return out, int(stuck.sum())


def _same(times, src, dst, gap):
    got, left = replay_visit(times, src, dst, gap)
    want, want_left = _visit_python(times, src, dst, gap)
    assert left == want_left
    assert got.tobytes() == want.tobytes()  # (bit for bit: each sum made once, as there)
    return left


@pytest.mark.parametrize("seed", range(6))
def test_random_constraints_are_the_python_loop(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    times = rng.integers(0, 10**9, n).astype(np.float64)
    m = 9000
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    src, dst = np.minimum(a, b), np.maximum(a, b)  # forward edges: a DAG ...
    keep = src != dst
    src, dst = src[keep], dst[keep]
    gap = rng.normal(0, 1e6, len(src)).round()
    gap[:40] = gap[40:80]  # (ties between constraints into one point)
    if seed % 2:  # ... with a cycle in it, and what comes after the cycle
        src = np.append(src, [2500, 2600, 2700])
        dst = np.append(dst, [2600, 2700, 2500])
        gap = np.append(gap, [1.0, 2.0, 3.0])
    if seed == 4:  # gaps that are not finite leave their targets as measured
        gap[100:103] = [np.inf, -np.inf, np.nan]
    left = _same(times, src, dst, gap)
    assert (left > 0) == bool(seed % 2 or seed == 4)


def test_a_real_captures_replay():
    prof = tp.load(DATA / "jax_h200_inputbound.xplane.pb")
    (rg,) = [r for r in prof.result("replay_graph").values() if r is not None]
    g = rg.graph
    times = np.empty(2 * len(g), np.float64)
    times[0::2], times[1::2] = g.begin, g.end
    factor = np.where(np.arange(len(g)) % 3 == 0, 0.5, 1.0)
    src, dst, scale, is_launch = _constraints(g, factor, 0.0)
    kept, keep = _kept_gaps(times, src, dst, scale, is_launch)
    assert keep.sum() > len(g)
    assert _same(times, src[keep], dst[keep], kept[keep]) == 0


def test_no_constraints_and_bad_points():
    times = np.array([3.0, 1.0, 2.0])
    out, left = replay_visit(times, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    assert out.tolist() == [3.0, 1.0, 2.0] and left == 0
    out, left = replay_visit(np.zeros(0), [], [], [])
    assert len(out) == 0 and left == 0
    with pytest.raises(ValueError, match="points"):
        replay_visit(times, [0], [3], [1.0])
    with pytest.raises(ValueError, match="one source"):
        replay_visit(times, [0, 1], [1], [1.0])
