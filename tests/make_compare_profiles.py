"""Capture pairs of small real CPU profiles for the comparison tests (run in a subprocess).

    python tests/make_compare_profiles.py OUTDIR SCENARIO

Scenarios (each writes logdirs under OUTDIR):

  jax_renumbered  a jitted MLP training step (JAX), 12 steps: ``base`` as is, ``shifted``
                  with one extra elementwise op on the input before the model (XLA numbers
                  the program's fusions differently; the rest computes the same)
  jax_lengths     one jitted program captured twice in one process: ``short`` for 10 steps,
                  then ``long`` for 20 steps
  tf_wider        a Keras MLP trained in a tf.function loop (TensorFlow), 12 steps: ``base``
                  with a hidden Dense layer of 32 units, ``wider`` with 4096 (the same names;
                  its steps tens of ms longer: more than a busy machine's preemptions)

Every step runs under a step marker (``StepTraceAnnotation`` / ``Trace(..., _r=1)``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def capture(outdir, scenario: str) -> dict[str, Path]:
    """Run this script in a fresh interpreter; {name: logdir} of the profiles it wrote."""
    # XLA:CPU on one thread: a run's steps then vary little between runs on a busy machine
    # (with its thread pool, two runs of one program differed by up to 40 % on 2 cores)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", XLA_FLAGS=" ".join(
        [os.environ.get("XLA_FLAGS", ""), "--xla_cpu_multi_thread_eigen=false"]).strip())
    subprocess.run([sys.executable, __file__, str(outdir), scenario], check=True, env=env,
                   capture_output=True, text=True, timeout=300)
    return {p.name: p for p in sorted(Path(outdir).iterdir()) if p.is_dir()}


def _jax_step(extra: bool):
    import jax
    import jax.numpy as jnp

    @jax.jit
    def train_step(w, x, y):
        if extra:
            x = jnp.tanh(x)  # one extra elementwise op before the model: XLA names it
            # wrapped_tanh, and the model's own tanh becomes wrapped_tanh.1

        def loss_fn(w):
            h = jnp.tanh(x @ w[0])
            h = jax.nn.relu(h @ w[1])
            return jnp.mean((h @ w[2] - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(w)
        return [p - 0.01 * g for p, g in zip(w, grads)], loss

    key = jax.random.PRNGKey(0)
    w = [jax.random.normal(key, (128, 256)) * 0.1, jax.random.normal(key, (256, 256)) * 0.1,
         jax.random.normal(key, (256, 1)) * 0.1]
    x, y = jnp.ones((256, 128)), jnp.zeros((256, 1))
    return train_step, w, x, y


def _jax_run(logdir: Path, train_step, w, x, y, steps: int):
    import jax

    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    jax.profiler.start_trace(str(logdir), profiler_options=options)
    for i in range(steps):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            w, loss = train_step(w, x, y)
            float(loss)
    jax.profiler.stop_trace()
    return w


def jax_profiles(outdir: Path, scenario: str) -> None:
    runs = ({"base": (False, 12), "shifted": (True, 12)} if scenario == "jax_renumbered"
            else {"short": (False, 10), "long": (False, 20)})
    prepared = {}
    for name, (extra, _) in runs.items():
        train_step, w, x, y = _jax_step(extra)
        for _ in range(3):  # compiled and warm before any capture
            w, loss = train_step(w, x, y)
        float(loss)
        prepared[name] = (train_step, w, x, y)
    for name, (_, steps) in runs.items():
        train_step, w, x, y = prepared[name]
        _jax_run(outdir / name, train_step, w, x, y, steps)
    print("tensorflow imported:", "tensorflow" in sys.modules)


def tf_profiles(outdir: Path) -> None:
    import tensorflow as tf

    x = tf.random.stateless_normal([256, 64], seed=[1, 2])
    y = tf.random.stateless_normal([256, 1], seed=[3, 4])
    for name, units in (("base", 32), ("wider", 4096)):
        tf.keras.backend.clear_session()  # the same layer and op names in both runs
        model = tf.keras.Sequential([tf.keras.Input((64,)),
                                     tf.keras.layers.Dense(units, activation="relu",
                                                           name="hidden"),
                                     tf.keras.layers.Dense(1, name="out")])
        opt = tf.keras.optimizers.SGD(0.01)

        @tf.function
        def train_step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        for _ in range(3):
            train_step(x, y)
        tf.profiler.experimental.start(str(outdir / name))
        for step in range(12):
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                train_step(x, y).numpy()
        tf.profiler.experimental.stop()


def main(outdir: str, scenario: str) -> None:
    out = Path(outdir)
    if scenario.startswith("jax"):
        jax_profiles(out, scenario)
    else:
        tf_profiles(out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
