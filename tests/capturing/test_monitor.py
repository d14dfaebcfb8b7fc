"""tp.Monitor on real training: TensorFlow Keras fit, Keras on JAX, JAX loops, CPU only.

Windows are analysed on a background thread while training runs: the tests watch that from
inside training (a Keras callback, the loop's body) and train until enough windows arrived,
with a deadline.  Every number of the history is checked against the window's Profile, loaded
again from its files.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.xspace.hardware_file import hardware_path_for, read_hardware
from tfprof_nb.capturing.monitor_rule import RegressionRule
from tfprof_nb.analysis.steps.xprof_counted import xprof_steps
from tfprof_nb.constants import CATEGORY_COLUMNS

from .conftest import step_markers

DEADLINE_S = 40  # no test trains longer than this waiting for windows


def assert_rows_match_profiles(mon, complete: bool = True) -> None:
    """Each analysed window's row holds the numbers of its Profile's tables: steps, the
    overview's input share, device duty cycle and top op, the memory summary's peak; its
    steps are the profile's step markers."""
    hist = mon.history
    done = hist[hist.status == "analysed"]
    assert len(done)
    for row in done.itertuples():
        prof = mon.window(row.window)
        assert row.run in prof.source[0]
        steps = prof.steps
        assert row.median_step_ms == pytest.approx(float(steps.duration_ms.median()))
        ov = prof.overview()
        counted = xprof_steps(steps)  # (the breakdown is XProf's: over the steps it counts)
        assert len(counted) == (len(steps) - 2 if len(steps) > 5 else len(steps))
        for col in CATEGORY_COLUMNS:
            assert getattr(row, col) == pytest.approx(float(counted[col].mean()))
            assert getattr(row, col) == pytest.approx(ov.breakdown.avg_ms[col])
        assert row.input_pct == pytest.approx(prof.measures.at["input_wait_pct", "value"])
        if "duty_cycle_pct" not in prof.measures.index:
            assert np.isnan(row.duty_cycle_pct)
        else:
            assert row.duty_cycle_pct == prof.measures.at["duty_cycle_pct", "value"]
        top = ov.top_device_ops if len(ov.top_device_ops) else ov.top_host_ops
        assert (row.top_op, row.top_op_pct) == (top.operation.iloc[0],
                                                pytest.approx(top.self_time_pct.iloc[0]))
        memory = prof.memory_summary
        assert (np.isnan(row.memory_peak_bytes) if memory.empty
                else row.memory_peak_bytes == memory.peak_bytes_in_use.max())
        if complete or row.steps == mon.steps:
            assert step_markers(prof) == list(range(row.first_step, row.last_step + 1))


def assert_schedule(hist, steps: int, warmup: int, every: int) -> None:
    """Windows of ``steps`` steps (the last may be cut short, saying why) from the warm-up
    on, at least ``every`` steps apart; those dropped (their analyses lagged) say why."""
    dropped = hist[hist.status == "dropped"]
    assert (dropped.steps == 0).all() and dropped.note.str.contains("max_pending=").all()
    hist = hist[hist.status != "dropped"]
    assert hist.first_step.iloc[0] >= warmup
    assert (np.diff(hist.first_step) >= every).all()
    full = hist.steps == steps
    assert full.iloc[:-1].all()
    assert full.iloc[-1] or hist.note.iloc[-1].startswith(f"{hist.steps.iloc[-1]} of {steps}")
    assert (hist.last_step - hist.first_step + 1 == hist.steps).all()


# ---- TensorFlow Keras ------------------------------------------------------------------------
@pytest.fixture()
def model(tf):
    import keras

    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile("sgd", "mse")
    return m


def _watcher(mon, windows: int):
    """A Keras callback recording, at each epoch's end, how many windows are analysed, and
    ending training once ``windows`` are (or at the deadline)."""
    import keras

    class Watch(keras.callbacks.Callback):
        seen: list = []
        end = time.monotonic() + DEADLINE_S

        def on_epoch_end(self, epoch, logs=None):
            self.seen.append(mon.counts["analysed"])
            if self.seen[-1] >= windows or time.monotonic() > self.end:
                self.model.stop_training = True

    return Watch()


