"""Remote and multi-worker capture over TensorFlow's gRPC profiler service, on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.steps.xprof_counted import xprof_steps
from tfprof_nb.xspace.decoder import read_local_xspace
from tfprof_nb.xspace.hardware_file import hardware_path_for, read_hardware

from ..analysis.oracle import step_table
from ..conftest import free_port, worker_ports

HERE = Path(__file__).resolve().parent


@pytest.fixture()
def two_workers():
    ports = worker_ports(2)
    procs = [subprocess.Popen([sys.executable, str(HERE / "remote_worker.py"), str(p), "60"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
             for p in ports]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        yield ports
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=30)


def test_two_workers_captured_together(two_workers, tmp_path):
    addrs = [f"grpc://127.0.0.1:{p}" for p in two_workers]
    with warnings.catch_warnings():
        warnings.simplefilter("error", tp.CaptureWarning)  # both workers serve their samples
        prof = tp.capture_remote(addrs, duration_ms=1500, logdir=str(tmp_path))
    assert set(prof.hosts) == {f"127.0.0.1_{p}" for p in two_workers}
    steps = prof.stat("step_num")
    per_host = prof.events.loc[steps.index, "host"].value_counts()
    for host in prof.hosts:  # each worker ran ~1.5 s of ~10 ms steps
        assert per_host[host] >= 20
    assert prof.aligned
    for port in two_workers:  # each worker's hardware samples of its own profile's span
        xplane = Path(prof.source[0]).parent / f"127.0.0.1_{port}.xplane.pb"
        space = read_local_xspace(xplane)
        hw = read_hardware(Path(hardware_path_for(str(xplane))).read_bytes())
        rss = hw.value[hw.series == hw.series_counter.index("process_rss_bytes")]
        times = np.unique(hw.time_ns)
        assert len(rss) >= 15 and hw.meta["period_ms"] == 50  # ~1.5 s at 50 ms
        assert space.profile_start_ns <= times.min() and times.max() <= space.profile_stop_ns
        assert (rss > 50e6).all()  # the worker's TensorFlow, not this process's numbers
    # XProf's step figures of a pod: each worker's steps aligned with the other's by their
    # overlap in time, a step's time the slower worker's, the breakdown the first worker's
    table, props = step_table([Path(prof.source[0]).parent / f"{h}.xplane.pb"
                               for h in prof.hosts])
    st, m = prof.overview().step_time, prof.measures
    assert st["counted"] == len(table) >= 10 and prof.steps.host.nunique() == 2
    for ours, key in ((st["avg_ms"], "steptime_ms_average"), (st["min_ms"], "steptime_ms_minimum"),
                      (st["max_ms"], "steptime_ms_maximum"),
                      (st["std_ms"], "steptime_ms_standard_deviation")):
        assert f"{ours:.1f}" == props[key], key
    first = xprof_steps(prof.steps)
    assert (first.host == prof.hosts[0]).all() and len(first) == len(table)
    assert np.allclose(first.duration_ms.to_numpy(), table.stepTimeMs.astype(float), atol=0.01)
    assert f"the {len(table)} steps XProf aligns across 2 hosts" in m.at["step_time_mean_ms",
                                                                          "scope"]


def test_unreachable_worker_fails_fast_naming_it():
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(tp.CaptureError, match=f"127.0.0.1:{port}"):
        tp.capture_remote(f"127.0.0.1:{port}", duration_ms=500)
    assert time.monotonic() - t0 < 10


def test_silent_server_times_out(tmp_path):
    """A port that accepts connections but never answers must not hang the caller."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        t0 = time.monotonic()
        with pytest.raises(tp.CaptureError):
            tp.capture_remote(f"127.0.0.1:{port}", duration_ms=200, timeout_s=8,
                              num_tracing_attempts=1)
        assert time.monotonic() - t0 < 20
    finally:
        srv.close()


@pytest.mark.parametrize("bad", ["", "nohost", "http://x:1", "grpc://x"])
def test_bad_addresses(bad):
    with pytest.raises(ValueError):
        tp.capture_remote(bad, duration_ms=100)


def test_remote_tracer_options_reach_the_worker(two_workers):
    """Host level 3 adds the TF ops' kernels and the Python tracer its "$..." events."""
    addr = f"127.0.0.1:{two_workers[0]}"
    closed = free_port()  # a worker without the hardware endpoint: one warning, no file
    with pytest.warns(tp.CaptureWarning, match=f"no hardware samples from grpc://{addr}"
                                               f" \\(port {closed}"):
        prof = tp.capture_remote(addr, duration_ms=400, host_tracer_level=1, hardware=[closed])
    assert not list(Path(prof.source[0]).parent.glob("*.hardware.npz"))
    low = set(prof.events["name"])
    high = set(tp.capture_remote(addr, duration_ms=400, host_tracer_level=3,
                                 python_tracer_level=1).events["name"])
    assert "train" in low and "train" in high
    for new in ("MatMul:", "$"):
        assert any(n.startswith(new) for n in high) and not any(n.startswith(new) for n in low)
