"""Pod view, tp.compare and name-scope stats."""

from __future__ import annotations

import shutil

import pytest

import tfprof_nb as tp


def test_pod_view_of_two_workers(tmp_path, cpu_file):
    shutil.copy(cpu_file, tmp_path / "worker-0.xplane.pb")
    shutil.copy(cpu_file, tmp_path / "worker-1.xplane.pb")
    prof = tp.load(tmp_path)
    pod = prof.pod
    assert set(pod.host) == {"worker-0", "worker-1"}
    assert len(pod) == 2 * len(prof.steps[prof.steps.host == "worker-0"])
    assert (pod.lag_ms == 0).all()  # identical workers
    per_step = pod.groupby("step").slowest.sum()
    assert (per_step == 2).all()  # a tie: both are the slowest


def test_compare_profiles(cpu_file, cpu_slowmap_logdir):
    a, b = tp.load(cpu_file), tp.load(cpu_slowmap_logdir)
    same = tp.compare(a, a)
    assert same.speedup == pytest.approx(1.0)
    assert (same.steps.delta == 0).all() and (same.ops.delta == 0).all()
    diff = tp.compare(a, b, labels=("fast input", "slow input"))
    row = diff.steps.loc["input_ms"]
    assert row.b > row.a and row.delta == pytest.approx(row.b - row.a)
    assert diff.speedup < 1
    assert "slow input" in repr(diff)
    assert diff.ops.index.names == ["host_or_device", "operation"]


def test_scope_stats_tree(gpu_fixture_file):
    prof = tp.load(gpu_fixture_file)
    scopes = prof.scope_stats(side="all")
    top = scopes[scopes.depth == 0]
    assert len(top) >= 2
    # a parent's time and bytes include its children's
    by_scope = scopes.set_index("scope")
    for _, row in scopes[scopes.depth == 1].iterrows():
        parent = by_scope.loc[row.parent]
        assert parent.self_time_us >= row.self_time_us - 1e-6
        assert parent.allocated_bytes >= row.allocated_bytes
    big = prof.scope_stats(min_bytes=10**9, max_depth=2, side="all")
    assert (big.allocated_bytes >= 10**9).all() and big.depth.max() <= 2 and len(big) > 0