def test_keras_fit_windows_arrive_while_training(model, xy, tmp_path):
    mon = tp.Monitor(every_steps=20, steps=5, warmup=3, logdir=str(tmp_path))
    watch = _watcher(mon, 3)
    model.fit(*xy, batch_size=32, epochs=100_000, callbacks=[mon, watch], verbose=0)
    starved = watch.seen[-1] < 3 and os.getloadavg()[0] >= (os.cpu_count() or 1)
    # three windows analysed inside training, seen from a callback; unless no core was left
    # idle all along (load average at least the cores: another job beside the suite), where
    # the worker, at the lowest priority, rightly yields to training and analyses afterwards
    assert watch.seen[-1] >= 3 or starved, (watch.seen, os.getloadavg())
    hist = mon.wait()
    assert_schedule(hist, 5, 3, 20)  # windows due while 2 waited for analysis were dropped
    hist = hist[hist.status != "dropped"]
    assert (hist.status == "analysed").all() and (hist.backend == "tensorflow").all()
    assert_rows_match_profiles(mon)
    if starved and len(hist) < 3:
        return  # (the baseline of three windows: test_a_slower_window_is_flagged_against_the_first_ones)
    assert all(r.startswith(str(tmp_path / f"window_{i:04d}" / "plugins" / "profile"))
               for i, r in zip(hist.window, hist.run))
    base = mon.baseline
    assert base.windows == tuple(hist.window[:3]) and base.steps == 15
    assert np.isfinite(hist.vs_baseline_pct).all() and not hist.regressed.iloc[:3].any()
    assert f"{base.median_ms:.3f} ms" in mon.rule
    assert "window" in repr(mon) and "analysed" in repr(mon)


def test_keras_error_inside_a_window_stops_the_profiler_and_keeps_the_windows(tf, model):
    """Training raises inside window 1: the error reaches the caller unchanged, the profiler
    is stopped, both windows are analysed and window 1 says it was cut short."""
    import keras

    def gen():
        for i in range(100):
            if i == 15:
                raise ValueError("corrupt record")
            yield np.ones((8, 8), np.float32), np.ones((8, 1), np.float32)

    ds = tf.data.Dataset.from_generator(gen, output_signature=(
        tf.TensorSpec((8, 8), tf.float32), tf.TensorSpec((8, 1), tf.float32)))
    mon = tp.Monitor(every_steps=10, steps=5, warmup=2)

    class AnalyseFirst(keras.callbacks.Callback):  # window 1 opens at step 12, not later
        def on_train_batch_end(self, batch, logs=None):
            if batch == 6:
                mon.wait()

    with pytest.raises(Exception, match="corrupt record"):
        model.fit(ds, epochs=1, callbacks=[mon, AnalyseFirst()], verbose=0, shuffle=False)
    hist = mon.wait()
    assert hist.status.tolist() == ["analysed", "analysed"]
    assert hist.first_step.tolist() == [2, 12] and hist.steps.tolist() == [5, 3]
    assert hist.note.iloc[1].startswith("3 of 5 steps: training raised")
    assert_rows_match_profiles(mon, complete=False)
    assert step_markers(mon.window(1))[:3] == [12, 13, 14]
    with tp.Capture(steps=1, warmup=0, progress=False) as cap:  # the profiler is free again
        for _ in cap.iterate(range(1)):
            tf.ones([2]) + 1
    assert step_markers(cap.profile) == [0]


def test_a_window_that_cannot_start_fails_its_row_and_training_goes_on(tf, tmp_path):
    """Another profiler session runs: the window fails with the reason in its row; nothing
    is raised into the loop, and the next window profiles once the session is gone."""
    mon = tp.Monitor(every_steps=5, steps=2, warmup=0, backend="tensorflow")
    tf.profiler.experimental.start(str(tmp_path / "other"))
    try:
        for i in mon.iterate(range(4)):
            tf.ones([4]) * 2
    finally:
        tf.profiler.experimental.stop()
    for i in mon.iterate(range(7)):  # steps 4-10: the window due at 11 is never opened
        tf.ones([4]) * 2
    hist = mon.wait()
    assert hist.status.tolist() == ["failed", "analysed"]
    assert "already running" in hist.error.iloc[0] and hist.steps.iloc[0] == 0
    with pytest.raises(tp.CaptureError, match="window 0 failed"):
        mon.window(0)
    # with no warm-up the first window's first step is step 1: its session starts at step 0
    assert hist.first_step.tolist() == [1, 6]
    assert step_markers(mon.window(1)) == [6, 7]


