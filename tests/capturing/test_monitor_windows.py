"""tp.Monitor's windows at the edges of training, on real TensorFlow Keras and JAX
loops (CPU): epochs whose data runs out, steps_per_execution, a user's own session running,
training on a background thread, windows that keep failing, short windows and the regression
rule, a URL logdir's upload thread, the profiler's start-up outside the measured steps."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.capturing.monitor_log import WindowLog
from tfprof_nb.capturing.monitor_rule import RegressionRule

from .conftest import step_markers
from .test_monitor import _python, assert_rows_match_profiles, assert_schedule
from .test_monitor import jax_step, model  # noqa: F401 (fixtures)


def _waiter(mon):
    """A Keras callback waiting for the analyses after every batch: windows open exactly on
    the schedule."""
    import keras

    class Wait(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            mon.wait()

    return Wait()


# ---- the data runs out at each epoch's end ---------------------------------------------------
def test_keras_epochs_of_unknown_size_do_not_cut_windows(tf, model):
    """A dataset of unknown size: Keras ends each epoch when train_function finds no data
    (StopIteration inside it).  That fetch is no step: windows go on into the next epoch, no
    step number is used twice, and every window has its steps."""
    rng = np.random.default_rng(0)
    x, y = rng.random((640, 8), np.float32), rng.random((640, 1), np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: True).batch(32)
    mon = tp.Monitor(every_steps=6, steps=4, warmup=1)
    model.fit(ds, epochs=3, callbacks=[mon, _waiter(mon)], verbose=0)
    hist = mon.wait()
    assert mon.steps_run == 60  # 20 batches an epoch
    assert (hist.status == "analysed").all() and (hist.steps == 4).all()
    assert hist.first_step.tolist() == list(range(1, 60, 6))
    assert_schedule(hist, 4, 1, 6)
    assert_rows_match_profiles(mon)  # each window's markers are its steps, no other
    assert mon.window(3).steps.index.tolist() == [19, 20, 21, 22]  # across the epoch's end


def test_a_loop_that_ends_before_a_window_s_first_step_leaves_no_row(jax_step):
    """The window's session starts on the loop's last step and its first step finds no
    data: no 0-step row; the next loop opens the window at once (its session on the loop's
    first step)."""
    mon = tp.Monitor(every_steps=10, steps=4, warmup=3, backend="jax")
    for _ in mon.iterate(range(3)):
        jax_step()
    assert mon.history.empty and mon.steps_run == 3
    for _ in mon.iterate(range(8)):
        jax_step()
    hist = mon.wait()
    assert hist.first_step.tolist() == [4] and hist.steps.tolist() == [4]
    assert step_markers(mon.window(0)) == [4, 5, 6, 7]
    assert (hist.steps > 0).all()


# ---- steps_per_execution --------------------------------------------------------------------
def test_keras_steps_per_execution_counts_every_batch(tf):
    import keras

    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
    m.compile("sgd", "mse", steps_per_execution=2)
    x, y = np.ones((640, 8), np.float32), np.ones((640, 1), np.float32)
    mon = tp.Monitor(every_steps=8, steps=4, warmup=2)
    m.fit(x, y, batch_size=32, epochs=2, callbacks=[mon, _waiter(mon)], verbose=0)
    hist = mon.wait()
    assert mon.steps_run == 40  # batches, not executions
    assert (hist.status == "analysed").all() and (hist.steps == 4).all()
    assert (hist.last_step - hist.first_step + 1 == 4).all()
    assert hist.first_step.iloc[0] == 4 and (np.diff(hist.first_step) == 8).all()
    assert hist.note.str.contains("each step marker covers 2 steps").all()
    first = hist.first_step.iloc[0]
    assert step_markers(mon.window(0)) == [first, first + 2]  # one marker per execution


# ---- a session the user runs ----------------------------------------------------------------
def test_a_window_never_stops_the_user_s_capture(jax_step):
    mon = tp.Monitor(every_steps=4, steps=2, warmup=3, backend="jax")
    with warnings.catch_warnings():
        warnings.simplefilter("error", tp.CaptureWarning)
        with tp.Capture(steps=5, warmup=2, progress=False, backend="jax") as cap:
            for _ in cap.iterate(mon.iterate(range(16))):
                jax_step()
                mon.wait()  # windows open on the schedule
    assert cap.profile is not None and step_markers(cap.profile) == [2, 3, 4, 5, 6]
    for _ in mon.iterate(range(8)):  # the capture's loop ended after its steps
        jax_step()
        mon.wait()
    hist = mon.wait()
    assert hist.status.tolist() == ["failed", "failed", "analysed"]
    assert hist.error.str.contains(r"another tfprof_nb session is running \(tp.Capture\)")[:2].all()
    assert step_markers(mon.window(2)) == [11, 12]


def test_a_session_left_by_a_thread_that_ended_is_taken_over(jax_step, tmp_path):
    """A session whose thread has ended is really abandoned: a window stops it (with the
    warning every tfprof_nb capture gives) and profiles."""
    from tfprof_nb.capturing.options import TracerOptions
    from tfprof_nb.capturing.session import LocalSession

    left = LocalSession(str(tmp_path / "left"), TracerOptions(), "tp.Capture", "jax")
    t = threading.Thread(target=left.start)
    t.start()
    t.join()
    mon = tp.Monitor(every_steps=10, steps=2, warmup=1, backend="jax")
    with pytest.warns(tp.CaptureWarning, match="abandoned tfprof_nb session"):
        for _ in mon.iterate(range(4)):
            jax_step()
    assert not left.running
    assert mon.wait().status.tolist() == ["analysed"]


# ---- training on a background thread --------------------------------------------------------
def test_cells_run_while_a_thread_trains_leave_its_windows_alone():
    res = _python("""
        import json, threading, time
        import jax, jax.numpy as jnp
        from IPython.testing.globalipapp import start_ipython
        import tfprof_nb as tp
        ip = start_ipython()
        f = jax.jit(lambda w: jnp.tanh(w @ w))
        w = jnp.ones((64, 64)); f(w).block_until_ready()
        mon = tp.Monitor(every_steps=8, steps=6, warmup=1, backend="jax")
        def train():
            for _ in mon.iterate(range(60)):
                f(w).block_until_ready(); time.sleep(0.003)
                mon.wait()  # windows open on the schedule (none waits while one is open)
        t = threading.Thread(target=train); t.start()
        cells = 0
        while t.is_alive():
            ip.run_cell("pass"); cells += 1; time.sleep(0.001)
        h = mon.wait()
        print(json.dumps({"steps": h.steps.tolist(), "notes": h.note.tolist(), "cells": cells}))
    """)
    assert res["cells"] > 10 and res["steps"]
    assert not any("cell ended" in n for n in res["notes"]), res["notes"]
    assert set(res["steps"][:-1]) == {6}


# ---- windows that keep failing --------------------------------------------------------------
def test_a_monitor_whose_windows_keep_failing_stops(jax_step, tmp_path):
    jax = pytest.importorskip("jax")
    mon = tp.Monitor(every_steps=2, steps=1, warmup=0, backend="jax")
    jax.profiler.start_trace(str(tmp_path / "other"))
    try:
        for i in mon.iterate(range(30)):  # windows at steps 1, 3, 5, then no more
            jax_step()
            mon.wait()
    finally:
        jax.profiler.stop_trace()
    for _ in mon.iterate(range(10)):  # the profiler is free now: the monitor stays stopped
        jax_step()
    hist = mon.wait()
    assert len(hist) == 3 and (hist.status == "failed").all()
    assert hist.note.iloc[-1].startswith("3 windows in a row failed")
    assert "stopped: 3 windows in a row failed" in repr(mon)


# ---- short windows and the regression rule --------------------------------------------------
def test_short_windows_are_neither_judged_nor_in_the_baseline():
    rule = RegressionRule(baseline_windows=2, min_pct=0, window_steps=10)
    log = WindowLog(rule)
    noisy = np.array([1.5, 2.5] * 5)  # median 2 ms, MAD 0.5 ms
    for steps, ms in [(10, noisy), (2, np.array([9.0, 9.0])), (10, noisy),
                      (10, np.full(10, 3.0)), (3, np.full(3, 3.0)), (5, np.full(5, 3.0))]:
        i = log.open(0, 0.0)
        log.update(i, steps=steps)
        log.analysed(i, {"median_step_ms": float(np.median(ms))}, ms)
    base = log.baseline()
    assert base.windows == (0, 2) and base.median_ms == 2.0  # window 1 (2 of 10) left out
    hist = log.frame()
    assert "fewer than half of 10 steps: not judged" in hist.note[1]
    assert "fewer than half" in hist.note[4] and hist.note[5] == ""
    noise = 3 * 1.2533 * 1.4826  # three standard errors of a median per MAD, times sqrt(n)
    assert noise * 0.5 / np.sqrt(10) < 1 < noise * 0.5 / np.sqrt(5)  # window 5's own band
    assert hist.regressed.tolist() == [False, False, False, True, False, False]


# ---- a URL logdir's upload thread ------------------------------------------------------------
def test_the_upload_thread_keeps_the_main_thread_s_priority(s3_server, s3_bucket, tmp_path):
    env = {**s3_server.env(), "TFPROF_NB_CACHE_DIR": str(tmp_path / "cache")}
    res = _python(f"""
        import json, os, threading
        os.environ.update({env!r})
        import jax, jax.numpy as jnp
        import tfprof_nb as tp
        f = jax.jit(lambda w: jnp.tanh(w @ w)); w = jnp.ones((32, 32))
        mon = tp.Monitor(every_steps=5, steps=2, warmup=1, backend="jax",
                         logdir="s3://{s3_bucket}/mon")
        for _ in mon.iterate(range(8)):
            f(w).block_until_ready()
            mon.wait()
        h = mon.wait()
        nice = {{t.name: os.getpriority(os.PRIO_PROCESS, t.native_id)
                for t in threading.enumerate()}}
        print(json.dumps({{"status": h.status.tolist(), "run": h.run.tolist(), "nice": nice,
                          "main": threading.main_thread().name}}))
    """)
    assert res["status"] == ["analysed", "analysed"]
    assert all(r.startswith(f"s3://{s3_bucket}/mon/window_") for r in res["run"])
    assert res["nice"]["fsspecIO"] == res["nice"][res["main"]]


# ---- the profiler's start-up is outside the measured steps ----------------------------------
def test_a_window_s_first_step_is_not_slowed_by_the_profiler_s_start():
    """Each window's session starts one (unmarked) step before its first step: the first
    steps are not outliers against the others (medians over the windows: a step on a busy
    machine may be slow by chance)."""
    res = _python("""
        import json, time
        import numpy as np, jax, jax.numpy as jnp
        import tfprof_nb as tp
        f = jax.jit(lambda w: jnp.tanh(w @ w) * 0.5)
        w = jnp.ones((128, 128)); f(w).block_until_ready()
        mon = tp.Monitor(every_steps=12, steps=6, warmup=2, backend="jax")
        for _ in mon.iterate(range(60)):
            f(w).block_until_ready()
            time.sleep(0.002)
            mon.wait()
        h = mon.wait()
        steps = [mon.window(i).steps.duration_ms.tolist() for i in range(len(h))]
        print(json.dumps({"first": h.first_step.tolist(), "steps": steps}))
    """)
    assert res["first"] == [2, 14, 26, 38, 50]  # the sessions started at steps 1, 13, ...
    first = np.median([s[0] for s in res["steps"]])
    others = np.median([ms for s in res["steps"] for ms in s[1:]])
    assert first < 3 * others, res["steps"]
