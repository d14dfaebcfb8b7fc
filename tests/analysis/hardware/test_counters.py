"""prof.counters: the hardware sampler's file and the profile's counter lines, on the real
H200 capture (tests/data/jax_h200_counters), on a CPU capture made here with tp.Capture, and
on copies without the sampler's file or with a broken one."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.hardware.counters import counter_unit, wide_counters

DATA = Path(__file__).resolve().parents[2] / "data" / "jax_h200_counters"
PB, NPZ = DATA / "vm.xplane.pb", DATA / "vm.hardware.npz"


@pytest.fixture(scope="module")
def prof():
    return tp.load(PB)


def _span_us(prof) -> tuple[float, float]:
    ev = prof.events
    return float(ev.start_us.min()), float((ev.start_us + ev.duration_us).max())


def test_sampler_series_inside_the_span_at_their_period(prof):
    c = prof.counters
    assert list(c.columns) == ["host", "device", "counter", "time_us", "value", "unit",
                               "source"]
    assert isinstance(c.host.dtype, pd.CategoricalDtype)
    sampler = c[c.source.str.startswith("sampler:")]
    assert set(sampler.device) == {"host", "GPU:0"}
    assert {"cpu_util_pct", "process_rss_bytes"} <= set(sampler[sampler.device == "host"].counter)
    assert {"gpu_util_pct", "power_w"} <= set(sampler[sampler.device == "GPU:0"].counter)
    lo, hi = _span_us(prof)
    assert sampler.time_us.min() >= lo and sampler.time_us.max() <= hi
    period = c.attrs["period_ms"]["vm"]
    assert period == 10
    for _, s in sampler.groupby(["device", "counter"]):
        gaps_ms = np.diff(s.time_us.to_numpy()) / 1e3
        assert abs(np.median(gaps_ms) - period) <= 0.2 * period
    assert any("nvlink" in n for n in c.attrs["notes"]["vm"])


def test_sampler_values_are_the_files_inside_the_span(prof):
    with np.load(NPZ) as npz:
        t, series, value = npz["time_ns"], npz["series"], npz["value"]
        counters, units = npz["series_counter"].astype(str), npz["series_unit"].astype(str)
    origin = prof.result("info")["vm"]["origin_ns"]
    t_us = (t - origin) / 1e3
    lo, hi = _span_us(prof)
    inside = (t_us >= lo) & (t_us <= hi)
    assert 0 < inside.sum() < len(t)  # the sampler ran past the profile: some are left out
    expected = pd.DataFrame({"counter": counters[series[inside]], "time_us": t_us[inside],
                             "value": value[inside], "unit": units[series[inside]]}) \
        .sort_values(["counter", "time_us"], kind="stable").reset_index(drop=True)
    c = prof.counters
    got = c[c.source.str.startswith("sampler:")].sort_values(["counter", "time_us"],
                                                             kind="stable")
    assert len(got) == len(expected)
    assert got.counter.tolist() == expected.counter.tolist()
    assert got.unit.tolist() == expected.unit.tolist()
    np.testing.assert_allclose(got.time_us, expected.time_us, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got.value, expected.value)


def _pm_samples(origin_ns: int) -> pd.DataFrame:
    """The PM samples read straight from the file with TensorFlow's protobuf (times in ps
    from ``origin_ns``)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace.FromString(PB.read_bytes())
    rows = []
    for plane in space.planes:
        names = {k: m.name for k, m in plane.stat_metadata.items()}
        for line in plane.lines:
            if line.name != "_counters_":
                continue
            # this GPU line's timestamp is relative to the profile start (the host lines'
            # are wall-clock times): both as the profiler means them
            base = line.timestamp_ns if line.timestamp_ns < 10**17 else \
                line.timestamp_ns - origin_ns
            for ev in line.events:
                (stat,) = ev.stats
                rows.append((plane.event_metadata[ev.metadata_id].name, names[stat.metadata_id],
                             base * 1000 + ev.offset_ps, stat.double_value))
    return pd.DataFrame(rows, columns=["counter", "stat", "time_ps", "value"])


def test_pm_samples_equal_the_files(prof):
    pm = _pm_samples(prof.result("info")["vm"]["origin_ns"])
    assert len(pm) == 363 and set(pm.counter) == {"sm__cycles_active.avg"}
    c = prof.counters
    got = c[c.source == "profile:_counters_"]
    # every PM sample is kept: they are events of the profile, inside its span by definition
    assert len(got) == 363 and set(got.device) == {"GPU:0"} and set(got.unit) == {"cycles"}
    pm = pm.sort_values("time_ps", kind="stable")
    np.testing.assert_allclose(got.time_us, pm.time_ps.astype(np.int64) / 1e6, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got.value, pm.value)