# ---- JAX ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def jax_step():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    @jax.jit
    def train_step(w, x):
        loss, grad = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.01 * grad, loss

    state = {"w": jnp.ones((64, 64)), "x": jnp.ones((32, 64))}

    def step():
        state["w"], loss = train_step(state["w"], state["x"])
        return float(loss)

    step()
    return step


# the slow-down once the baseline is made: well above the noise band a loaded machine gives
# a 1-2 ms step's baseline (its MAD can reach a few ms when the loop is preempted)
SLOW_MS = 15


def _train_until(mon, analysed: int, step, slow_after: int | None = None) -> list[int]:
    """A loop over ``mon.iterate`` until ``analysed`` windows are analysed (or the deadline);
    returns the analysed count seen inside the loop at each step.  From the moment
    ``slow_after`` windows are analysed, each step takes ``SLOW_MS`` longer."""
    seen, end = [], time.monotonic() + DEADLINE_S
    slow = False
    for _ in mon.iterate(itertools.count()):
        step()
        if slow:
            time.sleep(SLOW_MS / 1000)
        seen.append(mon.counts["analysed"])
        slow = slow or (slow_after is not None and seen[-1] >= slow_after)
        if seen[-1] >= analysed or time.monotonic() > end:
            break
    return seen


def test_jax_loop_windows_arrive_while_training(jax_step, tmp_path):
    mon = tp.Monitor(every_steps=30, steps=6, warmup=2, logdir=str(tmp_path), backend="jax",
                     sample_ms=20)
    seen = _train_until(mon, 3, jax_step)
    starved = seen[-1] < 3 and os.getloadavg()[0] >= (os.cpu_count() or 1)
    # analysed while the loop ran; unless no core was left idle all along (as the Keras test)
    assert seen[0] == 0 and (seen[-1] >= 3 or starved), (seen[-1], os.getloadavg())
    hist = mon.wait()
    assert_schedule(hist, 6, 2, 30)
    hist = hist[hist.status != "dropped"]
    assert (hist.status == "analysed").all() and (hist.backend == "jax").all()
    assert hist.note.iloc[-1] in ("", f"{hist.steps.iloc[-1]} of 6 steps: the loop was left "
                                      "(break or an error in the step)")
    assert_rows_match_profiles(mon, complete=False)
    # XLA's ops, on the CPU device: each window's top op is a device op of its own profile
    # (another program's op where the machine ran one in that window: a busy test worker)
    assert hist.top_op.str.startswith("jit(train_step)").any()
    assert (hist.wall_s > 0).all() and hist.time_s.is_monotonic_increasing
    for index in hist.index:  # each window's hardware samples beside its profile
        ops = mon.window(index).op_stats
        assert hist.top_op[index] in set(ops.operation[ops.host_or_device == "Device"])
        (xplane,) = mon.window(index).source
        with open(hardware_path_for(xplane), "rb") as f:
            assert read_hardware(f.read()).meta["period_ms"] == 20


def test_jax_step_that_raises_stops_the_profiler(jax_step):
    jax = pytest.importorskip("jax")
    mon = tp.Monitor(every_steps=10, steps=4, warmup=1, backend="jax")
    with pytest.raises(RuntimeError, match="diverged"):
        for i in mon.iterate(range(100)):
            jax_step()
            if i == 5:
                mon.wait()  # window 0 (steps 1-4) is analysed: window 1 opens at step 11
            if i == 12:
                raise RuntimeError("loss diverged")
    hist = mon.wait()
    assert hist.first_step.tolist() == [1, 11] and hist.steps.tolist() == [4, 1]
    assert (hist.status == "analysed").all()
    assert hist.note.iloc[1].startswith(
        "1 of 4 steps: the loop was left (break or an error in the step); fewer than half")
    jax.profiler.start_trace("/tmp/tfprof_free_check")  # the profiler is free again
    jax.profiler.stop_trace()


