"""tp.Monitor's step timer on real TensorFlow and JAX loops (CPU): one row per step of the
whole run, durations that add up to the loop's wall time, a periodic spike (a sleep every N
steps) flagged with its period, retracing and recompiling steps flagged, windows opened on
schedule while analyses queue (dropped ones saying why), and windows aimed at the spikes.
Thresholds leave room for a busy 2-core machine: no step's own time is asserted."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.capturing.monitor_spikes import find_period, step_flags

from .conftest import step_markers

SLEEP_S = 0.05  # the synthetic spike: far above a busy machine's slow steps


def assert_timer_covers_the_run(mon, wall_s: float) -> None:
    """One row per step run, numbered from 0, their durations adding up to the loop's wall
    time (within 20 %), in order and without overlap."""
    st = mon.step_times
    assert len(st) == mon.steps_run and st.step.tolist() == list(range(mon.steps_run))
    assert abs(st.duration_ms.sum() / 1e3 - wall_s) <= 0.2 * wall_s
    assert (st.duration_ms >= 0).all() and (np.diff(st.end_s) >= 0).all()
    assert (st.start_s.iloc[1:].to_numpy() >= st.end_s.iloc[:-1].to_numpy() - 1e-9).all()


def assert_windows_in_timer(mon) -> None:
    """The timer's in-window steps are the analysed windows' steps (their markers)."""
    st, hist = mon.step_times, mon.history
    for row in hist[hist.status == "analysed"].itertuples():
        steps = st.step[st.window == row.window].tolist()
        assert steps == list(range(row.first_step, row.last_step + 1))
        assert step_markers(mon.window(row.window)) == steps
    assert set(st.window[st.in_window]) <= set(hist.window[hist.status != "dropped"])


def assert_periodic(mon, period: int, phase: int) -> None:
    st = mon.step_times
    assert (mon.spike_period.period, mon.spike_period.phase) == (period, phase)
    periodic = st[st.flag.str.contains(f"periodic\\({period}\\)")]
    assert len(periodic) >= 3 and (periodic.step % period == phase).all()
    assert periodic.flag.str.startswith("spike").all()


# ---- TensorFlow ------------------------------------------------------------------------------
def test_tf_loop_of_200_steps(tf, tmp_path):
    """200 short steps, every_steps=50, steps=5: windows due at steps 1, 51, 101, 151 each
    open or are dropped with the reason; a sleep every 20 steps is flagged with its period,
    the tf.function's retrace at step 120 as a recompile."""
    w = tf.Variable(tf.ones([8, 8]))

    @tf.function
    def step(x):
        w.assign_sub(0.001 * tf.matmul(tf.transpose(x), tf.matmul(x, w)))
        return tf.reduce_sum(w)

    x8, x4 = tf.ones([8, 8]), tf.ones([4, 8])
    step(x8)
    mon = tp.Monitor(every_steps=50, steps=5, warmup=1, logdir=str(tmp_path))
    t0 = time.perf_counter()
    for i in mon.iterate(range(200)):
        step(x4 if i == 120 else x8)
        if i % 20 == 7:
            time.sleep(SLEEP_S)
    wall = time.perf_counter() - t0
    hist = mon.wait()
    assert hist.first_step.tolist() == [1, 51, 101, 151]
    dropped = hist[hist.status == "dropped"]
    assert set(hist.status) <= {"analysed", "dropped"} and hist.status.iloc[0] == "analysed"
    assert dropped.note.str.match(r"dropped: windows? [0-9, ]+ still waited for (its|their) "
                                  r"analysis \(max_pending=2\)").all()
    assert_timer_covers_the_run(mon, wall)
    assert_windows_in_timer(mon)
    assert_periodic(mon, 20, 7)
    st = mon.step_times.set_index("step")
    assert "recompile" in st.flag[120] and st.compile_ms[120] > 0
    assert not st.flag.drop(index=[120]).str.contains("recompile").any()


