"""Pod view, tp.compare and name-scope stats."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
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


def test_pod_view_is_xprofs_pod_viewer():
    """Two TensorFlow workers that train each on its own (tests/data/tf_two_workers_loaded):
    their step numbers 1498-1581 are on both, a third of a second apart.  The pod view lays
    side by side the steps XProf's pod viewer aligns (by their times, each host's whole list:
    140 steps, not the 84 shared numbers), with XProf's step times and breakdowns, host by
    host; each row keeps its host's own step number."""
    from ..conftest import DATA
    from .oracle import run_tool

    run = DATA / "tf_two_workers_loaded"
    prof = tp.load(run)
    pod = prof.pod
    xprof = run_tool([run / f"{h}.xplane.pb" for h in prof.hosts], "pod_viewer")
    seq = xprof["podStatsSequence"]["podStatsMap"]
    names = {e["id"]: e["name"] for e in xprof["stepBreakdownEvents"]}
    columns = {"Device compute": "device_compute_ms", "Host compute": "host_compute_ms",
               "Input": "input_ms", "All others": "other_ms", "Output": "output_ms",
               "Kernel launch": "kernel_launch_ms", "Compilation": "compilation_ms",
               "Device to device": "device_to_device_ms",
               "Device collective communication": "device_collectives_ms"}
    assert pod.attrs["aligned"] and pod.step.nunique() == len(seq) == 140
    steps = sorted(pod.step.unique())
    for k, (step, record) in enumerate(zip(steps, seq)):
        assert record["stepNum"] == k
        ours = pod[pod.step == step]
        assert (ours.xprof_step == k).all()  # (a pod: XProf numbers the aligned steps from 0)
        # XProf numbers each host's cores from its place in the run (host i: i * 1000 + core)
        cores = sorted(record["podStatsPerCore"].items(), key=lambda kv: int(kv[0]))
        assert ours.host.tolist() == prof.hosts and len(cores) == 2
        for (_, row), (_, theirs) in zip(ours.iterrows(), cores):
            assert abs(row.duration_ms * 1e3 - theirs["totalDurationUs"]) < 1e-2
            for cat, us in theirs["stepBreakdownUs"].items():
                assert abs(row[columns[names[int(cat)]]] * 1e3 - us) < 1e-2, (step, cat)
            assert row.bottleneck == theirs["bottleneck"], step
    first = pod[pod.host == prof.hosts[0]]
    assert (first.host_step == first.step).all()
    other = pod[pod.host == prof.hosts[1]]
    assert (other.host_step != other.step).all()  # (the second numbers its own way)
    shared = set(prof.steps[prof.steps.host == prof.hosts[0]].index) & \
        set(prof.steps[prof.steps.host == prof.hosts[1]].index)
    assert len(shared) == 84


@pytest.mark.parametrize("name", ["jax_h200_inputbound.xplane.pb", "gpu_bert_multiworker"])
def test_one_hosts_pod_numbers_and_bottlenecks_are_xprofs(name):
    """One host: XProf's pod viewer numbers each step by its group id and names its largest
    category (XProf's names; ties to the last name) as its bottleneck: prof.pod's xprof_step
    and bottleneck, beside its own step numbers."""
    from ..conftest import DATA
    from .oracle import run_tool

    path = DATA / name
    prof = tp.load(path)
    files = sorted(path.glob("*.xplane.pb")) if path.is_dir() else path
    seq = run_tool(files, "pod_viewer")["podStatsSequence"]["podStatsMap"]
    pod = prof.pod
    assert len(pod) == len(seq) > 0
    assert pod.xprof_step.tolist() == [r["stepNum"] for r in seq]
    assert pod.xprof_step.tolist() == prof.steps.group_id.tolist()
    assert pod.bottleneck.tolist() == [next(iter(r["podStatsPerCore"].values()))["bottleneck"]
                                       for r in seq]


def test_the_pod_bottleneck_breaks_ties_as_xprof():
    """XProf sorts (time, name) pairs and takes the last: equal times go to the name last in
    alphabetical order (a step of zeros: 'Output')."""
    from tfprof_nb.analysis.steps.pod import _bottleneck
    from tfprof_nb.constants import CATEGORY_COLUMNS

    rows = pd.DataFrame({c: [0.0, 1.0, 2.0] for c in CATEGORY_COLUMNS})
    rows.loc[1, "input_ms"] = rows.loc[1, "compilation_ms"] = 3.0
    rows.loc[2, "device_idle_ms"] = 9.0  # (none of XProf's categories)
    assert _bottleneck(rows).tolist() == ["Output", "Input", "Output"]


