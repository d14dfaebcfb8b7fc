"""Capture small real JAX CPU profiles for the tests (run in a subprocess).

    python tests/make_jax_profile.py LOGDIR SCENARIO [STEPS]

A jitted training step (a tiny MLP, value_and_grad and an SGD update) runs STEPS times
(default 6) under ``jax.profiler.start_trace`` after two warm-up calls; each step does some
untraced Python work (a 2 ms sleep) while the dispatched program runs, then reads its loss
(``float(loss)``, as loops that log do).  Scenarios:

  marked    each step inside ``jax.profiler.StepTraceAnnotation("train", step_num=i)``
  named     the same with the marker name ``my_step`` (not one xprof knows by name)
  unmarked  no step markers (steps can only be inferred from the repeated jitted call)

Prints whether TensorFlow got imported (it must not be).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def capture(logdir, scenario: str, steps: int = 6) -> Path:
    """Run this script in a fresh interpreter; return the ``.xplane.pb`` it wrote (asserting
    that TensorFlow was not imported)."""
    done = subprocess.run([sys.executable, __file__, str(logdir), scenario, str(steps)],
                          check=True, capture_output=True, text=True, timeout=120)
    assert "tensorflow imported: False" in done.stdout, done.stdout + done.stderr
    (xplane,) = Path(logdir).glob("plugins/profile/*/*.xplane.pb")
    return xplane


def main(logdir: str, scenario: str, steps: int = 6) -> None:
    import jax
    import jax.numpy as jnp

    @jax.jit
    def train_step(w, x, y):
        def loss_fn(w):
            return jnp.mean((jnp.tanh(x @ w[0]) @ w[1] - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(w)
        return [p - 0.01 * g for p, g in zip(w, grads)], loss

    key = jax.random.PRNGKey(0)
    w = [jax.random.normal(key, (32, 64)), jax.random.normal(key, (64, 1))]
    x, y = jnp.ones((128, 32)), jnp.zeros((128, 1))
    for _ in range(2):
        w, loss = train_step(w, x, y)
    float(loss)
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    jax.profiler.start_trace(logdir, profiler_options=options)
    def step(w):
        w, loss = train_step(w, x, y)
        time.sleep(0.002)
        float(loss)
        return w

    for i in range(steps):
        if scenario == "unmarked":
            w = step(w)
            continue
        name = "my_step" if scenario == "named" else "train"
        with jax.profiler.StepTraceAnnotation(name, step_num=i):
            w = step(w)
    jax.profiler.stop_trace()
    print("tensorflow imported:", "tensorflow" in sys.modules)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:]))
