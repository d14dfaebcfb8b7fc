"""Capture pairs of real CPU runs for ``prof.what_if``'s validation (benchmarks/bench_what_if.py).

    python tests/make_what_if_pairs.py OUTDIR

Each writes a logdir under OUTDIR, 40 steps under step markers, XLA:CPU on one thread (with
its thread pool two runs of one program differed by 15-20 % on 2 busy cores, as much as
the change measured):

  jax_input_slow / jax_input_fast   a jitted MLP step; the batch built in Python under a
                                    ``make_batch`` annotation: 8 ms of work, or 2 ms
  jax_base / jax_host_on / jax_host_off  the same step with fast input; ``host_work`` (6 ms of
                                    time.sleep) on the training thread before the step
                                    (on the path), or on a background thread while the step
                                    computes (off the path)
  tf_input_slow / tf_input_fast     a tf.function step fed by tf.data: a map whose
                                    py_function sleeps 8 ms or 2 ms per element
  tf_step_slow / tf_step_fast       a tf.function step taking its batch from a prefetching
                                    iterator inside the function (as Keras's fit does) and
                                    running ``step_work`` (a py_function sleeping 8 ms or
                                    2 ms): the input waits on a full buffer, the step bounds
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

STEPS = 40


def capture(outdir) -> dict[str, Path]:
    """Run this script in a fresh interpreter; {name: logdir} of the profiles it wrote."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    subprocess.run([sys.executable, __file__, str(outdir)], check=True, env=env,
                   capture_output=True, text=True, timeout=600)
    return {p.name: p for p in sorted(Path(outdir).iterdir()) if p.is_dir()}


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _jax_step():
    import jax
    import jax.numpy as jnp

    @jax.jit
    def train_step(w, x):
        def loss_fn(w):
            h = jnp.tanh(x @ w[0])
            return jnp.mean((h @ w[1]) ** 2)
        loss, grads = jax.value_and_grad(loss_fn)(w)
        return [p - 0.01 * g for p, g in zip(w, grads)], loss

    key = jax.random.PRNGKey(0)
    return train_step, [jax.random.normal(key, (256, 512)) * 0.1,
                        jax.random.normal(key, (512, 64)) * 0.1]


def _jax_run(logdir: Path, input_s: float, host: str | None) -> None:
    import jax
    import numpy as np

    train_step, w = _jax_step()
    x = np.ones((512, 256), np.float32)
    for _ in range(3):
        w, loss = train_step(w, x)
    float(loss)
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    jax.profiler.start_trace(str(logdir), profiler_options=options)
    for i in range(STEPS):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            with jax.profiler.TraceAnnotation("make_batch"):
                _busy(input_s)
            if host == "on":
                with jax.profiler.TraceAnnotation("host_work"):
                    time.sleep(0.006)
            side = None
            if host == "off":
                side = threading.Thread(target=_side_work)
                side.start()
            w, loss = train_step(w, x)
            float(loss)
            if side is not None:
                side.join()
    jax.profiler.stop_trace()


def _side_work() -> None:
    import jax

    with jax.profiler.TraceAnnotation("host_work"):
        time.sleep(0.006)


def _tf_run(logdir: Path, sleep_s: float) -> None:
    import tensorflow as tf

    def slow(x):
        time.sleep(sleep_s)
        return x

    ds = tf.data.Dataset.from_tensors(tf.ones([64, 32])).repeat() \
        .map(lambda x: tf.py_function(slow, [x], tf.float32)).prefetch(1)
    w = tf.Variable(tf.ones([32, 32]))

    @tf.function
    def train_step(x):
        w.assign_sub(0.001 * tf.matmul(tf.transpose(x), tf.tanh(x @ w)))
        return tf.reduce_sum(w)

    it = iter(ds)
    for _ in range(3):
        train_step(next(it))
    tf.profiler.experimental.start(str(logdir))
    for step in range(STEPS):
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
            train_step(next(it)).numpy()
    tf.profiler.experimental.stop()


def _tf_step_run(logdir: Path, work_s: float) -> None:
    import tensorflow as tf

    def work(x):
        time.sleep(work_s)  # (releases the GIL: a replay has no edge for the GIL's waits)
        return x

    ds = tf.data.Dataset.from_tensors(tf.ones([64, 32])).repeat().map(lambda x: x * 2) \
        .prefetch(2)
    w = tf.Variable(tf.ones([32, 32]))

    @tf.function
    def train_step(it):
        x = tf.py_function(work, [next(it)], tf.float32, name="step_work")
        w.assign_sub(0.001 * tf.matmul(tf.transpose(x), tf.tanh(x @ w)))
        return tf.reduce_sum(w)

    it = iter(ds)
    for _ in range(3):
        train_step(it)
    tf.profiler.experimental.start(str(logdir))
    for step in range(STEPS):
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
            train_step(it).numpy()
    tf.profiler.experimental.stop()


def main(outdir: str) -> None:
    os.environ["XLA_FLAGS"] = " ".join(
        [os.environ.get("XLA_FLAGS", ""), "--xla_cpu_multi_thread_eigen=false"]).strip()
    out = Path(outdir)
    _jax_run(out / "jax_input_slow", 0.008, None)
    _jax_run(out / "jax_input_fast", 0.002, None)
    _jax_run(out / "jax_base", 0.002, None)
    _jax_run(out / "jax_host_on", 0.002, "on")
    _jax_run(out / "jax_host_off", 0.002, "off")
    _tf_run(out / "tf_input_slow", 0.008)
    _tf_run(out / "tf_input_fast", 0.002)
    _tf_step_run(out / "tf_step_slow", 0.008)
    _tf_step_run(out / "tf_step_fast", 0.002)


if __name__ == "__main__":
    main(sys.argv[1])
