"""A monitor's window saved off the training thread (``monitor_saving``) and analysed in the
worker process (``monitor_worker``), with real JAX captures."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.capturing import backends, monitor_worker
from tfprof_nb.capturing.monitor_values import window_values


@pytest.fixture(scope="module")
def jax_step():
    jax = pytest.importorskip("jax")
    step = jax.jit(lambda w: jax.numpy.tanh(w @ w))
    w = jax.numpy.ones((64, 64))
    step(w).block_until_ready()
    return step, w


def test_window_saved_off_the_training_thread_and_analysed_in_the_worker(jax_step,
                                                                        monkeypatch):
    """Each window's profiler stop runs on a thread other than the training thread and
    writes only the .xplane.pb (no trace.json.gz); the worker's row values equal the same
    window analysed in this process."""
    step, w = jax_step
    stops = []
    real_stop = backends.JaxProfiler.stop

    def stop(self, trace_json=True):
        stops.append((threading.get_ident(), trace_json))
        real_stop(self, trace_json)

    monkeypatch.setattr(backends.JaxProfiler, "stop", stop)
    mon = tp.Monitor(every_steps=20, steps=3, warmup=2, backend="jax", max_pending=10)
    for _ in mon.iterate(range(45)):
        step(w).block_until_ready()
    hist = mon.wait()
    assert list(hist.status) == ["analysed"] * 3
    assert len(stops) == 3 and threading.get_ident() not in {t for t, _ in stops}
    assert {trace_json for _, trace_json in stops} == {False}
    files = [p.name for p in Path(hist.run.iloc[0]).iterdir()]
    assert [f for f in files if f.endswith(".xplane.pb")] and \
        not [f for f in files if f.endswith(".trace.json.gz")]
    assert monitor_worker._WORKER.proc is not None  # the rows came from the worker
    values, step_ms = window_values(mon.window(1))  # here, in this process
    row = hist.iloc[1]
    assert row.median_step_ms == pytest.approx(values["median_step_ms"])
    assert row.top_op == values["top_op"] and len(step_ms) == row.steps == 3


def test_a_capture_right_after_a_window_waits_for_its_save(jax_step, tmp_path):
    """A session started while a window is still being saved (one profiler session per
    process) starts once the save ended, instead of failing."""
    step, w = jax_step
    mon = tp.Monitor(every_steps=100, steps=2, warmup=1, backend="jax")
    for _ in mon.iterate(range(3)):  # the window closes at the last step: saved meanwhile
        step(w).block_until_ready()
    prof = tp.capture(lambda _: step(w).block_until_ready(), range(5), steps=2, warmup=0,
                      logdir=str(tmp_path), backend="jax", progress=False)
    assert len(prof.steps) == 2
    assert list(mon.wait().status) == ["analysed"]


def test_worker_reports_an_unreadable_window(tmp_path):
    """A window whose run cannot be read fails with the loader's error text, and the
    worker answers the next request."""
    with pytest.raises(monitor_worker.AnalysisFailed, match="ProfileFileNotFoundError"):
        monitor_worker.analyse_run(tmp_path / "missing")
    with pytest.raises(monitor_worker.AnalysisFailed):
        monitor_worker.analyse_run(tmp_path / "missing_too")
    assert monitor_worker._WORKER.proc.poll() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_IDLE is Linux's")
def test_worker_runs_at_the_idle_priority(tmp_path):
    """The worker process takes a core only when nothing else wants it (SCHED_IDLE)."""
    with pytest.raises(monitor_worker.AnalysisFailed):  # it runs and answers
        monitor_worker.analyse_run(tmp_path / "missing")
    proc = monitor_worker._WORKER.proc
    assert proc is not None and proc.poll() is None
    assert os.sched_getscheduler(proc.pid) == os.SCHED_IDLE


def test_a_terminal_s_ctrl_c_does_not_end_the_worker(tmp_path):
    """A terminal's Ctrl-C sends SIGINT to every process of the foreground group, the worker
    too: the training process decides what it ends; the worker keeps running and answers."""
    import signal

    with pytest.raises(monitor_worker.AnalysisFailed):  # it runs and answers
        monitor_worker.analyse_run(tmp_path / "missing")
    proc = monitor_worker._WORKER.proc
    os.kill(proc.pid, signal.SIGINT)
    with pytest.raises(monitor_worker.AnalysisFailed):  # (after the signal: still answers)
        monitor_worker.analyse_run(tmp_path / "missing_too")
    assert monitor_worker._WORKER.proc is proc and proc.poll() is None