def test_a_slower_window_is_flagged_against_the_first_ones(jax_step):
    """Steps SLOW_MS slower once the baseline's windows are analysed: the windows that follow
    are flagged, none before; the rule's numbers are in its sentence."""
    mon = tp.Monitor(every_steps=20, steps=5, warmup=2, backend="jax")
    seen = _train_until(mon, 6, jax_step, slow_after=3)
    # no core left idle all along (another job beside the suite): the worker, at the lowest
    # priority, yields to training, so the baseline's windows are analysed only after the
    # loop, and no step ran slower (as test_jax_loop_windows_arrive_while_training)
    starved = seen[-1] < 3 and os.getloadavg()[0] >= (os.cpu_count() or 1)
    hist = mon.wait()
    short = hist[(hist.status == "analysed") & (2 * hist.steps < 5)]
    assert not short.regressed.any()  # the loop left inside a window: too short to judge
    if starved:
        assert not hist.regressed.any(), (mon.rule, hist.to_string())  # no step ran slower
        return
    # (a busy machine analyses slower, so the next window can open before the loop ends)
    hist = hist[(hist.status == "analysed") & (2 * hist.steps >= 5)]
    base = mon.baseline
    assert base is not None and base.windows == tuple(hist.window[:3])
    assert not hist.regressed.iloc[:3].any()
    slow = hist[hist.median_step_ms > SLOW_MS]
    assert len(slow) >= 2 and hist.regressed[slow.index].all(), (mon.rule, hist.to_string())
    assert hist.regressed.iloc[-1] and hist.vs_baseline_pct.iloc[-1] > 100
    text = mon.rule
    assert f"{base.threshold_ms:.3f} ms" in text
    assert f"windows {base.windows[0]}-{base.windows[-1]}" in text


def test_every_seconds_max_windows_and_stop(jax_step):
    mon = tp.Monitor(every_seconds=0.3, steps=3, warmup=1, max_windows=3, backend="jax")
    end = time.monotonic() + DEADLINE_S
    for _ in mon.iterate(itertools.count()):
        jax_step()
        time.sleep(0.01)
        if mon.counts["analysed"] == 3 and mon.steps_run > 300 or time.monotonic() > end:
            break
    hist = mon.wait()
    assert (np.diff(hist.time_s) >= 0.3).all()  # dropped windows too were due on time
    assert set(hist.status) <= {"analysed", "dropped"} and hist.status.iloc[-1] == "analysed"
    assert (hist.status == "analysed").sum() == 3  # max_windows counts windows profiled
    stopped = tp.Monitor(every_steps=3, steps=2, warmup=0, backend="jax")
    for i in stopped.iterate(range(20)):
        jax_step()
        if i == 0:
            stopped.stop()  # the window's session started at step 0; no other opens
    hist = stopped.wait()
    assert hist.empty and stopped.steps_run == 20  # a window without a step leaves no row


def test_options_are_checked():
    with pytest.raises(ValueError, match="not both"):
        tp.Monitor(every_steps=10, every_seconds=5)
    with pytest.raises(ValueError, match="at least steps"):
        tp.Monitor(every_steps=5, steps=10)
    with pytest.raises(ValueError, match="positive"):
        tp.Monitor(every_seconds=0)
    with pytest.raises(ValueError, match="max_windows"):
        tp.Monitor(max_windows=0)
    with pytest.raises(ValueError, match="backend"):
        tp.Monitor(backend="torch")
    with pytest.raises(ValueError, match="baseline_windows"):
        tp.Monitor(baseline_windows=0)
    mon = tp.Monitor()
    assert (mon.every_steps, mon.steps, mon.warmup, mon.every_seconds) == (500, 10, 3, None)
    assert list(mon.history.columns)[:5] == ["window", "status", "first_step", "last_step",
                                             "steps"]
    assert mon.history.empty and len(mon.profiles) == 0
    with pytest.raises(IndexError):
        mon.window(0)


def test_the_regression_rule():
    """Baseline: the median of the first windows' steps; band: the larger of 10 % and three
    times the noise of a window's median from their spread."""
    rule = RegressionRule(baseline_windows=2, min_pct=10)
    calm = {0: np.full(10, 2.0), 1: np.full(10, 2.0)}
    assert rule.baseline({0: calm[0]}) is None
    base = rule.baseline(calm)
    assert (base.median_ms, base.band_ms, base.threshold_ms) == (2.0, 0.2, 2.2)
    vs, flagged = rule.judge(np.array([2.0, 2.0, 2.1, 2.3]), np.arange(4), base)
    assert flagged.tolist() == [False, False, False, True]
    assert vs == pytest.approx([0, 0, 5, 15])
    noisy = {0: np.array([1.0, 3.0] * 5), 1: np.array([1.0, 3.0] * 5)}  # MAD 1 ms
    base = rule.baseline(noisy)
    assert base.noise_ms == pytest.approx(3 * 1.2533 * 1.4826 / np.sqrt(10))
    assert base.band_ms == pytest.approx(base.noise_ms)
    assert rule.judge(np.array([2.5]), np.array([0]), base)[1].tolist() == [False]