def test_a_pods_worker_without_steps_leaves_the_pod_view_empty(tmp_path, cpu_file):
    """A CPU host with steps beside a GPU host without any: as in XProf, the host with a
    device is the pod's worker and the CPU host is left out, so no step lines up (xprof's
    pod_viewer has none either), and the view says why instead of drawing one host."""
    from tfprof_nb.widgets.dashboard_view import Dashboard

    from ..conftest import DATA
    from .oracle import run_tool

    shutil.copy(cpu_file, tmp_path / "cpu-host.xplane.pb")
    shutil.copy(DATA / "mi355x_jax_te_fused_attn.xplane.pb", tmp_path / "gpu-host.xplane.pb")
    prof = tp.load(tmp_path)
    assert set(prof.steps.host) == {"cpu-host"} and len(prof.steps)
    assert prof.pod.empty and prof.pod.attrs["aligned"]
    xprof = run_tool([tmp_path / f"{h}.xplane.pb" for h in prof.hosts], "pod_viewer")
    assert xprof["podStatsSequence"]["podStatsMap"] == []
    assert Dashboard(prof).reasons["pod"].startswith("No step lines up across the hosts")


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


def test_a_multiworker_pods_pod_viewer_and_verdict_are_xprofs():
    """Two MultiWorkerMirroredStrategy workers (tests/data/tf_multiworker_ring, RING
    collectives on CPU; worker-1 sleeps 5 ms a step): every step of XProf's pod viewer,
    number, durations, breakdown and bottleneck, is prof.pod's; XProf's verdict, which quotes
    the 'All Others' share (POTENTIALLY input-bound), is given with that share's scope, not
    with the input wait's figure."""
    from tfprof_nb.analysis.steps.xprof_counted import xprof_counted_mask

    from ..conftest import DATA
    from .oracle import run_tool, step_table

    run = DATA / "tf_multiworker_ring"
    prof = tp.load(run)
    files = [run / f"{h}.xplane.pb" for h in prof.hosts]
    seq = run_tool(files, "pod_viewer")["podStatsSequence"]["podStatsMap"]
    pod = prof.pod
    assert pod.attrs["aligned"] and len(pod) == 2 * len(seq) == 24
    for record in seq:
        ours = pod[pod.xprof_step == record["stepNum"]]
        cores = sorted(record["podStatsPerCore"].items(), key=lambda kv: int(kv[0]))
        assert ours.host.tolist() == prof.hosts == ["worker-0", "worker-1"]
        for (_, row), (_, theirs) in zip(ours.iterrows(), cores):
            assert abs(row.duration_ms * 1e3 - theirs["totalDurationUs"]) < 1e-2
            assert row.bottleneck == theirs["bottleneck"]
    ov = prof.overview()
    theirs = next(t["p"]["input_conclusion"] for t in run_tool(files, "overview_page")
                  if "input_conclusion" in t.get("p", {}))
    said, other = ov.verdict["statement"], ov.input_bound["all_other_pct"]
    assert theirs.startswith("Your program is POTENTIALLY input-bound because "
                             f"{other:.1f}% of the total step time sampled is spent on 'All "
                             "Others' time")
    assert said == f"{theirs} (XProf's rule: {other:.1f}% over the 10 steps XProf aligns " \
        "across 2 hosts (without each host's first and last where it has more than five; " \
        "worker-0's breakdown, over its own time in them).)"
    assert f"{ov.input_bound['input_pct']:.1f}" != f"{other:.1f}"
    # XProf's step table (its breakdown) holds worker-0's 10 aligned steps alone, its step
    # times both hosts' slowest: the step chart's subtitle says both
    ref = step_table(files)[0]
    counted = prof.steps[xprof_counted_mask(prof.steps)]
    first, second = (counted[counted.host == h] for h in prof.hosts)
    assert len(ref) == len(first) == len(second) == 10
    assert list(ref.stepnum) == list(first.step_name)
    for theirs, ours in (("infeedTimeMs", "input_ms"), ("hostComputeTimeMs", "host_compute_ms")):
        np.testing.assert_allclose(ref[theirs], first[ours], atol=1e-6)
    np.testing.assert_allclose(ref.stepTimeMs, first.duration_ms, atol=1e-6)  # (its rows)
    slowest = np.maximum(first.duration_ms.to_numpy(), second.duration_ms.to_numpy())
    assert (slowest > first.duration_ms.to_numpy()).any()  # (its step time: the slowest's)
    assert ov.step_time["avg_ms"] == pytest.approx(slowest.mean())
    assert f"{slowest.mean():.1f}" == next(t["p"]["steptime_ms_average"] for t in run_tool(
        files, "overview_page") if "steptime_ms_average" in t.get("p", {}))
    # the straggler is the host that finishes last (worker-1, which sleeps), and the advice
    # names it so: prof.pod's 'slowest' is another rule (the longest step)
    (straggler,) = [f for f in prof.recommendations() if f.kind == "straggler"]
    assert straggler.what.startswith("Host worker-1 finishes last in 12 of the 12 steps compared")
    assert "finishes last" in straggler.fix and "slowest" not in straggler.fix
    subtitle = prof.plot.step_time().layout.title.subtitle.text
    assert subtitle == ("faded: the 4 of 24 steps XProf's step times leave out (each host's "
                        "first and last, and those not aligned across the hosts); its "
                        "breakdown reads worker-0's alone")
