"""The native critical path walk (``tfp_cp_walk``) gives exactly the segments of the Python walk
it replaced (:mod:`tests.analysis.critical.reference_walk`): every step of real captures with
steps and of the synthetic tf.data XSpaces, plus windows cut anywhere in those graphs."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp
from tests.analysis.critical.reference_walk import ReferenceWalker
from tests.analysis.critical.test_path import DATA, _space
from tests.analysis.critical.test_tf_data_replay import ASYNC_RUN, DISPATCH, PRODUCER
from tfprof_nb.analysis.critical.walk import SEGMENT_KINDS, resource_spans, walk_windows

# real captures with steps whose graphs hold every kind of node (host, device, tf.data)
CAPTURES = ["jax_h100_nocmdbuf.xplane.pb", "jax_h200_inputbound.xplane.pb",
            "jax_h200_nocmdbuf.xplane.pb", "jax_h200_transformer.xplane.pb",
            "tpu_v6e_jax_inference.xplane.pb", "gpu_bert_multiworker",
            "jax_h200_counters/vm.xplane.pb"]


def _reference(g, t0, t1) -> list[tuple]:
    w = ReferenceWalker(g)
    out = []
    for i, (a, b) in enumerate(zip(t0.tolist(), t1.tolist())):
        out += [(i, s.start, s.end, s.resource, s.category, s.kind, s.node, s.waited_on)
                for s in w.walk(a, b)[::-1]]
    return out


def _native(g, t0, t1) -> list[tuple]:
    s = walk_windows(g, t0, t1)
    kinds = [SEGMENT_KINDS[k] for k in s["kind"].tolist()]
    return list(zip(s["window"].tolist(), s["start"].tolist(), s["end"].tolist(),
                    s["resource"].tolist(), s["category"].tolist(), kinds, s["node"].tolist(),
                    s["waited_on"].tolist()))


def _windows(rg, rng) -> tuple[np.ndarray, np.ndarray]:
    """Each step's window, then windows cut anywhere over the graph (some empty or reversed,
    some before its first event or after its last)."""
    g = rg.graph
    lo, hi = int(g.begin.min()), int(g.end.max())
    a = rng.integers(lo - (hi - lo) // 10, hi + (hi - lo) // 10, 40)
    b = a + rng.integers(-(hi - lo) // 20, (hi - lo) // 3, 40)
    ends = rng.choice(np.concatenate([g.end, g.begin]), 20)  # (at an event's end or start)
    return (np.concatenate([rg.t0, a, ends - (hi - lo) // 50]),
            np.concatenate([rg.t1, b, ends]))


def _check(prof, seed=0):
    graphs = [rg for rg in prof.result("replay_graph").values() if rg is not None]
    assert graphs
    rng = np.random.default_rng(seed)
    for rg in graphs:
        t0, t1 = _windows(rg, rng)
        want = _reference(rg.graph, t0, t1)
        assert want  # (the steps' windows have paths)
        assert _native(rg.graph, t0, t1) == want


@pytest.mark.parametrize("name", CAPTURES)
def test_the_native_walk_is_the_python_walk_on_real_captures(name):
    _check(tp.load(DATA / name))


def test_the_native_walk_is_the_python_walk_on_a_tf_cpu_capture(cpu_file):
    _check(tp.load(cpu_file))


@pytest.mark.parametrize("planes", [DISPATCH, PRODUCER, ASYNC_RUN],
                         ids=["dispatch", "producer", "async_run"])
def test_the_native_walk_is_the_python_walk_on_tf_data_xspaces(tmp_path, planes):
    path = tmp_path / "space.xplane.pb"
    path.write_bytes(_space(planes))
    _check(tp.load(path))


def test_resource_spans_are_numpys_unique_runs():
    for res in (np.array([3, 3, 5, 7, 7, 7], np.int32), np.array([5, 5, 3, 7], np.int32),
                np.zeros(0, np.int32), np.array([2, 2, 1, 2], np.int32)):
        keys, lo, hi = resource_spans(res)
        want_keys, want_lo = np.unique(res, return_index=True)
        assert keys.tolist() == want_keys.tolist() and lo.tolist() == want_lo.tolist()
        assert hi.tolist() == np.append(want_lo[1:], len(res)).tolist()


def test_bad_node_references_are_refused():
    from tfprof_nb._native.kernels.critical_kernel import critical_walk

    one = np.zeros(1, np.int64)
    nodes = {"begin": one, "end": one + 1, "parent": one - 1, "resource": np.zeros(1, np.int32),
             "category": np.zeros(1, np.int8), "is_device": np.zeros(1, bool),
             "start_src": one + 1, "start_kind": np.zeros(1, np.int8), "end_src": one - 1,
             "end_kind": np.zeros(1, np.int8)}
    spans = (np.zeros(1, np.int32), np.zeros(1, np.int64), np.ones(1, np.int64))
    with pytest.raises(ValueError, match="node references"):
        critical_walk(nodes, spans, np.arange(8), one, one + 1)
    nodes["start_src"] = one - 1
    assert len(critical_walk(nodes, spans, np.arange(8), one, one + 1)["start"]) == 1


def _same_segments(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


@pytest.mark.parametrize("name", ["jax_h200_inputbound.xplane.pb", "gpu_bert_multiworker"])
def test_windows_walked_on_two_threads_give_the_segments_of_one(name):
    """The later half of the windows walked on a helper thread: the same columns, windows
    numbered across both halves; a single window stays on one thread."""
    for rg in (r for r in tp.load(DATA / name).result("replay_graph").values() if r is not None):
        t0, t1 = _windows(rg, np.random.default_rng(1))
        for n in (len(t0), len(t0) - 1, 2, 1, 0):
            one = walk_windows(rg.graph, t0[:n], t1[:n], threads=1)
            _same_segments(walk_windows(rg.graph, t0[:n], t1[:n], threads=2), one)


def test_walk_parts_taken_together_are_one_walk(cpu_file):
    from tfprof_nb._native.kernels.critical_kernel import take_walks, walk_graph, walk_part

    rg = next(r for r in tp.load(cpu_file).result("replay_graph").values() if r is not None)
    g = rg.graph
    nodes = {k: getattr(g, k) for k in ("begin", "end", "parent", "resource", "category",
                                        "start_src", "start_kind", "end_src", "end_kind")}
    nodes["is_device"] = np.zeros(len(g), bool)
    graph = walk_graph(nodes, resource_spans(g.resource), np.arange(8))
    cuts = [0, 1, 1, len(rg.t0) // 3, len(rg.t0)]
    parts = [walk_part(graph, rg.t0[a:b], rg.t1[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    _same_segments(take_walks(parts), take_walks([walk_part(graph, rg.t0, rg.t1)]))
    assert all(p.handle is None for p in parts)  # (freed)


def _chain_graph(n: int):
    """One thread of ``n`` top-level events with gaps: about two walk steps an event."""
    from tfprof_nb.analysis.critical.graph import DepGraph, EveryRow

    begin = np.arange(n, dtype=np.int64) * 10
    none32, zero8 = np.full(n, -1, np.int32), np.zeros(n, np.int8)
    return DepGraph(EveryRow(n), np.zeros(n, np.int32), begin, begin + 5, zero8.copy(),
                    none32, none32.copy(), zero8.copy(), none32.copy(), zero8.copy(),
                    {0: "h / t"}, np.zeros(n, bool))


def test_a_cancelled_run_stops_both_halves_of_a_walk_and_only_its_own():
    from tfprof_nb import _native
    from tfprof_nb.errors import Cancelled

    n = 2_400_000  # (each half walks 3 windows, over a million steps: polls its token then)
    g = _chain_graph(n)
    t0 = np.arange(6, dtype=np.int64) * (10 * n // 6)
    t1 = t0 + 10 * n // 6
    token = _native.CancelToken()
    with _native.cancel_scope(token):
        token.cancel()
        with pytest.raises(Cancelled):
            walk_windows(g, t0, t1, threads=2)
        with pytest.raises(Cancelled):  # (only the helper's half polls: its two windows)
            walk_windows(g, np.array([0, 10, 0, 5 * n]), np.array([5, 15, 5 * n, 10 * n]),
                         threads=2)
        with _native.cancel_scope(_native.CancelToken()):  # another run's token
            two = walk_windows(g, t0, t1, threads=2)
    _same_segments(two, walk_windows(g, t0, t1, threads=1))
    assert len(two["start"]) >= n and two["window"][-1] == 5
