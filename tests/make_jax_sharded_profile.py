"""Capture the JAX CPU profile of a train step sharded over 8 host devices, kept as
``tests/data/jax_cpu_sharded8.xplane.pb`` (jax[cpu] on this project's 2-core VM).

    python tests/make_jax_sharded_profile.py LOGDIR

A small MLP's step under ``jax.jit`` with its batch split over a one-axis mesh of 8 devices
(``--xla_force_host_platform_device_count=8``) and its weights replicated, so XLA sums the
gradients with an all-reduce; 15 steps marked with ``StepTraceAnnotation``, each with 2 ms
of Python beside the dispatched program and a read of the loss.  The eight devices' ops
overlap in time, so the XLA:CPU ops' summed self time is longer than their span.
"""

from __future__ import annotations

import os
import sys
import time


def main(logdir: str) -> None:
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()).reshape(8), ("data",))
    rows, whole = NamedSharding(mesh, PartitionSpec("data", None)), NamedSharding(mesh,
                                                                               PartitionSpec())

    @jax.jit
    def train_step(w, x, y):
        def loss_fn(w):
            h = jnp.tanh(x @ w[0])
            return jnp.mean((h @ w[1] - y) ** 2)

        loss, grad = jax.value_and_grad(loss_fn)(w)
        return [p - 0.01 * g for p, g in zip(w, grad)], loss

    key = jax.random.PRNGKey(0)
    w = [jax.device_put(jax.random.normal(key, (64, 128)), whole),
         jax.device_put(jax.random.normal(key, (128, 8)), whole)]
    x = jax.device_put(jnp.ones((256, 64)), rows)
    y = jax.device_put(jnp.zeros((256, 8)), rows)
    for _ in range(2):
        w, loss = train_step(w, x, y)
    float(loss)
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    jax.profiler.start_trace(logdir, profiler_options=options)
    for i in range(15):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            w, loss = train_step(w, x, y)
            time.sleep(0.002)
            float(loss)
    jax.profiler.stop_trace()


if __name__ == "__main__":
    main(sys.argv[1])
