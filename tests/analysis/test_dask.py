"""Pods on Dask: hosts decoded and analysed on the workers of a real LocalCluster (two worker
processes); only partial results travel, and the tables equal the local ones."""

from __future__ import annotations

import os
import shutil
import time

import distributed  # installed by `make test` (the tfprof-nb[dask] extra)
import pandas as pd
import pytest

import tfprof_nb as tp

TABLES = ["steps", "op_stats", "kernel_stats", "memory_summary", "memory_timeline",
          "memory_breakdown", "pod", "planes", "lines", "gpu_utilization", "gpu_overlap",
          "duty_cycle", "stragglers"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture()
def pod_dir(tmp_path, cpu_file, cpu_slowmap_logdir, gpu_fixture_file):
    from ..conftest import xplane_files

    shutil.copy(cpu_file, tmp_path / "worker-0.xplane.pb")
    shutil.copy(xplane_files(cpu_slowmap_logdir)[0], tmp_path / "worker-1.xplane.pb")
    shutil.copy(gpu_fixture_file, tmp_path / "worker-2.xplane.pb")
    return tmp_path


def _same(a, b):
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    else:
        assert a == b


def test_dask_results_equal_local_ones(client, pod_dir):
    local = tp.load(pod_dir)
    remote = tp.load(pod_dir, client=client, timeout=120)
    assert remote.hosts == local.hosts == ["worker-0", "worker-1", "worker-2"]
    # the hosts live on the workers: nothing decoded came over yet
    assert not remote.spaces._fetched
    for name in TABLES:
        _same(getattr(remote, name), getattr(local, name))
    for a, b in zip(remote.input_pipeline.__dict__.values(),
                    local.input_pipeline.__dict__.values()):
        _same(a, b)
    for a, b in zip(remote.tf_data.__dict__.values(), local.tf_data.__dict__.values()):
        _same(a, b)
    pd.testing.assert_frame_equal(remote.scope_stats(), local.scope_stats())
    assert [str(f) for f in remote.recommendations()] == \
        [str(f) for f in local.recommendations()]
    assert remote.summary() == local.summary()
    assert not remote.spaces._fetched  # every analysis ran on the workers
    # one host's events come over on demand
    pd.testing.assert_frame_equal(remote.events, local.events)
    assert set(remote.spaces._fetched) == set(remote.hosts)


def test_dask_corrupt_host_is_named(client, pod_dir):
    (pod_dir / "worker-1.xplane.pb").write_bytes(b"not a profile at all")
    with pytest.warns(tp.LoadWarning, match="worker-1"):
        prof = tp.load(pod_dir, client=client, timeout=120)
    assert prof.hosts == ["worker-0", "worker-2"]
    assert "worker-1.xplane.pb" in prof.load_errors["worker-1"]
    assert set(prof.steps.host) == {"worker-0", "worker-2"}
    with pytest.raises(tp.ProfileFormatError, match="worker-1.xplane.pb"):
        tp.load(pod_dir, client=client, on_error="raise", timeout=120)


def test_a_dead_worker_gives_a_clear_error_in_bounded_time(client, pod_dir):
    """The worker holding one host dies and that host's file is gone by then, so Dask cannot
    rebuild it: the error names the host, comes within the timeout, and the other hosts'
    results are kept.  With on_error="raise" it raises; here ("skip", the default) the host
    is left out of that table with its reason, and the table of the others is made."""
    prof = tp.load(pod_dir, client=client, timeout=60)
    prof._results.partials("steps")  # every host analysed once
    victim = "worker-1"
    os.remove(pod_dir / f"{victim}.xplane.pb")
    future = prof._results.hosts.futures[victim]
    holders = list(client.who_has([future]).get(future.key, ()))
    assert holders
    try:
        client.run(os._exit, 1, workers=holders)
    except Exception:  # the worker dies while answering
        pass
    t0 = time.monotonic()
    with pytest.warns(tp.AnalysisWarning, match=f"{victim} \\(host_ops\\)"):
        parts = prof._results.partials("host_ops")
    assert time.monotonic() - t0 < 90
    assert list(parts) == ["worker-0", "worker-2"]
    assert list(prof.skipped("host_ops")) == [victim]
    assert "host_ops" in prof.skipped("host_ops")[victim]
    assert ("steps", victim) in prof._results.hosts._partials  # computed before the loss
    assert prof.hosts == ["worker-0", "worker-1", "worker-2"]


def test_dask_sql_keeps_events_on_the_workers(client, pod_dir):
    remote = tp.load(pod_dir, client=client, timeout=120)
    local = tp.load(pod_dir)
    with pytest.raises(ValueError, match="events stay on the workers"):
        remote.sql("SELECT count(*) FROM events")
    with pytest.raises(ValueError, match="events stay on the workers"):
        remote.sql("SELECT count(*) FROM stats")
    query = ("SELECT host, count(*) AS n, sum(duration_ms) AS ms FROM steps GROUP BY host "
             "ORDER BY host")
    pd.testing.assert_frame_equal(remote.sql(query), local.sql(query))
    assert not remote.spaces._fetched  # nothing decoded came over for SQL


def test_dask_loads_a_window_as_this_process_does(client, pod_dir):
    """tp.load(window=, lines=) on the workers: each host scanned there, the same part."""
    events = tp.load(pod_dir).events
    first = events[events.host == "worker-0"]
    lo, hi = first.start_us.min(), (first.start_us + first.duration_us).max()
    window = (lo + (hi - lo) * 0.4, lo + (hi - lo) * 0.6)
    here = tp.load(pod_dir, window=window)
    remote = tp.load(pod_dir, client=client, timeout=120, window=window)
    assert 0 < len(here.events) < len(events)
    pd.testing.assert_frame_equal(remote.events, here.events)
    pd.testing.assert_frame_equal(remote.steps, here.steps)
