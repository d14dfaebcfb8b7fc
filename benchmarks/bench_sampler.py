"""The hardware sampler's cost: step time with the sampler on (``sample_ms`` 50) and off (0).

    python benchmarks/bench_sampler.py [--rounds 6] [--steps 400] [--frameworks jax,tensorflow]

For each framework, a real training loop on the CPU (JAX: a jitted two-layer step of about
2 ms; TensorFlow: a ``tf.function`` step) runs under ``tp.Capture`` in alternating rounds
(ABBA: on, off, off, on, ...), in one process.  Step time is the wall time between
successive iterations inside the profiled window.  Reported: the median step time of each
round, the median of the rounds' on/off ratios, the best-of ratio (fastest on round over
fastest off round), and the sampler thread's own CPU time per second of capture (the file's
``sampler_cpu_s`` over its span) and per tick.  Then each host source's ``read()`` alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def jax_step():
    import jax
    import jax.numpy as jnp

    @jax.jit
    def step(w1, w2, x):
        def loss(w1, w2):
            return jnp.mean(jnp.tanh(jnp.tanh(x @ w1) @ w2) ** 2)

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        return w1 - 0.01 * g1, w2 - 0.01 * g2

    state = [jnp.ones((192, 192)) * 0.01, jnp.ones((192, 192)) * 0.01,
             jnp.ones((192, 192))]

    def run():
        state[0], state[1] = step(*state)
        state[0].block_until_ready()

    return run


def tf_step():
    import tensorflow as tf

    w1 = tf.Variable(tf.random.normal([256, 256]) * 0.05)
    w2 = tf.Variable(tf.random.normal([256, 256]) * 0.05)
    x = tf.random.normal([256, 256])

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.tanh(tf.matmul(tf.tanh(tf.matmul(x, w1)), w2)) ** 2)
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(0.01 * g1)
        w2.assign_sub(0.01 * g2)
        return loss

    return lambda: step().numpy()


def one_round(tp, backend: str, run, steps: int, sample_ms: int) -> dict:
    """One capture: the median step time (ms) and, with the sampler, its own CPU use."""
    times, last = [], None
    with tp.Capture(steps=steps, warmup=3, logdir=tempfile.mkdtemp(), progress=False,
                    backend=backend, sample_ms=sample_ms) as cap:
        for _ in cap.iterate(range(10**9)):
            now = time.perf_counter()
            if last is not None:
                times.append(now - last)
            last = now
            run()
    out = {"step_ms": statistics.median(times[1:]) * 1e3}
    files = list(Path(cap.run_dir).glob("*.hardware.npz"))
    if files:
        from tfprof_nb.xspace.hardware_file import read_hardware

        meta = read_hardware(files[0].read_bytes()).meta
        span_s = (meta["stopped_ns"] - meta["started_ns"]) / 1e9
        ticks = max(1, int(span_s * 1e3 / meta["period_ms"]))
        out.update(cpu_per_s=meta["sampler_cpu_s"] / span_s,
                   cpu_per_tick_us=meta["sampler_cpu_s"] / ticks * 1e6, span_s=span_s)
    return out


def bench(tp, backend: str, rounds: int, steps: int) -> dict:
    run = jax_step() if backend == "jax" else tf_step()
    for _ in range(20):
        run()
    on, off = [], []
    for r in range(rounds):
        for sample_ms in ((50, 0) if r % 2 == 0 else (0, 50)):
            (on if sample_ms else off).append(one_round(tp, backend, run, steps, sample_ms))
    ratios = [a["step_ms"] / b["step_ms"] for a, b in zip(on, off)]
    return {
        "step_ms_on": [round(x["step_ms"], 3) for x in on],
        "step_ms_off": [round(x["step_ms"], 3) for x in off],
        "median_ratio": round(statistics.median(ratios), 3),
        "best_of_ratio": round(min(x["step_ms"] for x in on) /
                               min(x["step_ms"] for x in off), 3),
        "sampler_cpu_per_s": round(statistics.median(x["cpu_per_s"] for x in on), 5),
        "sampler_cpu_per_tick_us": round(statistics.median(x["cpu_per_tick_us"] for x in on),
                                         1),
    }


def source_costs(n: int = 2000) -> dict:
    """CPU microseconds of one ``read()`` of each host source, alone."""
    from tfprof_nb.capturing import hardware_sources as hs

    out = {}
    for name in ("ProcHostSource", "HostSource"):
        cls = getattr(hs, name, None)
        try:
            source = cls()
        except Exception:
            continue
        for _ in range(20):
            source.read()
        t0 = time.thread_time()
        for _ in range(n):
            source.read()
        out[name] = round((time.thread_time() - t0) / n * 1e6, 1)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--frameworks", default="jax,tensorflow")
    args = ap.parse_args(argv)

    import tfprof_nb as tp

    result = {fw: bench(tp, fw, args.rounds, args.steps)
              for fw in args.frameworks.split(",")}
    result["source_read_cpu_us"] = source_costs()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
