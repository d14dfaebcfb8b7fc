"""The per-host engine in this process: partial results per host, hosts that cannot be read,
a failing host, and the memory check before loading."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis import engine, registry
from tfprof_nb.analysis.engine import HostAnalysisError


@pytest.fixture()
def pod_dir(tmp_path, cpu_file, gpu_fixture_file):
    """Three hosts: two copies of a CPU capture and the GPU fixture."""
    shutil.copy(cpu_file, tmp_path / "worker-0.xplane.pb")
    shutil.copy(cpu_file, tmp_path / "worker-1.xplane.pb")
    shutil.copy(gpu_fixture_file, tmp_path / "worker-2.xplane.pb")
    return tmp_path


def test_tables_are_the_hosts_partials_combined(pod_dir, cpu_file):
    prof = tp.load(pod_dir)
    single = tp.load(cpu_file)
    steps = prof.steps
    assert set(steps.host) == {"worker-0", "worker-1", "worker-2"}
    one = steps[steps.host == "worker-0"].drop(columns="host")
    pd.testing.assert_frame_equal(one, single.steps.drop(columns="host"))
    parts = prof.host_partials("steps")
    assert list(parts) == prof.hosts
    assert sum(len(p) for p in parts.values()) == len(steps)
    # host-side op stats add up over the two identical CPU hosts
    ops = prof.op_stats_table(include_idle=False)
    ours = ops[ops.host_or_device == "Host"].set_index("operation")
    theirs = single.op_stats_table(include_idle=False).set_index("operation")
    cpu_only = theirs[theirs.host_or_device == "Host"].index.intersection(ours.index)
    gpu_host_ops = set(tp.load(pod_dir / "worker-2.xplane.pb").op_stats.operation)
    solely_cpu = [op for op in cpu_only if op not in gpu_host_ops]
    assert solely_cpu
    np.testing.assert_allclose(ours.loc[solely_cpu, "occurrences"],
                               2 * theirs.loc[solely_cpu, "occurrences"])
    # memory timeline event ids point at the right global rows
    assert prof.memory_timeline.event_id.isin(prof.events.index).all()


def test_every_step_is_registered_and_small(cpu_file):
    prof = tp.load(cpu_file)
    hd = prof._results.hosts.data[prof.hosts[0]]
    host_steps = [n for n in registry.order(registry.analyses()) if registry.get(n).host]
    for step in host_steps:
        needs = {n: registry.run_host_step(hd, n, 0) for n in registry.get(step).host_needs}
        registry.run_host_step(hd, step, 0, **needs)
    assert {"info", "steps", "host_ops", "device_ops", "kernel_stats", "memory",
            "tf_data", "xla_ops", "framework"} <= set(host_steps)
    with pytest.raises(ValueError, match="unknown analysis"):
        registry.run_host_step(hd, "no such step")
    # derived per-event arrays do not outlive a step
    assert all(not isinstance(v, np.ndarray) or len(v) < len(hd) or key == "line"
               for key, v in hd._cache.items())


def test_corrupt_host_is_left_out_and_named(pod_dir):
    (pod_dir / "worker-1.xplane.pb").write_bytes(b"\x0a\xff\xff\xff\xff\x0f garbage")
    with pytest.warns(tp.LoadWarning, match="worker-1"):
        prof = tp.load(pod_dir)
    assert prof.hosts == ["worker-0", "worker-2"]
    assert list(prof.load_errors) == ["worker-1"]
    assert "worker-1.xplane.pb" in prof.load_errors["worker-1"]
    assert "worker-1" in prof.summary() and "not loaded" in prof.summary()
    assert set(prof.steps.host) == {"worker-0", "worker-2"}
    with pytest.raises(tp.ProfileFormatError, match="worker-1.xplane.pb"):
        tp.load(pod_dir, strict=True)


def test_no_readable_host_is_an_error(tmp_path):
    (tmp_path / "a.xplane.pb").write_bytes(b"%PDF-1.4 not a profile")
    with pytest.raises(tp.ProfileFormatError, match="no host could be read"):
        tp.load(tmp_path)


def test_a_failing_host_is_named_and_the_others_are_kept(pod_dir):
    prof = tp.load(pod_dir)
    prof.host_partials("info")
    # the decoded columns of one host are damaged after loading (a bug in our code would look
    # the same): its analysis fails, the others still have their results
    hd = prof._results.hosts.data["worker-1"]
    hd.space.events.line = hd.space.events.line[:10]
    with pytest.raises(HostAnalysisError) as info:
        prof.steps
    assert info.value.host == "worker-1" and info.value.step == "steps"
    assert "worker-1" in str(info.value)
    kept = prof._results.hosts._partials
    assert ("steps", "worker-0") in kept and ("steps", "worker-2") in kept


def test_too_big_for_this_machine_fails_before_decoding(pod_dir, monkeypatch):
    monkeypatch.setattr(engine, "available_memory", lambda: 4096)
    with pytest.raises(MemoryError, match="client=") as info:
        tp.load(pod_dir)
    assert "3 host file(s)" in str(info.value)
