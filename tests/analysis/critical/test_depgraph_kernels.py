"""depgraph.c's helpers give what the numpy they replace gave: the level-by-level owner pass,
the lexsort that keeps each target's latest-ending source, pandas' backward merge_asof by id;
on random inputs (ties, parents after their children, a cycle) and a real capture's graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb._native.kernels.critical_kernel import (asof_by_id, executor_work, flow_edges,
                                                       inherit, input_inside,
                                                       latest_per_target, wake_ups)

DATA = Path(__file__).resolve().parents[2] / "data"


def _inherit_levels(parent, seed, max_depth):
    """The numpy passes inherit replaced: one nesting level a pass."""
    owner = np.where(seed, np.arange(len(parent)), -1)
    todo = np.flatnonzero((owner < 0) & (parent >= 0))
    for _ in range(max_depth if max_depth >= 0 else len(parent)):
        got = owner[parent[todo]]
        hit = got >= 0
        if not hit.any():
            break
        owner[todo[hit]] = got[hit]
        todo = todo[~hit]
    return owner


def _latest_lexsort(src, dst, end):
    order = np.lexsort((end[src], dst))
    last = np.ones(len(order), bool)
    last[:-1] = dst[order][1:] != dst[order][:-1]
    return order[last]


def _flows_numpy(g, src, dst, is_element, codes):
    """The numpy flow_edges replaced (graph.py's _add_flows before it)."""
    element_kind, context_kind, input_code = codes
    kind = np.where(is_element, element_kind, context_kind).astype(np.int8)
    ok = (src >= 0) & (dst >= 0) & (src != dst)
    src, dst, kind = src[ok], dst[ok], kind[ok]
    last = _latest_lexsort(src, dst, g.end)
    src, dst, kind = src[last], dst[last], kind[last]
    during = (g.end[src] > g.begin[dst]) & (g.end[src] <= g.end[dst]) & \
        (g.begin[src] < g.begin[dst])
    g.end_src[dst[during]], g.end_kind[dst[during]] = src[during], kind[during]
    element = src[kind == element_kind]
    g.category[element[~g.is_device[element]]] = input_code
    free = ~during & (g.begin[src] <= g.begin[dst]) & (g.start_src[dst] < 0)
    g.start_src[dst[free]], g.start_kind[dst[free]] = src[free], kind[free]


class _Graph:
    def __init__(self, rng, n):
        self.begin = rng.integers(0, 50, n)
        self.end = self.begin + rng.integers(0, 20, n)
        self.is_device = rng.random(n) < 0.2
        self.start_src = np.where(rng.random(n) < 0.3, rng.integers(0, n, n), -1).astype(np.int32)
        self.start_kind = np.zeros(n, np.int8)
        self.end_src = np.full(n, -1, np.int32)
        self.end_kind = np.zeros(n, np.int8)
        self.category = rng.integers(0, 9, n).astype(np.int8)

    def columns(self):
        return [self.start_src, self.start_kind, self.end_src, self.end_kind, self.category]


@pytest.mark.parametrize("seed", range(4))
def test_flow_edges_are_the_numpy_passes(seed):
    rng = np.random.default_rng(seed)
    n, m = 120, 500
    src, dst = rng.integers(-1, n, m), rng.integers(-1, n, m)
    src[:20] = dst[:20]  # (pairs on one node: left out)
    is_element = rng.random(m) < 0.5
    a, b = _Graph(np.random.default_rng(seed), n), _Graph(np.random.default_rng(seed), n)
    flow_edges(src, dst, is_element, a, (5, 4, 3))
    _flows_numpy(b, src, dst, is_element, (5, 4, 3))
    assert all(x.tolist() == y.tolist() for x, y in zip(a.columns(), b.columns()))
    fresh = _Graph(np.random.default_rng(seed), n)
    assert (a.end_kind == 5).any() and (a.start_kind == 4).any()  # (both edges, both kinds)
    assert (a.category != fresh.category).any()
    with pytest.raises(ValueError):  # (an output of another dtype: never written to a copy)
        a.end_src = a.end_src.astype(np.int64)
        flow_edges(src, dst, is_element, a, (5, 4, 3))


def _wake_ups_numpy(g):
    """The numpy wake_ups replaced (graph.py's _add_wake_ups before it)."""
    top = np.flatnonzero((g.parent < 0) & ~g.is_device)
    lasts = g.end[top] > g.begin[top]
    woke = np.flatnonzero(~lasts & (g.start_src[top] >= 0))
    real = np.flatnonzero(lasts)
    nxt = np.searchsorted(real, woke)
    ok = nxt < len(real)
    woke, nxt = woke[ok], real[nxt[ok]]
    same = g.resource[top[woke]] == g.resource[top[nxt]]
    inst, dst = top[woke[same]], top[nxt[same]]
    src = g.start_src[inst]
    last = _latest_lexsort(src, dst, g.end)
    inst, dst, src = inst[last], dst[last], src[last]
    own = g.start_src[dst]
    take = (own < 0) | (g.end[np.maximum(own, 0)] < g.end[src])
    g.start_src[dst[take]], g.start_kind[dst[take]] = src[take], g.start_kind[inst[take]]


@pytest.mark.parametrize("seed", range(4))
def test_wake_ups_are_the_numpy_passes(seed):
    rng = np.random.default_rng(seed)
    n = 300
    graphs = [_Graph(np.random.default_rng(seed), n) for _ in range(2)]
    resource = np.sort(rng.integers(0, 4, n)).astype(np.int32)
    parent = np.where(rng.random(n) < 0.2, np.arange(n) - 1, -1).astype(np.int32)
    parent[np.flatnonzero(parent >= 0)[resource[parent[parent >= 0]] !=
                                       resource[parent >= 0]]] = -1
    instant = rng.random(n) < 0.4
    kinds = rng.integers(0, 9, n).astype(np.int8)
    for g in graphs:
        g.resource, g.parent, g.start_kind[:] = resource, parent, kinds
        g.end = np.where(instant, g.begin, g.end + 1)
    wake_ups(graphs[0])
    _wake_ups_numpy(graphs[1])
    a, b = graphs
    assert a.start_src.tolist() == b.start_src.tolist()
    assert a.start_kind.tolist() == b.start_kind.tolist()
    assert (a.start_src != _Graph(np.random.default_rng(seed), n).start_src).any()


def _forest(rng, n):
    """Random parents (a forest, node ids shuffled: parents before or after children)."""
    parent = np.array([-1 if i == 0 or rng.random() < 0.1 else rng.integers(0, i)
                       for i in range(n)], np.int64)
    perm = rng.permutation(n)
    out = np.full(n, -1, np.int64)
    out[perm] = np.where(parent >= 0, perm[np.maximum(parent, 0)], -1)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_inherit_is_the_level_passes(seed):
    rng = np.random.default_rng(seed)
    parent = _forest(rng, 400)
    flags = rng.random(400) < 0.05
    for depth in (-1, 0, 1, 3, 256):
        assert inherit(parent, flags, depth).tolist() == \
            _inherit_levels(parent, flags, depth).tolist()


def test_inherit_ends_a_cycle():
    parent = np.array([1, 2, 0, 2], np.int64)
    assert inherit(parent, np.array([0, 0, 0, 0], bool)).tolist() == [-1, -1, -1, -1]
    assert inherit(parent, np.array([0, 0, 0, 1], bool)).tolist() == [-1, -1, -1, 3]


@pytest.mark.parametrize("seed", range(4))
def test_latest_per_target_is_the_lexsort(seed):
    rng = np.random.default_rng(seed)
    end = rng.integers(0, 6, 50)  # (many ties)
    src, dst = rng.integers(0, 50, 300), rng.integers(0, 50, 300)
    assert latest_per_target(src, dst, end).tolist() == _latest_lexsort(src, dst, end).tolist()
    assert len(latest_per_target(src[:0], dst[:0], end)) == 0
    wide = np.repeat(end, 40)  # (a few pairs among many nodes: sorted, not a pass per node)
    few_src, few_dst = rng.integers(0, len(wide), 60), rng.integers(0, 30, 60)
    assert latest_per_target(few_src, few_dst, wide).tolist() == \
        _latest_lexsort(few_src, few_dst, wide).tolist()
    with pytest.raises(ValueError):
        latest_per_target(np.array([50]), np.array([0]), end)


@pytest.mark.parametrize("seed", range(4))
def test_asof_by_id_is_merge_asof(seed):
    rng = np.random.default_rng(seed)
    right = pd.DataFrame({"id": rng.integers(0, 5, 200), "t": rng.integers(0, 30, 200)})
    right["r"] = np.arange(200)
    right = right.sort_values(["id", "t"], kind="stable", ignore_index=True)
    left = pd.DataFrame({"id": rng.integers(0, 7, 300), "t": rng.integers(-2, 32, 300)})
    left["q"] = np.arange(300)
    want = pd.merge_asof(left.sort_values("t", kind="stable"),
                         right.sort_values("t", kind="stable"), on="t", by="id",
                         direction="backward").sort_values("q")
    got = asof_by_id(right.id, right.t, left.id, left.t)
    assert np.where(got >= 0, right.r.to_numpy()[np.maximum(got, 0)], -1).tolist() == \
        want.r.fillna(-1).astype(np.int64).tolist()
    with pytest.raises(ValueError):
        asof_by_id(right.id[::-1], right.t[::-1], left.id, left.t)


def test_a_real_graph():
    prof = tp.load(DATA / "jax_h200_inputbound.xplane.pb")
    (rg,) = [r for r in prof.result("replay_graph").values() if r is not None]
    g = rg.graph
    flags = g.category == 3  # (INPUT)
    assert inherit(g.parent, flags).tolist() == _inherit_levels(g.parent, flags, -1).tolist()
    has = np.flatnonzero(g.start_src >= 0)
    src, dst = g.start_src[has], g.parent[has]
    ok = dst >= 0
    src, dst = np.concatenate([src, src[ok]]), np.concatenate([has, dst[ok]])
    assert len(src) and latest_per_target(src, dst, g.end).tolist() == \
        _latest_lexsort(src, dst, g.end).tolist()


@pytest.mark.parametrize("seed", range(4))
def test_input_inside_is_the_numpy_passes(seed):
    rng = np.random.default_rng(seed)
    parent = _forest(rng, 400)
    parent[[5, 6]] = [6, 5]  # (a cycle: ends the chain)
    dev = rng.random(400) < 0.2
    category = rng.choice(np.array([3, 6, 7], np.int8), 400, p=[0.1, 0.8, 0.1])
    want = category.copy()
    inside = _inherit_levels(parent, (want == 3) & ~dev, -1) >= 0
    want[inside & ~dev & (want == 6)] = 3
    got = category.copy()
    input_inside(parent, dev, got, (3, 6))
    assert got.tolist() == want.tolist() and (got != category).any()
    with pytest.raises(ValueError):
        input_inside(parent, dev, got.astype(np.int64), (3, 6))


def _executor_work_numpy(parent, end, seeds, ranks, depth, is_data, category, q_rank, q_t):
    """The numpy executor_waits did before executor_work: the owner pass, the work's
    category, then a brute-force as-of (the latest (end, node) of the rank at or before t)."""
    flags = np.zeros(len(parent), bool)
    flags[seeds] = True
    owner = _inherit_levels(parent, flags, depth)
    rank_of = np.zeros(len(parent), np.int64)
    rank_of[seeds] = ranks
    work = np.flatnonzero(owner >= 0)
    work_rank = rank_of[owner[work]]
    category[work[is_data[work_rank]]] = 3
    out = []
    for r, t in zip(q_rank, q_t):
        cand = work[(work_rank == r) & (end[work] <= t)]
        out.append(-1 if not len(cand) else max(cand, key=lambda w: (end[w], w)))
    return out


def _same_executor_work(parent, end, seeds, ranks, depths, is_data, queries) -> None:
    """executor_work equals the numpy oracle at each depth (answers and categories), and
    finds some work and marks some of it as data."""
    q_rank, q_t = queries
    for depth in depths:
        want_cat, got_cat = np.full(len(parent), 6, np.int8), np.full(len(parent), 6, np.int8)
        want = _executor_work_numpy(parent, end, seeds, ranks, depth, is_data, want_cat,
                                    q_rank, q_t)
        got = executor_work(parent, end, (seeds, ranks), depth, (is_data, 3, got_cat),
                            (q_rank, q_t))
        assert got.tolist() == want and got_cat.tolist() == want_cat.tolist()
        assert (got >= 0).any() and (got_cat == 3).any()


@pytest.mark.parametrize("seed", range(4))
def test_executor_work_is_the_numpy_passes(seed):
    rng = np.random.default_rng(seed)
    n = 500
    parent = _forest(rng, n)
    end = rng.integers(0, 40, n)  # (many ties)
    seeds = np.sort(rng.choice(n, 40, replace=False))
    ranks = rng.integers(0, 5, 40).astype(np.int32)
    is_data = np.array([True, False, True, False, False])
    q_rank = rng.integers(-1, 5, 300).astype(np.int32)
    q_t = rng.integers(-2, 45, 300)
    _same_executor_work(parent, end, seeds, ranks, (0, 1, 3, 256), is_data, (q_rank, q_t))
    category = np.full(n, 6, np.int8)
    with pytest.raises(ValueError):  # (seeds not ascending)
        executor_work(parent, end, (seeds[::-1], ranks), 256, (is_data, 3, category),
                      (q_rank, q_t))
    with pytest.raises(ValueError):  # (a rank out of range)
        executor_work(parent, end, (seeds, ranks + 5), 256, (is_data, 3, category),
                      (q_rank, q_t))


def _nested(rng, n):
    """Random parents in nesting order (a node's children right after it, siblings side by
    side, chains deeper than the depths tried), a few pairs pointing at each other."""
    parent, stack = np.full(n, -1, np.int64), []
    for i in range(n):
        if stack:
            del stack[len(stack) - int(rng.choice([0, 0, 0, 1, 2, len(stack)])):]
        parent[i] = stack[-1] if stack else -1
        if rng.random() < 0.6:
            stack.append(i)
    for i in rng.choice(np.arange(1, n), 4, replace=False):
        parent[i - 1], parent[i] = i, i - 1
    return parent


@pytest.mark.parametrize("seed", range(4))
def test_executor_work_in_nesting_order(seed):
    """Nodes in nesting order (as a host's graph: siblings and children one after another, the
    owners' queries searched from where the last search of their rank ended), deep chains and
    cycles: the same answers as the numpy passes."""
    rng = np.random.default_rng(seed)
    n = 600
    parent = _nested(rng, n)
    end = rng.integers(0, 40, n)
    seeds = np.sort(rng.choice(n, 60, replace=False))
    ranks = rng.integers(0, 5, 60).astype(np.int32)
    is_data = np.array([True, False, True, False, False])
    q_rank, q_t = rng.integers(-1, 5, 300).astype(np.int32), rng.integers(-2, 45, 300)
    _same_executor_work(parent, end, seeds, ranks, (0, 1, 2, 5, 256), is_data, (q_rank, q_t))