def test_a_window_due_while_analyses_wait_is_dropped(tf):
    """The analysis thread is held: window 0 waits for its analysis, so with max_pending=1
    the windows due at steps 6 and 11 are dropped, their rows saying why; the schedule goes
    on, and once the analyses run the next window is profiled on time."""
    hold = threading.Event()
    mon = tp.Monitor(every_steps=5, steps=2, warmup=1, max_pending=1, backend="tensorflow")
    mon._analyser.submit(hold.wait)  # a real job the analyses queue behind
    for i in mon.iterate(range(14)):
        tf.ones([4]) * 2
    hold.set()
    mon.wait()
    for i in mon.iterate(range(6)):  # steps 14-19: window 4 at step 16
        tf.ones([4]) * 2
    hist = mon.wait()
    assert hist.first_step.tolist() == [1, 6, 11, 16]
    assert hist.status.tolist() == ["analysed", "dropped", "dropped", "analysed"]
    assert (hist.note[1:3] == "dropped: window 0 still waited for its analysis "
                              "(max_pending=1)").all()
    assert mon.counts["dropped"] == 2 and (hist.steps[1:3] == 0).all()
    with pytest.raises(tp.CaptureError, match="window 1 was dropped: window"):
        mon.window(1)
    st = mon.step_times
    assert len(st) == 20 and st.step[st.in_window].tolist() == [1, 2, 16, 17]


def test_keras_fit_times_every_batch(tf):
    import keras

    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
    m.compile("sgd", "mse", steps_per_execution=2)
    x, y = np.ones((320, 8), np.float32), np.ones((320, 1), np.float32)
    mon = tp.Monitor(every_steps=100, steps=2, warmup=1)
    t0 = time.perf_counter()
    m.fit(x, y, batch_size=32, epochs=2, callbacks=[mon], verbose=0)
    wall = time.perf_counter() - t0
    st = mon.step_times
    assert mon.steps_run == 20 and len(st) == 20  # one row per batch, an execution split
    assert (st.duration_ms[0::2].to_numpy() == st.duration_ms[1::2].to_numpy()).all()
    assert st.duration_ms.sum() / 1e3 <= wall
    assert "compile" in st.flag[0]  # the train function's first trace


# ---- JAX ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def jax_parts():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    @jax.jit
    def train_step(w, x):
        loss, grad = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.01 * grad, loss

    w, x = jnp.ones((64, 64)), jnp.ones((32, 64))
    train_step(w, x)[0].block_until_ready()
    return jax, train_step, w, x


def test_jax_loop_periodic_spike_and_recompile(jax_parts):
    """Each step's loss tracked and read (as a loop that logs it): a sleep every 25 steps
    found with its period, a new batch shape at step 90 as a recompile."""
    jax, train_step, w, x = jax_parts
    mon = tp.Monitor(every_steps=1000, steps=3, warmup=1000, backend="jax")
    t0 = time.perf_counter()
    for i in mon.iterate(range(260)):
        w, loss = train_step(w, x[:16] if i == 90 else x)
        float(mon.track(loss))
        if i % 25 == 3:
            time.sleep(SLEEP_S)
    wall = time.perf_counter() - t0
    assert mon.history.empty  # no window: the timer alone
    assert_timer_covers_the_run(mon, wall)
    assert_periodic(mon, 25, 3)
    st = mon.step_times.set_index("step")
    assert "recompile" in st.flag[90] and st.compile_ms[90] > 0
    assert not st.flag.drop(index=[90]).str.contains("compile").any()  # compiled before


@pytest.mark.parametrize("ready", ["thread", "poll"])
def test_jax_steps_end_when_the_device_is_done(jax_parts, ready):
    """An asynchronous loop (nothing read back): a step ends when its tracked output is
    ready, so the steps add up to the time until the last output is ready, not to the
    host's dispatching."""
    jax, train_step, w, x = jax_parts
    mon = tp.Monitor(every_steps=1000, steps=3, warmup=1000, backend="jax")
    mon._timer.ready_mode = ready
    big = jax.numpy.ones((256, 256))
    t0 = time.perf_counter()
    for _ in mon.iterate(range(60)):
        big = mon.track(jax.numpy.tanh(big @ big))
    big.block_until_ready()
    wall = time.perf_counter() - t0
    mon.track(big)  # after the loop: the last step's output, ready now
    st = mon.step_times
    assert len(st) == 60
    if ready == "thread":
        deadline = time.monotonic() + 10
        while st.end_s.iloc[-1] < wall * 0.8 and time.monotonic() < deadline:
            time.sleep(0.01)
            st = mon.step_times
    assert abs(st.duration_ms.sum() / 1e3 - wall) <= 0.2 * wall