def test_sql_and_wide_layout(prof):
    n = prof.sql("select count(*) as n from counters where device = 'GPU:0' "
                 "and counter = 'gpu_util_pct'")
    c = prof.counters
    assert int(n.n[0]) == int(((c.device == "GPU:0") & (c.counter == "gpu_util_pct")).sum()) > 0
    wide = wide_counters(c)
    per_counter = {f"{k} [{u}]" for k, u in zip(c.counter, c.unit)}
    assert set(wide.columns) == {"host", "device", "time_us"} | per_counter
    assert wide["gpu_util_pct [%]"].notna().sum() == (c.counter == "gpu_util_pct").sum()


def test_cli_counters_wide_csv_has_one_column_per_counter(prof):
    run = subprocess.run([sys.executable, "-m", "tfprof_nb", "table", "counters", str(PB),
                          "--wide"], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert run.returncode == 0, run.stderr[-2000:]
    csv = pd.read_csv(io.StringIO(run.stdout))
    c = prof.counters
    assert list(csv.columns[:3]) == ["host", "device", "time_us"]
    assert sorted(csv.columns[3:]) == sorted({f"{k} [{u}]" for k, u in zip(c.counter, c.unit)})
    assert csv["sm__cycles_active.avg [cycles]"].notna().sum() == 363


def test_unit_from_the_name():
    assert [counter_unit(n) for n in ("% util", "dram_read_pct", "sm__cycles_active.avg",
                                      "dram__bytes_read.sum", "MXU")] == \
        ["%", "%", "cycles", "bytes", ""]


def test_without_the_file_no_sampler_rows(tmp_path):
    shutil.copy(PB, tmp_path / "vm.xplane.pb")
    c = tp.load(tmp_path / "vm.xplane.pb").counters
    assert set(c.source) == {"profile:_counters_"} and len(c) == 363
    assert c.attrs["period_ms"] == {}


def test_a_broken_file_warns_naming_it(tmp_path):
    shutil.copy(PB, tmp_path / "vm.xplane.pb")
    (tmp_path / "vm.hardware.npz").write_bytes(NPZ.read_bytes()[:1000])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        c = tp.load(tmp_path / "vm.xplane.pb").counters
    said = [str(w.message) for w in seen if issubclass(w.category, tp.LoadWarning)]
    assert len(said) == 1 and str(tmp_path / "vm.hardware.npz") in said[0]
    assert set(c.source) == {"profile:_counters_"}
    assert "could not be read" in c.attrs["notes"]["vm"][0]


def test_read_from_an_object_store(s3_server, s3_bucket, object_cache):
    import s3fs

    fs = s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.options())
    fs.put_file(str(PB), f"{s3_bucket}/run/vm.xplane.pb")
    fs.put_file(str(NPZ), f"{s3_bucket}/run/vm.hardware.npz")
    remote = tp.load(f"s3://{s3_bucket}/run/", storage_options=s3_server.options()).counters
    local = tp.load(PB).counters
    pd.testing.assert_frame_equal(remote, local)


_CAPTURE = textwrap.dedent("""
    import sys, time
    import tensorflow as tf
    import tfprof_nb as tp

    x = tf.random.normal([256, 256])
    step = tf.function(lambda x: tf.reduce_sum(tf.matmul(x, x)))
    step(x)
    with tp.Capture(steps=8, warmup=1, logdir=sys.argv[1], progress=False) as cap:
        for _ in cap.iterate(range(100)):
            end = time.perf_counter() + 0.08
            while time.perf_counter() < end:
                step(x)
    print(cap.run_dir)
""")


@pytest.fixture(scope="module")
def cpu_capture(tmp_path_factory) -> Path:
    """The run directory of a real TensorFlow CPU capture made with tp.Capture (the sampler
    at its default period)."""
    logdir = tmp_path_factory.mktemp("hardware_capture")
    run = subprocess.run([sys.executable, "-c", _CAPTURE, str(logdir)], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert run.returncode == 0, run.stderr[-3000:]
    return Path(run.stdout.strip().splitlines()[-1])


def test_cpu_capture_has_host_counters_at_the_default_period(cpu_capture):
    assert list(cpu_capture.glob("*.hardware.npz"))
    prof = tp.load(cpu_capture)
    c = prof.counters
    (host,) = prof.hosts
    assert c.attrs["period_ms"] == {host: 50}
    sampler = c[c.source.str.startswith("sampler:")]  # (psutil, or /proc read directly)
    assert set(sampler.device) == {"host"}
    assert {"cpu_util_pct", "process_cpu_pct", "process_rss_bytes",
            "memory_available_bytes"} <= set(sampler.counter)
    lo, hi = _span_us(prof)
    assert sampler.time_us.min() >= lo and sampler.time_us.max() <= hi
    rss = sampler[sampler.counter == "process_rss_bytes"]
    assert len(rss) >= 5 and (rss.value > 0).all()
    gaps_ms = np.diff(rss.time_us.to_numpy()) / 1e3
    assert abs(np.median(gaps_ms) - 50) <= 0.2 * 50
    # TensorFlow's host ops take the host's samples only
    oc = prof.op_counters
    assert set(oc.kind) <= {"tf_op"} and set(oc.device) <= {"host"}
    assert (oc.samples >= 1).all() and oc["mean"].isna().eq(oc.samples < 5).all()