# ---- Keras on JAX, and the magic, in fresh processes ----------------------------------------
def _python(code: str, timeout: float = 180) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_keras_on_jax_never_imports_tensorflow():
    res = _python("""
        import json, os, sys, time
        os.environ["KERAS_BACKEND"] = "jax"
        import numpy as np, keras
        import tfprof_nb as tp
        x, y = np.ones((320, 8), np.float32), np.ones((320, 1), np.float32)
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        mon = tp.Monitor(every_steps=10, steps=4, warmup=2)
        class Wait(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                if batch == 5:
                    mon.wait()
        model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[mon, Wait()])
        h = mon.wait()
        print(json.dumps({"status": h.status.tolist(), "backend": h.backend.tolist(),
                          "first": h.first_step.tolist(), "steps": h.steps.tolist(),
                          "tf": "tensorflow" in sys.modules}))
    """)
    assert res["tf"] is False
    assert res["backend"][0] == "jax" and set(res["status"]) == {"analysed"}
    assert res["first"][:2] == [2, 12] and res["steps"][:2] == [4, 4]


MAGIC_SETUP = """
import os, json
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, keras, tensorflow as tf
import tfprof_nb as tp
x = np.random.rand(640, 8).astype("float32"); y = np.random.rand(640, 1).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.compile("sgd", "mse")
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)

def facts(mon):
    h = mon.wait()
    h = h[h.status != "dropped"]  # (their analyses lagged)
    return {"kind": type(mon).__name__, "status": sorted(set(h.status)), "windows": len(h),
            "first": h.first_step.tolist(), "steps": h.steps.tolist(),
            "every": mon.every_steps, "warmup": mon.warmup}
"""


def test_magic_every_monitors_the_cell(tmp_path):
    """``%%tfprof --every K``: a Keras fit in the cell gets a monitor, shown as a widget and
    stored in ``--out``; a ``tp.Monitor()`` made in the cell takes the magic's options."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in [
        "%load_ext tfprof_nb", MAGIC_SETUP,
        "%%tfprof --every 20 --steps 4 --warmup 2\n"
        "model.fit(x, y, batch_size=32, epochs=6, verbose=0)",
        "print(json.dumps(facts(_tfprof)))",
        "%%tfprof --every 15 --steps 3 --warmup 1 --out loopmon --no-show\n"
        "mon = tp.Monitor()\n"
        "for xb, yb in mon.iterate(ds.repeat(2)):\n"
        "    model.train_on_batch(xb, yb)\n"
        "    if mon.steps_run == 5:\n"
        "        mon.wait()  # window 0 analysed: window 1 opens at step 16",
        "print(json.dumps({**facts(loopmon), 'same': loopmon is mon}))",
        "%%tfprof --every 10 --no-show\nz = 1"]]
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    fit_cell, fit, loop, nothing = nb.cells[2], nb.cells[3], nb.cells[5], nb.cells[6]
    views = [o for o in fit_cell.outputs if "application/vnd.jupyter.widget-view+json"
             in o.get("data", {})]
    assert len(views) == 1  # the monitor's view (a window's dashboard shows inside it)
    facts = json.loads(fit.outputs[0].text)
    assert facts["kind"] == "Monitor" and facts["status"] == ["analysed"]
    assert facts["every"] == 20 and facts["warmup"] == 2 and facts["first"][0] == 2
    assert set(facts["steps"][:-1]) <= {4}
    facts = json.loads(loop.outputs[0].text)
    assert facts["same"] and facts["every"] == 15 and facts["first"][:2] == [1, 16]
    assert facts["steps"][:2] == [3, 3] and facts["status"] == ["analysed"]
    assert "nothing was monitored" in nothing.outputs[0].text
