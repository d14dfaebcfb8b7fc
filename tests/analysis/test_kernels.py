"""The compiled kernels behind the fast paths, each against a plain reference (pandas, numpy,
the kernel it replaces) on real profiles and on random data with the awkward cases (repeated
keys, keys past the fan-out limit, unsorted queries, events sharing a start)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb import _native
from tfprof_nb._native import kernels as K
from tfprof_nb.analysis.runtime.hostdata import host_stats as host_module
from tfprof_nb.analysis.runtime.hostdata.host import HostData
from tfprof_nb.errors import Cancelled
from tfprof_nb.xspace import read_xspace


def _reference_join(a_rows, a0, a1, b_rows, b0, b1, limit=0):
    a = pd.DataFrame({"ai": np.arange(len(a_rows)), "k0": a0, "k1": a1})
    b = pd.DataFrame({"bi": np.arange(len(b_rows)), "k0": b0, "k1": b1})
    if limit:
        na, nb = a.groupby(["k0", "k1"]).size(), b.groupby(["k0", "k1"]).size()
        big = (na >= limit) & (nb.reindex(na.index).fillna(0) >= limit)
        a = a[~a.set_index(["k0", "k1"]).index.isin(big[big].index)]
    pairs = b.merge(a, on=["k0", "k1"]).sort_values(["bi", "ai"], kind="stable")
    return a_rows[pairs.ai.to_numpy()], b_rows[pairs.bi.to_numpy()]


@pytest.mark.parametrize("limit", [0, 3])
def test_join_on_keys_matches_a_merge(limit):
    rng = np.random.default_rng(7)
    na, nb = 20_000, 30_000
    a0, a1 = rng.integers(0, 3, na), rng.integers(0, 5_000, na) * 2**40
    b0, b1 = rng.integers(0, 3, nb), rng.integers(0, 5_000, nb) * 2**40
    a_rows = np.sort(rng.choice(10**6, na, replace=False)).astype(np.int32)
    b_rows = rng.permutation(10**6)[:nb].astype(np.int32)  # any order: b's order is kept
    for threads in (1, 2):
        src, dst = K.join_on_keys(a_rows, (a0, a1), b_rows, (b0, b1), limit=limit,
                                  threads=threads)
        ref_src, ref_dst = _reference_join(a_rows, a0, a1, b_rows, b0, b1, limit)
        assert len(src) > 1000
        assert np.array_equal(src, ref_src) and np.array_equal(dst, ref_dst)


@pytest.mark.parametrize("keep", ["first", "last"])
def test_join_on_keys_keeps_one_a_row_per_b_row_as_pandas_drops_duplicates(keep):
    """``keep``: each b entry's pair is the first or the last a row of its keys, as pandas'
    drop_duplicates over a (rows increasing) before a merge keeps them."""
    rng = np.random.default_rng(5)
    na, nb = 20_000, 3_000
    a0, a1 = rng.integers(0, 3, na), rng.integers(0, 2_000, na) * 2**40
    b0, b1 = rng.integers(0, 3, nb), rng.integers(0, 2_500, nb) * 2**40
    a_rows = np.sort(rng.choice(10**6, na, replace=False)).astype(np.int32)
    b_rows = rng.permutation(10**6)[:nb].astype(np.int32)
    one = ~pd.DataFrame({"a": a0, "b": a1}).duplicated(keep=keep).to_numpy()
    ref_src, ref_dst = _reference_join(a_rows[one], a0[one], a1[one], b_rows, b0, b1, 0)
    src, dst = K.join_on_keys(a_rows, (a0, a1), b_rows, (b0, b1), keep=keep)
    assert 1000 < len(src) < nb and (~one).sum() > 1000
    assert np.array_equal(src, ref_src) and np.array_equal(dst, ref_dst)
    with pytest.raises(ValueError):
        K.join_on_keys(a_rows, (a0, a1), b_rows, (b0, b1), keep="any")


def _pairs(hd: HostData, a: str, b: str):
    """(rows, values of a, values of b) of the events carrying both integer stats."""
    sa, sb = hd.int_stat(a), hd.int_stat(b)
    both, ia, ib = np.intersect1d(sa.rows, sb.rows, return_indices=True)
    return both, sa.values[ia].astype(np.int64), sb.values[ib].astype(np.int64)


@pytest.mark.parametrize("passes", [None, 2, 4])
def test_context_links_match_a_join_of_the_stats(cpu_python_file, passes):
    """The same edges however many shares of the keys are joined one after the other."""
    hd = HostData("h", read_xspace(cpu_python_file))
    st = hd.space.stats
    p_rows, pt, p = _pairs(hd, "_pt", "_p")
    c_rows, ct, c = _pairs(hd, "_ct", "_c")
    extra = (np.array([len(hd), len(hd) + 1], np.int32), np.array([pt[0], 99], np.int64),
             np.array([p[0], 5], np.int64))  # one extra consumer of the first producer
    codes = [st.names.index(k) for k in ("_pt", "_p", "_ct", "_c")]
    caps = (len(hd), len(hd))
    src, dst = K.context_links(st.name_code, st.owner_kind, st.kind, st.raw_value, st.owner,
                               codes, caps, extra, limit=64, passes=passes)
    ref_src, ref_dst = _reference_join(
        p_rows, pt, p, np.concatenate([c_rows, extra[0]]), np.concatenate([ct, extra[1]]),
        np.concatenate([c, extra[2]]), limit=64)
    assert len(src) > 10 and dst[-1] == len(hd)
    assert np.array_equal(src, ref_src) and np.array_equal(dst, ref_dst)


@pytest.mark.parametrize("seek_ratio", [0, 10**9])  # every query sought; none sought
@pytest.mark.parametrize("fixture", ["cpu_file", "gpu_fixture_file"])
def test_stats_at_matches_sparse_lookups(fixture, seek_ratio, request, monkeypatch):
    monkeypatch.setattr(K.stats_kernel, "SEEK_RATIO", seek_ratio)
    hd = HostData("h", read_xspace(request.getfixturevalue(fixture)))
    names = [n for n in ("_c", "id", "step_num", "correlation_id", "group_id", "iter_num")
             if n in hd.space.stats.names]
    rng = np.random.default_rng(3)
    queries = {}
    for name in names:
        rows = hd.int_stat(name, cache=False).rows
        mixed = np.concatenate([rows[::2], rng.integers(0, len(hd), 50).astype(np.int32)])
        queries[name + ":sorted"] = (name, np.sort(mixed))
        queries[name + ":shuffled"] = (name, rng.permutation(mixed))
    got = hd.stats_at(queries)
    assert names and sum(h.sum() for _, h in got.values()) > 0
    for key, (name, rows) in queries.items():
        ref_values, ref_hit = hd.int_stat(name, cache=False).lookup(rows)
        values, hit = got[key]
        assert np.array_equal(hit, ref_hit), key
        assert np.array_equal(values[hit], ref_values[ref_hit]), key


def test_stats_at_seeks_queries_on_one_array_together(gpu_fixture_file, monkeypatch):
    """Queries given one int64 array reach the kernel as one int32 array (converted once), so
    they are sought in one pass over the rows, not one per stat."""
    hd = HostData("h", read_xspace(gpu_fixture_file))
    names = [n for n in ("correlation_id", "group_id", "device_id", "context_id", "step_num")
             if hd.has_stat(n)]
    assert len(names) >= 3
    seen = []
    real = host_module.stats_at

    def recording(*args, **kwargs):
        seen.append([rows for _, rows in args[5]])
        return real(*args, **kwargs)

    monkeypatch.setattr(host_module, "stats_at", recording)
    rows = np.arange(len(hd), dtype=np.int64)
    got = hd.stats_at({name: (name, rows) for name in names})
    assert len(seen) == 1 and len(seen[0]) == len(names)
    assert all(r is seen[0][0] for r in seen[0]) and seen[0][0].dtype == np.int32
    hits = 0
    for name in names:
        ref_values, ref_hit = hd.int_stat(name, cache=False).lookup(rows)
        values, hit = got[name]
        assert np.array_equal(hit, ref_hit), name
        assert np.array_equal(values[hit], ref_values[ref_hit]), name
        hits += int(hit.any())
    assert hits >= 2


def _random_stat_table(rng, n_events: int):
    """Stat columns in the decoder's order: each event's stats together, events in order,
    runs of stats of other owners between them; codes 0-3, every value kind, events
    carrying a stat twice."""
    per_event = rng.integers(0, 5, n_events)
    owner = np.repeat(np.arange(n_events, dtype=np.int32), per_event)
    n = len(owner)
    cols = {"owner": owner, "owner_kind": np.zeros(n, np.int8),
            "name_code": rng.integers(0, 4, n).astype(np.uint16),
            "kind": rng.choice(np.array([1, 2, 3, 3, 3, 4], np.int8), n),
            "raw": rng.integers(-1000, 1000, n).astype(np.int64)}
    doubles = cols["kind"] == 1
    cols["raw"][doubles] = (rng.random(doubles.sum()) * 1e4 - 5e3).view(np.int64)
    cols["raw"][np.flatnonzero(doubles)[::7]] = np.array([np.nan]).view(np.int64)[0]
    # runs of metadata / plane stats (owners unrelated to events) at random places
    at = np.sort(rng.choice(n, 12, replace=False))
    pieces, start = {k: [] for k in cols}, 0
    for i, cut in enumerate(np.append(at, n)):
        for k in cols:
            pieces[k].append(cols[k][start:cut])
        if cut < n:
            m = int(rng.integers(1, 40))
            pieces["owner"].append(rng.integers(0, 9, m).astype(np.int32))
            pieces["owner_kind"].append(np.full(m, 1 + i % 2, np.int8))
            for k in ("name_code", "kind", "raw"):
                pieces[k].append(np.resize(cols[k], m))
        start = cut
    return {k: np.concatenate(v) for k, v in pieces.items()}


def _reference_stat_at(cols, code: int, rows: np.ndarray):
    """The last numeric value (doubles truncated, NaN skipped) of stat ``code`` per event."""
    t = pd.DataFrame(cols)
    t = t[(t.owner_kind == 0) & (t.name_code == code) & t.kind.isin([1, 2, 3])].copy()
    dbl = t.raw.to_numpy().view(np.float64)
    t["v"] = np.where(t.kind == 1, np.trunc(np.nan_to_num(dbl, nan=0)), t.raw).astype(np.int64)
    t = t[~((t.kind == 1) & np.isnan(dbl))]
    last = t.groupby("owner").v.last()
    hit = np.isin(rows, last.index.to_numpy())
    values = np.zeros(len(rows), np.int64)
    values[hit] = last.reindex(rows[hit]).to_numpy()
    return values, hit


def test_stats_sought_row_by_row_match_a_reference(monkeypatch):
    """tfp_stats_seek (and the pass it replaces) on random tables: stats of other owners in
    runs between events, repeated and unsorted query rows, queries sharing rows."""
    monkeypatch.setattr(K.stats_kernel, "SEEK_RATIO", 0)  # with runs, every query is sought
    rng = np.random.default_rng(5)
    for trial in range(4):
        n_events = 3_000
        cols = _random_stat_table(rng, n_events)
        shared = rng.integers(0, n_events, 400).astype(np.int32)  # unsorted, repeats
        queries = [(0, shared), (1, shared), (0, shared), (3, np.sort(shared)),
                   (2, rng.integers(0, n_events + 5, 50).astype(np.int32)),
                   (1, np.empty(0, np.int32))]
        starts, ends = [], []
        for i in np.flatnonzero(cols["owner_kind"] != 0):
            if starts and ends[-1] == i:
                ends[-1] = i + 1
            else:
                starts.append(i)
                ends.append(i + 1)
        runs = (np.array(starts, np.int64), np.array(ends, np.int64))
        args = (cols["name_code"], cols["owner_kind"], cols["kind"], cols["raw"], cols["owner"])
        sought = K.stats_at(*args, queries, runs=runs)
        scanned = K.stats_at(*args, queries)  # (no runs: one pass)
        for (code, rows), got, other in zip(queries, sought, scanned):
            values, hit = _reference_stat_at(cols, code, rows)
            assert np.array_equal(got[1], hit) and np.array_equal(got[0][hit], values[hit])
            assert np.array_equal(other[1], hit) and np.array_equal(other[0][hit], values[hit])
        assert sum(h.sum() for _, h in sought) > 500


def test_nesting_with_merged_extra_nodes_matches_one_sorted_order():
    rng = np.random.default_rng(11)
    n, m = 5_000, 800
    line = np.sort(rng.integers(0, 4, n)).astype(np.int32)
    begin = rng.integers(0, 2_000, n) * 1000
    dur = rng.integers(1, 50, n) * 1000
    order = np.lexsort((-dur, begin, line))
    line, begin, dur = line[order], begin[order], dur[order]  # real rows in nesting order
    x_line = rng.integers(0, 4, m).astype(np.int32)
    x_begin = rng.choice(begin, m)  # extra nodes sharing starts with real ones
    x_dur = rng.integers(1, 50, m) * 1000
    skip = (rng.random(n + m) < 0.05).astype(np.uint8)
    x_order = (np.lexsort((-x_dur, x_begin, x_line)) + n).astype(np.int32)
    got = K.nest_strict(None, n, (line, begin, dur), (x_line, x_begin, x_dur), skip, x_order)
    # reference: one order over all nodes (real nodes first on ties), then a stack walk
    all_line = np.concatenate([line, x_line])
    all_begin = np.concatenate([begin, x_begin])
    all_end = all_begin + np.concatenate([dur, x_dur])
    is_extra = np.r_[np.zeros(n, int), np.ones(m, int)]
    ref = np.full(n + m, -1)
    stack, current = [], None
    for i in np.lexsort((is_extra, all_begin - all_end, all_begin, all_line)).tolist():
        if all_line[i] != current:
            current, stack = all_line[i], []
        if skip[i]:
            continue
        while stack and not (all_begin[stack[-1]] <= all_begin[i]
                             and all_end[i] <= all_end[stack[-1]]):
            stack.pop()
        ref[i] = stack[-1] if stack else -1
        stack.append(i)
    assert np.array_equal(got, ref) and (got >= n).any()


@pytest.mark.parametrize("skewed", [False, True])
def test_nesting_split_by_lines_on_threads_matches_one_thread(skewed):
    """A walk big enough to be cut into parts (at line boundaries, extra nodes cut at the same
    lines, some on lines no real node has) gives the parents of a one-thread walk, with the
    real nodes in row order or visited through ``order``."""
    rng = np.random.default_rng(3)
    n, m = 900_000, 120_000
    lines = 60
    p = np.full(lines, 1.0)
    if skewed:
        p[7] = 200.0  # one thread holds most events
    line = rng.choice(lines, n, p=p / p.sum()).astype(np.int32)
    begin = rng.integers(0, 5_000_000, n) * 10
    dur = rng.integers(1, 3_000, n) * 10
    x_line = rng.integers(0, lines + 5, m).astype(np.int32)
    x_begin = rng.integers(0, 5_000_000, m) * 10
    x_dur = rng.integers(1, 3_000, m) * 10
    skip = (rng.random(n + m) < 0.02).astype(np.uint8)
    x_order = (np.lexsort((-x_dur, x_begin, x_line)) + n).astype(np.int32)
    order = np.lexsort((-dur, begin, line)).astype(np.int32)
    real = (line, begin, dur)
    extra = (x_line, x_begin, x_dur)
    one = K.nest_strict(order, n, real, extra, skip, x_order, threads=1)
    assert (one >= 0).sum() > n // 4 and (one >= n).any()
    for threads in (2, 3, 8):
        assert np.array_equal(K.nest_strict(order, n, real, extra, skip, x_order,
                                            threads=threads), one)
    # the same rows stored in nesting order, visited without ``order``
    sorted_real = tuple(a[order] for a in real)
    back = np.empty(n, np.int64)
    back[order] = np.arange(n)
    expect = np.where(one >= 0, np.where(one < n, back[np.minimum(one, n - 1)], one), -1)
    expect = np.concatenate([expect[order], expect[n:]])
    sorted_skip = np.concatenate([skip[:n][order], skip[n:]])
    got = K.nest_strict(None, n, sorted_real, extra, sorted_skip, x_order, threads=4)
    assert np.array_equal(got, expect)
    # the walk answered at some rows only, cut the same way: parents and the ancestor climb
    empty = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    full = K.nest_strict(order, n, real, empty, skip[:n], threads=1)
    rows = np.sort(rng.choice(n, 50_000, replace=False)).astype(np.int32)
    code = rng.integers(0, 20, n).astype(np.uint16)
    exec_name = np.zeros(20, bool)
    exec_name[:3] = True
    flag = rng.random(n) < 0.5
    answers = [K.nest_query(order, line, begin, dur, skip[:n], rows, code, exec_name, flag,
                            levels=4, threads=t) for t in (1, 3)]
    assert np.array_equal(answers[0][0], full[rows])
    assert np.array_equal(answers[1][0], full[rows])
    assert np.array_equal(answers[0][1], answers[1][1]) and answers[0][1].any()


def _bfs_groups(roots, root_level, parent, src, dst):
    """The reference's group spread: each root in order (unless grouped, or below a root of
    its level over any parent edge) starts a group that spreads breadth-first over the child
    edges (nesting and extra) to ungrouped nodes."""
    n = len(parent)
    children = [[] for _ in range(n)]
    parents = [[] for _ in range(n)]
    for v in range(n):
        if parent[v] >= 0:
            children[parent[v]].append(v)
            parents[v].append(parent[v])
    for a, b in zip(src.tolist(), dst.tolist()):
        children[a].append(b)
        parents[b].append(a)
    group, root_of = np.full(n, -1), []
    for r in roots.tolist():
        if group[r] >= 0:
            continue
        seen, todo, below = {r}, [r], False
        while todo and not below:
            for p in parents[todo.pop()]:
                if p not in seen:
                    below = below or root_level[p] == root_level[r]
                    seen.add(p)
                    todo.append(p)
        if below:
            continue
        group[r] = len(root_of)
        root_of.append(r)
        queue = [r]
        while queue:
            for c in children[queue.pop(0)]:
                if group[c] < 0:
                    group[c] = group[r]
                    queue.append(c)
    return group, np.asarray(root_of)


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_group_spread_over_subtrees_matches_breadth_first(seed, shuffled):
    """Groups spread by scanning nesting subtrees in visit order (rows in nesting order or
    not, with synthetic region nodes, async events and extra edges) equal the breadth-first
    spread over child lists, on every real node."""
    rng = np.random.default_rng(seed)
    n, m = 3000, 200
    line = rng.integers(0, 4, n).astype(np.int32)
    begin = rng.integers(0, 20000, n) * 1000
    dur = rng.integers(1, 3000, n) * 1000
    if not shuffled:  # rows in nesting order, as files usually are
        o = np.lexsort((-dur, begin, line))
        line, begin, dur = line[o], begin[o], dur[o]
    x_line = rng.integers(0, 4, m).astype(np.int32)
    x_begin = rng.integers(0, 20000, m) * 1000
    x_dur = rng.integers(1, 5000, m) * 1000
    skip = (rng.random(n + m) < 0.03).astype(np.uint8)
    skip[n:] = 0
    order = K.nesting_order_or_none(line, begin, dur)
    assert (order is None) != shuffled
    x_order = (np.lexsort((-x_dur, x_begin, x_line)) + n).astype(np.int32)
    parent = K.nest_strict(order, n, (line, begin, dur), (x_line, x_begin, x_dur), skip,
                           x_order)
    e = 400
    src = rng.integers(0, n, e).astype(np.int32)
    dst = rng.integers(0, n, e).astype(np.int32)
    by_dst = np.argsort(dst, kind="stable")
    src, dst = src[by_dst], dst[by_dst]
    root_level = np.full(n + m, -1, np.int8)
    roots = rng.choice(n, 150, replace=False).astype(np.int32)
    root_level[roots] = rng.integers(1, 3, len(roots))
    roots = roots[np.lexsort((begin[roots], -root_level[roots]))].astype(np.int32)
    pos = None
    if order is not None:
        pos = np.empty(n, np.int32)
        pos[order] = np.arange(n, dtype=np.int32)
    key = src if pos is None else pos[src]
    by_src = np.argsort(key, kind="stable")
    group, root_of = K.spread_groups(roots, root_level, n, (order, pos, line, skip),
                                     (parent, dst, src), (key[by_src], dst[by_src]))
    ref, ref_root_of = _bfs_groups(roots, root_level, parent, src, dst)
    assert np.array_equal(group[:n], ref[:n])
    assert np.array_equal(root_of, ref_root_of)
    assert (group[:n] >= 0).sum() > n // 10 and (parent >= n).any() and skip.any()


def test_op_walk_from_rows_matches_the_sorted_activities(cpu_python_file):
    hd = HostData("h", read_xspace(cpu_python_file))
    rows = np.arange(len(hd), dtype=np.int32)
    rng = np.random.default_rng(5)
    key = rng.integers(0, 40, len(rows)).astype(np.int32)
    typ = rng.integers(-1, 5, len(rows)).astype(np.int32)
    got = K.op_walk_rows(rows, hd.line, hd.begin, hd.duration, key, typ, 40, hd.n_lines)
    assert got is not None
    line, begin, end = hd.line[rows], hd.begin[rows], hd.end_of(rows)
    act_line = np.repeat(line, 2)
    act_ts = np.empty(2 * len(rows), np.int64)
    act_ts[0::2], act_ts[1::2] = begin, end
    act = K.argsort(act_line, act_ts)
    ref = K.op_stack_walk(act, line, begin, end, key, typ, 40, hd.n_lines)
    for ours, theirs in zip(got, ref):
        assert np.array_equal(ours, theirs)
    assert got[0].sum() > 100
    shuffled = rng.permutation(rows)  # not in (line, begin) order: the caller must sort
    assert K.op_walk_rows(shuffled, hd.line, hd.begin, hd.duration, key, typ, 40,
                          hd.n_lines) is None


def test_regions_from_rows_match_the_sorted_kernel():
    rng = np.random.default_rng(2)
    n = 4_000
    line = np.sort(rng.integers(0, 3, n)).astype(np.int32)
    begin = np.concatenate([np.sort(rng.integers(0, 10**6, (line == k).sum()))
                            for k in range(3)]).astype(np.int64)
    is_start = rng.random(n) < 0.5
    starts, stops = np.flatnonzero(is_start).astype(np.int32), \
        np.flatnonzero(~is_start).astype(np.int32)
    ctx = rng.integers(0, 10**9, len(starts))
    got = K.regions_from_rows(starts, ctx, stops, line, begin)
    all_ctx = np.zeros(n, np.int64)
    all_ctx[starts] = ctx
    ref = K.threadpool_regions(is_start, line, begin, all_ctx)
    assert len(got[0]) > 100
    for ours, theirs in zip(got, ref):
        assert np.array_equal(ours, theirs)
    assert K.regions_from_rows(starts[::-1].copy(), ctx, stops, line, begin) is None
    # starts left out by a flag: the same as without them (out of order ones included)
    has = rng.random(len(starts)) < 0.7
    bad = starts.copy()
    bad[~has] = 0  # (rows out of order, but left out)
    got = K.regions_from_rows(bad, None, stops, line, begin, has=has, with_ctx=False)
    ref = K.regions_from_rows(starts[has], ctx[has], stops, line, begin)
    assert got[3] is None and len(got[0]) > 100
    assert not K.regions_from_rows(bad, None, stops, line, begin, has=has)[3].any()
    for ours, theirs in zip(got[:3], ref[:3]):
        assert np.array_equal(ours, theirs)


def test_host_step_rows_match_numpy():
    rng = np.random.default_rng(9)
    n, n_lines, n_names = 20_000, 6, 30
    line = rng.integers(0, n_lines, n).astype(np.int32)
    code = rng.integers(0, n_names, n).astype(np.uint16)
    group = rng.integers(-1, 50, n).astype(np.int32)
    line_ok = rng.random(n_lines) < 0.7
    explicit, not_compute = rng.random(n_names) < 0.2, rng.random(n_names) < 0.2
    kind_of = rng.integers(0, 14, n_names).astype(np.int8)
    flag_rows = np.sort(rng.choice(n, 500, replace=False)).astype(np.int32)
    flags = rng.integers(1, 4, 500).astype(np.uint8)
    rows, kinds, markers = K.host_step_rows(line, code, line_ok, group, explicit, not_compute,
                                            kind_of, flag_rows, flags, n)
    bits = np.zeros(n, np.uint8)
    bits[flag_rows] = flags
    picked = line_ok[line] & (group >= 0)
    marker = picked & (explicit[code] | (bits & 1 > 0))
    work = picked & ~not_compute[code] & (~marker | (bits & 2 > 0))
    assert np.array_equal(markers, np.flatnonzero(marker))
    assert np.array_equal(rows, np.flatnonzero(work))
    assert np.array_equal(kinds, kind_of[code[work]])


@pytest.mark.parametrize("fixture", ["cpu_python_file", "gpu_fixture_file"])
def test_decoding_in_small_chunks_on_threads_gives_the_same_columns(fixture, request,
                                                                     monkeypatch):
    from tfprof_nb.xspace import decoder

    path = request.getfixturevalue(fixture)
    one = read_xspace(path, threads=1)
    monkeypatch.setattr(decoder, "CHUNK_BYTES", 512)  # many chunks per line
    progress = np.zeros(3, np.int64)
    many = read_xspace(path, threads=3, progress=progress)
    assert progress[0] == 3 and 0 < progress[1] <= progress[2] == path.stat().st_size
    for table in ("events", "stats"):
        a, b = getattr(one, table), getattr(many, table)
        for name, value in vars(a).items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(value, getattr(b, name)), (table, name)
    assert one.events.names == many.events.names and one.stats.values == many.stats.values


def test_cancel_token_stops_a_kernel_and_only_its_own(cpu_file):
    """Kernels on a thread working under a cancelled token stop (the threads they start
    too); on a thread under no token, or under another token, they run."""
    hd = HostData("h", read_xspace(cpu_file))
    token = _native.CancelToken()
    with _native.cancel_scope(token):
        assert token.cancel() is False
        with pytest.raises(Cancelled):
            K.argsort(hd.begin)
        with pytest.raises(Cancelled):
            read_xspace(cpu_file)
        empty = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
        n = 800_000  # (rows in nesting order on 8 lines: cut into parts on 2 threads)
        line, begin = np.repeat(np.arange(8, dtype=np.int32), n // 8), np.arange(n) * 10
        dur = np.full(n, 5, np.int64)
        for threads in (1, 2):  # a walk in one part, and one cut into parts
            with pytest.raises(Cancelled):
                K.nest_strict(None, n, (line, begin, dur), empty, threads=threads)
            with pytest.raises(Cancelled):
                K.nest_query(None, line, begin, dur, None, np.arange(n, dtype=np.int32),
                             threads=threads)
        assert _native.lib().tfp_cancel_probe(4) == 4  # the threads a kernel starts see it
        with _native.cancel_scope(_native.CancelToken()):  # another run's token
            assert len(K.argsort(hd.begin)) == len(hd)
        with _native.cancel_scope(_native.CancelToken(parent=token)):  # a run inside it
            with pytest.raises(Cancelled):
                K.argsort(hd.begin)
    assert token.cancel() is True and token.cancelled  # (stays cancelled)
    assert not _native.cancel_requested() and _native.current_token() is None
    assert len(K.argsort(hd.begin)) == len(hd)  # no token here: never cancelled
    assert _native.lib().tfp_cancel_probe(4) == 0


def test_progress_text_line(capsys):
    from tfprof_nb._progress import WorkProgress

    shown = WorkProgress(True, delay=0, rate=1e9)
    shown.update(0.25, "loading vm: decoding")
    shown.update(0.5, "loading vm: decoding")
    shown.finish("loaded 1 host")
    err = capsys.readouterr().err
    assert "[tfprof_nb] loading vm: decoding 25%" in err and "decoding 50%" in err
    assert "loaded 1 host (" in err
    quiet = WorkProgress(None, delay=0)  # not a notebook: off by default
    quiet.update(0.5, "x")
    quiet.finish("done")
    assert capsys.readouterr().err == ""
    assert tp.load  # (the public entry point that takes progress=)


def test_keys_in_is_membership_of_one_or_two_columns():
    rng = np.random.default_rng(7)
    a0, a1 = rng.integers(-40, 40, 20_000), rng.integers(-3, 3, 20_000)
    b0, b1 = rng.integers(-50, 50, 500), rng.integers(-3, 3, 500)
    members = set(zip(b0.tolist(), b1.tolist()))
    expected = np.array([k in members for k in zip(a0.tolist(), a1.tolist())])
    assert np.array_equal(K.keys_in((a0, a1), (b0, b1)), expected)
    assert 0 < expected.sum() < len(expected)
    assert np.array_equal(K.keys_in((a0,), (b0,)), np.isin(a0, b0))
    extreme = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0])
    assert K.keys_in((extreme,), (extreme[:2],)).tolist() == [True, True, False]
    assert K.keys_in((a0,), (np.empty(0, np.int64),)).sum() == 0
    assert len(K.keys_in((np.empty(0, np.int64),), (b0,))) == 0
    with pytest.raises(ValueError):
        K.keys_in((a0, a1), (b0,))


def test_code_rows_multi_is_code_rows_of_each_set(cpu_file):
    hd = HostData("h", read_xspace(cpu_file))
    counts = hd.name_counts
    order = np.argsort(-counts, kind="stable")
    tables = []
    for picked in (order[:2], order[2:3], order[5:9], []):  # the last set is empty
        ok = np.zeros(len(hd.names), bool)
        ok[list(picked)] = True
        tables.append(ok)
    found = K.code_rows_multi(hd.name_code, tables, [counts[t].sum() for t in tables])
    for ok, rows in zip(tables, found):
        assert np.array_equal(rows, K.code_rows(hd.name_code, ok))
    assert len(found[0]) > 0 and len(found[3]) == 0
    with pytest.raises(ValueError, match="overlap"):
        K.code_rows_multi(hd.name_code, [tables[0], tables[0]], [10, 10])
    with pytest.raises(ValueError, match="cap"):
        K.code_rows_multi(hd.name_code, tables[:1], [1])


def test_name_rows_many_is_name_rows_of_each_predicate(cpu_file):
    hd = HostData("h", read_xspace(cpu_file))
    predicates = {
        "executor": lambda s: (s == "ExecutorState::Process").to_numpy(),
        "iterator": lambda s: s.str.startswith("Iterator::").to_numpy(),
        "any_iter": lambda s: s.str.contains("Iterator").to_numpy(),  # overlaps "iterator"
        "none": lambda s: (s == "no such event").to_numpy(),
    }
    many = hd.name_rows_many(predicates)
    assert list(many) == list(predicates)
    for key, predicate in predicates.items():
        assert np.array_equal(many[key], hd.name_rows(predicate)), key
    assert len(many["iterator"]) > 0 and len(many["any_iter"]) > len(many["iterator"])
    assert len(many["none"]) == 0


@pytest.mark.parametrize("fixture", ["cpu_file", "cpu_python_file", "tpu"])
def test_nesting_parent_at_rows_is_the_full_nesting_there(fixture, request):
    """The one-walk answer at some rows (repeated; the TPU capture has async events) equals
    the parent per event there, and the ancestor climb equals climbing that parent array."""
    from .real_xla import TPU

    path = TPU if fixture == "tpu" else request.getfixturevalue(fixture)
    hd = HostData("h", read_xspace(path))
    parent = hd.nesting_parent()
    rng = np.random.default_rng(3)
    rows = np.sort(rng.choice(len(hd), size=min(len(hd), 4000), replace=False)).astype(np.int32)
    rows = np.sort(np.concatenate([rows, rows[::7]]))  # repeats
    at, found = hd.nesting_parent_at(rows)
    assert found is None and np.array_equal(at, parent[rows])
    assert (at >= 0).sum() > len(rows) // 4
    # climb to the nearest ancestor of a frequent parent name, within 3 levels
    names = np.bincount(hd.name_code[parent[parent >= 0]], minlength=len(hd.names))
    target = np.zeros(len(hd.names), bool)
    target[np.argsort(-names)[:2]] = True
    flag = (np.arange(len(hd)) % 3) != 0
    none, found = hd.nesting_parent_at(rows, target, flag, levels=3, parents=False)
    assert none is None
    expected = np.zeros(len(rows), bool)
    for k, r in enumerate(rows.tolist()):
        node = parent[r]
        for _ in range(3):
            if node < 0:
                break
            if target[hd.name_code[node]]:
                expected[k] = flag[node]
                break
            node = parent[node]
    assert np.array_equal(found, expected) and expected.any() and not expected.all()
    with pytest.raises(ValueError, match="increasing"):
        hd.nesting_parent_at(rows[::-1].copy())


@pytest.mark.parametrize("n", [0, 1, 7, 5000, 400_000])
def test_radix_sorts_of_int32_match_numpys_stable_sort(n):
    """The int32 radix argsort (negative keys) and the pair sort (keys with many repeats keep
    their values' order; keys gathered through positions) equal numpy's stable sorts."""
    rng = np.random.default_rng(n)
    keys = rng.integers(-2**31, 2**31 - 1, n).astype(np.int32)
    assert np.array_equal(K.argsort(keys), np.argsort(keys, kind="stable"))
    key = rng.integers(0, max(n // 50, 2), n).astype(np.int32)
    value = rng.integers(-2**31, 2**31 - 1, n).astype(np.int32)
    before = key.copy(), value.copy()
    got_key, got_value = K.sort_pairs(key, value)
    order = np.argsort(key, kind="stable")
    assert np.array_equal(got_key, key[order]) and np.array_equal(got_value, value[order])
    assert np.array_equal(key, before[0]) and np.array_equal(value, before[1])  # unchanged
    # keys gathered through positions: wide (31-bit) and narrow spans, skewed buckets
    for span in (2**31 - 1, 3_000, 1):
        pos = rng.integers(0, span, max(n // 3, 1)).astype(np.int32)
        pos[:len(pos) // 4] = span // 2  # (one bucket far larger than the others)
        src = rng.integers(0, len(pos), n).astype(np.int32)
        got_key, got_value = K.sort_pairs(src, value, pos)
        order = np.argsort(pos[src], kind="stable")
        assert np.array_equal(got_key, pos[src][order])
        assert np.array_equal(got_value, value[order])
    with pytest.raises(ValueError):
        K.sort_pairs(np.array([3, -1], np.int32), np.array([0, 1], np.int32))
    with pytest.raises(ValueError):
        K.sort_pairs(np.array([0, 5], np.int32), np.array([0, 1], np.int32),
                     np.arange(3, dtype=np.int32))


def test_host_nesting_order_is_found_once_per_host(cpu_file):
    """HostData.nesting_order: the nesting walks' visit order (None: rows in it already), its
    verdict kept across the release between steps."""
    hd = HostData("h", read_xspace(cpu_file))
    order = hd.nesting_order()
    ref = np.lexsort((-hd.duration, hd.begin, hd.line))
    if order is None:
        assert np.array_equal(ref, np.arange(len(hd)))
    else:
        assert np.array_equal(order, ref)
    hd.release(keep_core=True)
    assert hd._cache["in_nesting_order"] is (order is None)
    again = hd.nesting_order()
    assert (again is None) == (order is None)


@pytest.mark.parametrize("dtype", [np.uint16, np.int32])
def test_code_gather_is_numpys_take_with_a_fill(dtype):
    """table[code] of uint16 and int32 code columns (int64 tables narrowed to int32), codes
    outside the table filled, into a given output slice too."""
    rng = np.random.default_rng(7)
    table = rng.integers(-2**31, 2**31, 300, dtype=np.int64).astype(np.int32).astype(np.int64)
    code = rng.integers(0, 310, 5000).astype(dtype)
    inside = code < len(table)
    expect = np.where(inside, table[np.minimum(code, len(table) - 1)], -7).astype(np.int32)
    got = K.code_gather(code, table, fill=-7)
    assert got.dtype == np.int32 and np.array_equal(got, expect)
    out = np.zeros(6000, np.int32)
    K.code_gather(code, table, fill=-7, out=out[1000:])
    assert np.array_equal(out[1000:], expect) and not out[:1000].any()
    assert len(K.code_gather(code[:0], table)) == 0
    with pytest.raises(ValueError):
        K.code_gather(code, table, out=np.zeros(len(code), np.int64))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16])
@pytest.mark.parametrize("sorted_query", [True, False])
def test_sparse_lookup_reads_narrow_and_wide_values(dtype, sorted_query):
    """A sparse column's values at query rows (0 and no hit where absent), int32 values read
    in place, others widened; sorted queries merged, others searched."""
    rng = np.random.default_rng(3)
    rows = np.unique(rng.integers(0, 50_000, 8_000)).astype(np.int32)
    info = np.iinfo(dtype)
    values = rng.integers(max(info.min, -2**40), min(info.max, 2**40), len(rows),
                          dtype=np.int64).astype(dtype)
    query = rng.integers(-5, 50_010, 20_000).astype(np.int32)
    if sorted_query:
        query.sort()
    out, hit = K.sparse_lookup(rows, values, query)
    at = {r: v for r, v in zip(rows.tolist(), values.tolist())}
    assert out.dtype == np.int64 and hit.dtype == bool
    assert hit.tolist() == [q in at for q in query.tolist()]
    assert out.tolist() == [at.get(q, 0) for q in query.tolist()]
    assert 0 < hit.sum() < len(query)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.float32, np.int64,
                                   np.float64, np.bool_])
def test_take_rows_is_fancy_indexing(dtype):
    """col[rows] for int32 rows and every item width, out-of-range rows refused, other row
    types left to numpy."""
    rng = np.random.default_rng(5)
    col = rng.integers(0, 120, 10_000).astype(dtype)
    rows = rng.integers(0, len(col), 30_000).astype(np.int32)
    got = K.take_rows(col, rows)
    assert got.dtype == col.dtype and np.array_equal(got, col[rows])
    assert np.array_equal(K.take_rows(col, rows.astype(np.int64)), col[rows])
    assert len(K.take_rows(col, rows[:0])) == 0
    names = col.astype(str).astype(object)  # (object columns are numpy's to gather)
    assert K.take_rows(names, rows).tolist() == names[rows].tolist()
    assert np.array_equal(K.take_rows(col[::2], rows // 2), col[::2][rows // 2])
    for bad in (len(col), -1):
        with pytest.raises(IndexError):
            K.take_rows(col, np.array([0, bad], np.int32))


@pytest.mark.parametrize("share", [1.0, 0.0])
def test_grouping_joins_context_links_in_one_pass_when_their_entries_fit(cpu_python_file,
                                                                         share, monkeypatch):
    """The grouping asks for one pass while the links' entries take at most its share of the
    file's size (else the kernel's own choice): the same edges either way."""
    from tfprof_nb.analysis.trace import grouping

    hd = HostData("h", read_xspace(cpu_python_file))
    asked = []
    real = grouping.context_links
    monkeypatch.setattr(grouping, "context_links",
                        lambda *a, **kw: asked.append(kw["passes"]) or real(*a, **kw))
    monkeypatch.setattr(grouping, "_ONE_PASS_SHARE_OF_FILE", share)
    monkeypatch.setattr(K.joins_kernel, "LINK_PASS_ENTRIES", 0)  # (the kernel alone: two passes)
    src, dst = grouping.producer_consumer_links(hd)
    assert asked == ([1] if share else [None])
    st = hd.space.stats
    codes = [st.names.index(k) for k in ("_pt", "_p", "_ct", "_c")]
    extra = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    ref = K.context_links(st.name_code, st.owner_kind, st.kind, st.raw_value, st.owner, codes,
                          (len(hd), len(hd)), extra, limit=64, passes=4)
    assert len(src) > 10 and np.array_equal(src, ref[0]) and np.array_equal(dst, ref[1])


def test_join_keys_past_32_bits_are_not_mixed_up():
    """The join keeps the first key in 32 bits while every value fits, else codes them all:
    keys equal in their low 32 bits (5, 5 + 2**32, -2**63 + 5) or past them only on one
    side join as a merge does, whenever the first wide key arrives."""
    rng = np.random.default_rng(11)
    values = np.array([5, 5 + 2**32, -2**63 + 5, -2**63, 2**63 - 1, -1, 7], np.int64)
    for first_wide in (0, 500, 1999, 2000):  # where keys stop fitting in 32 bits (a, else b)
        na, nb = 2000, 3000
        a0 = rng.choice(values[[0, 5, 6]], na)
        a0[first_wide:] = rng.choice(values, na - first_wide)
        b0 = rng.choice(values, nb)
        a1, b1 = rng.integers(0, 40, na), rng.integers(0, 40, nb)
        a_rows = np.arange(na, dtype=np.int32)
        b_rows = rng.permutation(nb).astype(np.int32)
        src, dst = K.join_on_keys(a_rows, (a0, a1), b_rows, (b0, b1))
        ref_src, ref_dst = _reference_join(a_rows, a0, a1, b_rows, b0, b1)
        assert len(src) > 1000
        assert np.array_equal(src, ref_src) and np.array_equal(dst, ref_dst)


@pytest.mark.parametrize("first_wide", [None, 90_000])
def test_join_on_keys_over_many_partitions(first_wide):
    """Past 32 K entries a side the entries go to hash partitions (chunks chained per
    partition) as they come: keys with one or several entries a side, and first keys that
    stop fitting in 32 bits part way (coded then, their partition kept), join as a merge
    does, on one thread or two."""
    rng = np.random.default_rng(23)
    na, nb = 150_000, 250_000
    small = np.array([0, 3, 9], np.int64)
    a0, b0 = rng.choice(small, na), rng.choice(small, nb)
    if first_wide is not None:
        wide = np.array([5 + 2**32, -2**63 + 9, 2**63 - 1], np.int64)
        a0[first_wide:] = rng.choice(np.concatenate([small, wide]), na - first_wide)
        b0[::7] = rng.choice(wide, len(b0[::7]))
    a1, b1 = rng.integers(0, 60_000, na), rng.integers(0, 60_000, nb)
    a_rows = np.sort(rng.choice(10**7, na, replace=False)).astype(np.int32)
    b_rows = rng.permutation(10**7)[:nb].astype(np.int32)
    ref_src, ref_dst = _reference_join(a_rows, a0, a1, b_rows, b0, b1, limit=4)
    for threads in (1, 2):
        src, dst = K.join_on_keys(a_rows, (a0, a1), b_rows, (b0, b1), limit=4,
                                  threads=threads)
        assert len(src) > 100_000
        assert np.array_equal(src, ref_src) and np.array_equal(dst, ref_dst)


def test_values_at_marks_the_values_a_column_takes_at_rows():
    rng = np.random.default_rng(5)
    col = rng.integers(0, 500, 10_000).astype(np.int32)
    rows = np.sort(rng.choice(len(col), 300, replace=False)).astype(np.int32)
    ref = np.zeros(600, np.uint8)
    ref[col[rows]] = 1
    assert np.array_equal(K.values_at(col, rows, 600), ref) and 100 < ref.sum() < 300
    assert K.values_at(col, np.empty(0, np.int32), 0).tolist() == [0]
    with pytest.raises(IndexError):
        K.values_at(col, rows, 10)  # a value past the flags
    with pytest.raises(IndexError):
        K.values_at(col, np.array([len(col)], np.int32), 600)  # a row past the column


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


def test_every_code_kernel_reads_one_two_and_four_byte_codes_alike():
    """The decoder stores name codes in the narrowest type their names fit (uint8 up to 256
    names, uint16, int32): every kernel that reads a code column answers the same for the
    same codes in each width."""
    rng = np.random.default_rng(11)
    cols = _random_stat_table(rng, 30_000)
    cols["name_code"] = rng.integers(0, 250, len(cols["owner"])).astype(np.int32)
    cols["name_code"][::5] = rng.integers(0, 4, len(cols["name_code"][::5]))  # the stats read
    line = np.sort(rng.integers(0, 6, len(cols["owner"]))).astype(np.int32)
    table = rng.random(250) < 0.3
    rows = np.sort(rng.choice(cols["owner"].max() + 1, 3_000, replace=False)).astype(np.int32)

    # producers and consumers for the context links: each event carries (pt, p) and
    # (ct, c) as codes 200-203, keys shared between events
    n_ev = 5_000
    link_owner = np.repeat(np.arange(n_ev, dtype=np.int32), 4)
    link_code = np.tile(np.arange(200, 204, dtype=np.int32), n_ev)
    e = np.arange(n_ev)
    link_raw = np.stack([e % 3, e % 11, (e + 1) % 3, (e + 1) % 11], 1).ravel().astype(np.int64)
    link_kind = np.full(len(link_raw), 3, np.int8)

    def answers(code):
        st = (code, cols["owner_kind"], cols["kind"], cols["raw"], cols["owner"])
        lc = link_code.astype(code.dtype)
        links = K.context_links(lc, np.zeros(len(lc), np.int8), link_kind, link_raw,
                                link_owner, (200, 201, 202, 203), (n_ev, n_ev),
                                (np.empty(0, np.int32), np.empty(0, np.int64),
                                 np.empty(0, np.int64)))
        return [K.code_lookup(code, table), K.code_gather(code, np.arange(250) * 3, fill=-1),
                K.code_rows(code, table), K.code_rows_multi(code, [table, ~table],
                                                            [len(code), len(code)]),
                K.code_counts(code, 250), K.select_rows(code, 3, cols["kind"], 3),
                K.line_name_rows(line, code, np.ones(6, bool), table, len(code)),
                K.stat_name_counts(code, cols["owner_kind"], 250),
                K.int_stats(*st, [0, 1, 2], [len(code)] * 3),
                K.stats_at(*st, [(1, rows), (2, rows)]), links]

    ref = answers(cols["name_code"])
    assert len(ref[2]) and len(ref[-1][0]) and ref[8][0][1].any()
    for dtype in (np.uint16, np.uint8):
        assert _same(answers(cols["name_code"].astype(dtype)), ref), dtype


@pytest.mark.parametrize("ids", ["dense", "repeated", "sparse"])
def test_join_on_ids_equals_the_hash_join(ids):
    """Launches and kernels joined on correlation ids: through a table when the launches'
    ids are distinct and dense, else the hash join; the same pairs in the same order either
    way (kernels' ids repeated, outside the launches' range or absent; limits)."""
    rng = np.random.default_rng(21)
    n = 50_000
    a_ids = rng.permutation(n).astype(np.int64) + 7
    if ids == "repeated":
        a_ids[::10] = a_ids[1::10]
    elif ids == "sparse":
        a_ids = a_ids * 1_000_003
    a_rows = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int32)
    b_ids = np.concatenate([rng.choice(a_ids, 30_000), rng.integers(-5, 10 * n, 5_000)])
    rng.shuffle(b_ids)
    b_rows = np.arange(len(b_ids), dtype=np.int32) * 3
    zeros = (np.zeros(n, np.int64), np.zeros(len(b_ids), np.int64))
    for limit in (0, 1, 2):
        ref = K.join_on_keys(a_rows, (zeros[0], a_ids), b_rows, (zeros[1], b_ids), limit)
        got = K.join_on_ids(a_rows, a_ids, b_rows, b_ids, limit)
        assert all(g.dtype == np.int32 for g in got)
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1]), limit
        assert limit != 0 or len(ref[0]) >= 30_000
