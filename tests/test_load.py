"""tp.load: path resolution, the events table, stats access, hosts and time."""

from __future__ import annotations

import os
import shutil
import time

import numpy as np
import pandas as pd

import tfprof_nb as tp
from tfprof_nb.xspace import read_xspace

from .conftest import xplane_files


def test_load_logdir_run_dir_file_and_list(cpu_logdir):
    (f,) = xplane_files(cpu_logdir)
    by_logdir = tp.load(cpu_logdir)
    by_run = tp.load(f.parent)
    by_file = tp.load(f)
    by_list = tp.load([f])
    by_plugins = tp.load(cpu_logdir / "plugins" / "profile")
    n = len(read_xspace(f).events)
    for prof in (by_logdir, by_run, by_file, by_list, by_plugins):
        assert prof.hosts == [f.name[: -len(".xplane.pb")]]
        assert len(prof.events) == n
    assert by_logdir.source == [str(f)]


def test_logdir_picks_newest_run(tmp_path, cpu_file, gpu_fixture_file):
    runs = tmp_path / "plugins" / "profile"
    old, new = runs / "2024_01_01_00_00_00", runs / "2025_06_01_00_00_00"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    shutil.copy(gpu_fixture_file, old / "a.xplane.pb")
    shutil.copy(cpu_file, new / "b.xplane.pb")
    os.utime(old / "a.xplane.pb", (time.time() + 100, time.time() + 100))
    assert tp.load(tmp_path).hosts == ["b"]


def test_run_dir_with_several_hosts(tmp_path, cpu_file, gpu_fixture_file):
    shutil.copy(cpu_file, tmp_path / "worker-1.xplane.pb")
    shutil.copy(gpu_fixture_file, tmp_path / "worker-0.xplane.pb")
    prof = tp.load(tmp_path)
    assert prof.hosts == ["worker-0", "worker-1"]
    ev = prof.events
    n0 = len(read_xspace(gpu_fixture_file).events)
    n1 = len(read_xspace(cpu_file).events)
    assert len(ev) == n0 + n1
    assert ev["host"].value_counts().to_dict() == {"worker-0": n0, "worker-1": n1}
    # names from both hosts share one categorical
    assert "train" in set(ev.loc[ev.host == "worker-1", "name"].astype(str))
    assert ev.index.is_monotonic_increasing and ev.index[-1] == n0 + n1 - 1
    # stats keep pointing at the right rows across hosts
    steps = prof.stat("step_num")
    assert (ev.loc[steps.index, "name"] == "train").all()
    assert sorted(steps.tolist()) == list(range(8))


def test_events_columns_and_types(cpu_file):
    ev = tp.load(cpu_file).events
    for col in ("host", "plane", "line", "name"):
        assert isinstance(ev[col].dtype, pd.CategoricalDtype), col
    assert {"start_us", "duration_us"} <= set(ev.columns)
    assert ev["start_us"].dtype == np.float64
    assert (ev["duration_us"] >= 0).all()
    # Task Environment gives the profile start: events start right after it
    assert ev["start_us"].min() >= 0
    assert ev["start_us"].min() < 1e6


def test_time_range_from_task_environment(cpu_file):
    prof = tp.load(cpu_file)
    assert prof.start_time is not None and prof.stop_time > prof.start_time
    ev = prof.events
    end = (ev.start_us + ev.duration_us).max()
    assert end <= prof.duration_us * 1.01 + 1


def test_stat_values_are_typed(cpu_file, gpu_fixture_file):
    prof = tp.load(cpu_file)
    step = prof.stat("step_num")
    assert step.dtype == np.int64 and len(step) == 8
    # iterator events carry a ref-valued "name" stat, resolved to a string
    names = prof.stat("name")
    assert isinstance(names.dtype, pd.CategoricalDtype) and len(names) > 0
    gpu = tp.load(gpu_fixture_file)
    frag = gpu.stat("fragmentation")
    assert frag.dtype == np.float64
    assert gpu.stat("kernel_details").str.contains("regs:").all()
    assert len(gpu.stat("no such stat")) == 0


def test_event_stats_joins_columns(cpu_file):
    prof = tp.load(cpu_file)
    trains = prof.events[prof.events.name == "train"]
    joined = prof.event_stats(["step_num", "_r"], trains)
    assert joined["step_num"].tolist() == list(range(8))
    assert (joined["_r"] == 1).all()


def test_planes_and_lines_tables(gpu_fixture_file):
    prof = tp.load(gpu_fixture_file)
    planes = prof.planes
    gpu1 = planes[planes.plane == "/device:GPU:1"].iloc[0]
    assert gpu1["stats"]["core_count"] == 80 and gpu1["events"] == 19
    assert planes.events.sum() == len(prof.events)
    assert prof.lines.events.sum() == len(prof.events)


def test_summary_and_repr(cpu_file):
    prof = tp.load(cpu_file)
    assert "1 host" in prof.summary() and "/host:CPU" in prof.summary()
    assert "events=" in repr(prof)


def test_hosts_with_wall_clock_starts_share_one_time_axis(tmp_path, cpu_file, cpu_python_file):
    shutil.copy(cpu_file, tmp_path / "a.xplane.pb")
    shutil.copy(cpu_python_file, tmp_path / "b.xplane.pb")
    prof = tp.load(tmp_path)
    assert prof.aligned
    a, b = read_xspace(cpu_file), read_xspace(cpu_python_file)
    ev = prof.events
    first = ev.groupby("host", observed=True)["start_ps"].min()
    own = {"a": int(a.event_start_ps().min()), "b": int(b.event_start_ps().min())}
    origin = min(a.profile_start_ns, b.profile_start_ns)
    assert first["a"] == own["a"] + (a.profile_start_ns - origin) * 1000
    assert first["b"] == own["b"] + (b.profile_start_ns - origin) * 1000
    assert prof.start_time.value == origin


def test_hosts_captured_far_apart_keep_their_own_time_axes(cpu_file):
    """A capture of today and one of another year: one picosecond axis for both would not fit
    int64, so each keeps its own (times from its own start) and the events table still loads."""
    from .conftest import DATA

    far = DATA / "mi300x_jax08_gemm.xplane.pb"  # captured by others, months before cpu_file
    prof = tp.load([cpu_file, far])
    assert not prof.aligned
    events = prof.events
    assert len(events) == prof.n_events
    for host in prof.hosts:
        assert events[events.host == host].start_us.min() >= 0
        alone = tp.load(cpu_file if host == cpu_file.name[:-len(".xplane.pb")] else far)
        assert events[events.host == host].start_us.max() == alone.events.start_us.max()
