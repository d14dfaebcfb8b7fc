"""A Ctrl-C stops only the work it interrupted: each run_in_threads call works under a cancel
token of its own (never a process-wide flag), so other threads' runs and kernels called
directly go on, even while the interrupted run's late workers are still alive.

The interrupt is the one the waiting thread meets (a KeyboardInterrupt raised by ``poll``, as
Ctrl-C raises it there); conditions are waited for with events, not sleeps.  The same with
real loads and a real SIGINT: tests/analysis/test_interrupt.py."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tfprof_nb import _native
from tfprof_nb._interrupt import in_this_run, run_in_threads
from tfprof_nb._native import kernels as K
from tfprof_nb.errors import Cancelled

WAIT_S = 60  # an upper bound for events that come in milliseconds


@pytest.fixture(scope="module")
def keys():
    """Keys a kernel sorts in a few milliseconds (polling its token as it goes), and their
    order."""
    data = np.random.default_rng(0).integers(0, 1 << 40, 1_000_000)
    return data, np.argsort(data, kind="stable").astype(np.int32)


def _interrupt_when(*events):
    """A ``poll`` that raises KeyboardInterrupt (Ctrl-C in the waiting thread) once every
    event is set."""
    def poll():
        if all(e.is_set() for e in events):
            raise KeyboardInterrupt
    return poll


def _wait(event: threading.Event) -> None:
    assert event.wait(WAIT_S), "timed out"


def _run_on_thread(fn) -> tuple[threading.Thread, dict]:
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 (reported to the test)
            box["error"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def test_ctrl_c_stops_only_its_own_run(keys):
    """Two threads, each running kernels in a run of its own: interrupting one stops its
    kernels (Cancelled in its workers, KeyboardInterrupt in its caller), while the other's
    kernels, before and after, give the right answer; a kernel called directly right after
    the interrupt, with a late worker of the stopped run still alive, runs; a run started on a
    third thread meanwhile does not wait for that worker; the late worker's next kernel stops
    at once, and the next run on the interrupted thread waits for it."""
    data, order = keys
    a_busy, b_busy, a_stopped, release = (threading.Event() for _ in range(4))
    late: list = []

    def b_work(_):  # the other thread's run: kernels until A was interrupted, then more
        out = [K.argsort(data)]
        b_busy.set()
        while not a_stopped.is_set():
            out.append(K.argsort(data))
        return out + [K.argsort(data) for _ in range(3)]

    def a_work(i):
        if i == 0:  # kernels until the token stops them
            a_busy.set()
            while True:
                K.argsort(data)
        release.wait()  # a late worker: outlives the grace, then calls a kernel
        try:
            K.argsort(data)
        except Cancelled:
            late.append("cancelled")
        else:
            late.append("ran")

    b_thread, b_box = _run_on_thread(lambda: run_in_threads(b_work, [0], 1))
    _wait(b_busy)
    with pytest.raises(KeyboardInterrupt):
        run_in_threads(a_work, [0, 1], 2, poll=_interrupt_when(a_busy, b_busy), grace=0.05)
    try:
        assert np.array_equal(K.argsort(data), order)  # direct: no stale flag
        c_thread, c_box = _run_on_thread(lambda: run_in_threads(K.argsort, [data], 1))
        c_thread.join(WAIT_S)
        assert np.array_equal(c_box["value"][0], order), c_box
        a_stopped.set()
        b_thread.join(WAIT_S)
        assert "error" not in b_box, b_box
        assert len(b_box["value"][0]) >= 4
        assert all(np.array_equal(o, order) for o in b_box["value"][0])
    finally:
        a_stopped.set()
        release.set()
    assert run_in_threads(lambda x: len(K.argsort(x)), [data], 1) == [len(data)]
    assert late == ["cancelled"]  # (waited for by the run above)
    assert not _native.cancel_requested()


def test_a_run_inside_a_run_stops_with_it_not_the_reverse(keys):
    """A run started by a worker (and a helper thread a worker hands work to with
    in_this_run) is stopped with the run it works for; stopping the inner run leaves the
    outer one going."""
    data, order = keys
    inner_busy, helper_busy = threading.Event(), threading.Event()
    stopped: list = []

    def spin(event):
        event.set()
        try:
            while True:
                K.argsort(data)
        except Cancelled:
            stopped.append(event)
            raise

    def outer_work(i):
        if i == 0:
            run_in_threads(lambda _: spin(inner_busy), [0], 1)
        with ThreadPoolExecutor(1) as pool:
            pool.submit(in_this_run(spin), helper_busy).result()

    with pytest.raises(KeyboardInterrupt):
        run_in_threads(outer_work, [0, 1], 2, poll=_interrupt_when(inner_busy, helper_busy),
                       grace=WAIT_S)
    assert len(stopped) == 2  # (within the grace)

    def outer_again(_):
        with pytest.raises(KeyboardInterrupt):
            run_in_threads(lambda _: spin(threading.Event()), [0], 1,
                           poll=_interrupt_when(), grace=WAIT_S)
        assert not _native.cancel_requested()  # this (outer) run is not cancelled
        return K.argsort(data)

    assert np.array_equal(run_in_threads(outer_again, [0], 1)[0], order)


def test_the_threads_a_kernel_starts_carry_its_token():
    """run_threads (C) hands the calling thread's token to the threads it starts."""
    probe = _native.lib().tfp_cancel_probe
    token = _native.CancelToken()
    with _native.cancel_scope(token):
        assert probe(4) == 0
        token.cancel()
        assert probe(4) == 4
        with _native.cancel_scope(None):
            assert probe(4) == 0
    assert probe(4) == 0 and _native.current_token() is None


# A SIGINT that lands in a finalizer (the thread pool's weakref callback runs as a run ends):
# Python prints the KeyboardInterrupt raised there as "ignored"; after a run it is raised again.
_FINALIZER = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # (a user's Python's, inherited or not)
from tfprof_nb._interrupt import run_in_threads
if sys.argv[1] == "after-a-run":
    run_in_threads(abs, [1], 1)

class LandsInAFinalizer:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100_000):  # the handler runs here, inside the finalizer
            pass

try:
    LandsInAFinalizer()
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline:  # the caller's next statements
        sum(range(10_000))
    print("lost", flush=True)
except KeyboardInterrupt:
    print("raised", flush=True)
"""


@pytest.mark.parametrize("case", ["plain-python", "after-a-run"])
def test_an_interrupt_in_a_finalizer_is_not_lost(case):
    """Plain Python loses it (the reference behaviour this guards against); once a run has
    started, the interrupt is raised again at the caller."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", _FINALIZER, case,
                           "2" if case == "plain-python" else "60"], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.stdout.strip() == ("lost" if case == "plain-python" else "raised"), proc.stderr