def test_catch_spikes_aims_windows_at_the_spikes(jax_parts):
    """Once the spikes' period is found, each window opens one step before an expected
    spike (its note says which), and the profiled window holds that spike."""
    jax, train_step, w, x = jax_parts
    mon = tp.Monitor(every_steps=40, steps=3, warmup=1, backend="jax", catch_spikes=True)
    # (the loop ends once two aimed windows are analysed: a few seconds on an idle machine;
    # each wait below lets the worker analyse, however busy the machine, only slower)
    end = time.monotonic() + 120
    for i in range(100_000):
        with mon.step():
            w, loss = train_step(w, x)
            float(loss)
            if i % 20 == 13:
                time.sleep(SLEEP_S)
        if mon.counts["pending"]:
            mon.wait()  # no window dropped (between steps: no step waits)
        hist = mon.history
        aimed = hist.note.str.startswith("opened to catch") & (hist.status == "analysed")
        if aimed.sum() >= 2 or time.monotonic() > end:
            break
    mon.stop()
    hist = mon.wait()
    aimed = hist[hist.note.str.startswith("opened to catch")]
    assert len(aimed) >= 2 and (aimed.status == "analysed").all()
    st = mon.step_times.set_index("step")
    for row in aimed.itertuples():
        spike = row.first_step + 1
        assert spike % 20 == 13, (row.note, st[st.flag.str.contains("spike")].to_string())
        assert f"expected at step {spike} (spikes every " in row.note
        assert st.window[spike] == row.window and st.duration_ms[spike] > SLEEP_S * 1e3
        assert mon.window(row.window).steps.duration_ms.max() > SLEEP_S * 1e3 * 0.9


def test_step_timer_off():
    mon = tp.Monitor(every_steps=1000, warmup=1000, step_timer=False)
    for _ in mon.iterate(range(5)):
        mon.track(np.ones(2))
    assert mon.steps_run == 5 and mon.step_times.empty and mon.spike_period is None
    assert list(mon.step_times.columns) == ["step", "start_s", "end_s", "duration_ms",
                                            "in_window", "window", "compile_ms", "flag"]
    with pytest.raises(ValueError, match="catch_spikes needs the step timer"):
        tp.Monitor(step_timer=False, catch_spikes=True)
    with pytest.raises(ValueError, match="max_pending"):
        tp.Monitor(max_pending=0)


# ---- the rules, on numbers ---------------------------------------------------------------------
def test_spike_and_period_rules():
    rng = np.random.default_rng(0)
    n = 1000
    steps = np.arange(n)
    noisy = rng.lognormal(0, 0.5, n)
    noisy[rng.random(n) < 0.2] *= 5  # a busy machine: one step in five slow
    periodic = noisy.copy()
    periodic[steps % 100 == 42] += 30
    flags, period = step_flags(steps, periodic, np.zeros(n), np.zeros(n, bool))
    assert (period.period, period.phase, period.hits) == (100, 42, 10)
    assert period.next_at(43) == 142 and period.next_at(142) == 142
    assert all("periodic(100)" in f for f in flags[steps % 100 == 42])
    random_big = rng.lognormal(0, 0.5, n)
    random_big[rng.random(n) < 0.05] *= 10
    assert step_flags(steps, random_big, np.zeros(n), np.zeros(n, bool))[1] is None
    # compiles and the profiler's steps: flagged, and left out of the period's search
    compile_ms = np.zeros(n)
    compile_ms[[0, 500]] = 5.0
    profiler = np.zeros(n, bool)
    profiler[steps % 100 == 42] = True
    flags, period = step_flags(steps, periodic, compile_ms, profiler)
    assert period is None and "profiler" in flags[42]
    assert flags[0] == "compile"
    assert "recompile" in flags[500]
    assert find_period(np.array([5, 10]), np.arange(100)) is None
    # spikes every 10 steps, one in four inside a window (left out, spikes and steps alike)
    spikes = np.arange(3, 400, 10)
    period = find_period(spikes[spikes % 40 != 3], np.arange(400)[np.arange(400) % 40 != 3])
    assert (period.period, period.phase, period.expected) == (10, 3, 30)
