"""Live monitor overhead: a whole training run's wall time with ``tp.Monitor`` (its defaults)
against the same run without it, alternated in one process.

    python benchmarks/bench_monitor.py [--pairs 3] [--steps 3000] [--only keras|jax]
                                       [--max-pending N]

(a) Keras 3 ``model.fit`` (TensorFlow backend) of an MLP on a tf.data pipeline for
``--steps`` steps, with ``callbacks=[tp.Monitor()]`` or without; (b) a jitted JAX training
loop of as many steps, ``for x in mon.iterate(batches)`` or a bare ``for``.  The monitor's
defaults: a window of 10 steps every 500 steps after 3 warm-up steps, each window analysed
on a background thread.  Runs alternate in ABBA order (bare, monitored, monitored, bare,
...) after one unmeasured run of each, so drift and warm caches fall on both sides alike.  Reports each run's wall
time, the medians, their ratio (goal: under 1.03), the windows profiled and the analyses'
time after training ended (``mon.wait()``: not part of the run's wall time, shown apart).
On a loaded machine the analyses (at the lowest priority) lag and windows are dropped, which
makes a run cheaper: each run's windows are reported (``windows_per_run``), and
``--max-pending 100`` keeps every window (no drop) to measure the cost of all of them.
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
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def keras_runner(steps: int):
    """run(monitor or None) -> seconds of one ``fit`` of ``steps`` steps."""
    import keras
    import tensorflow as tf

    ds = tf.data.Dataset.range(10**9).map(
        lambda i: (tf.random.stateless_normal([128, 256], seed=[i, 1]),
                   tf.random.stateless_uniform([128], seed=[i, 2], maxval=10,
                                               dtype=tf.int32))).prefetch(4)
    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def run(mon) -> float:
        t0 = time.perf_counter()
        model.fit(ds, epochs=1, steps_per_epoch=steps, verbose=0,
                  callbacks=[mon] if mon is not None else [])
        return time.perf_counter() - t0
    return run


def jax_runner(steps: int):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    k1, k2 = jax.random.split(key)
    params = [jax.random.normal(k1, (256, 512)) * 0.05, jax.random.normal(k2, (512, 10)) * 0.05]

    @jax.jit
    def train_step(params, x):
        def loss(p):
            return jnp.mean((jnp.tanh(x @ p[0]) @ p[1]) ** 2)
        g = jax.grad(loss)(params)
        return [p - 0.01 * d for p, d in zip(params, g)]

    def batches():
        i = 0
        while True:
            i += 1
            yield jax.random.normal(jax.random.PRNGKey(i), (128, 256))

    state = {"params": params}

    def run(mon) -> float:
        t0 = time.perf_counter()
        it = batches()
        loop = mon.iterate(it) if mon is not None else it
        p = state["params"]
        for n, x in enumerate(loop):
            p = train_step(p, x)
            jax.block_until_ready(p)
            if n + 1 >= steps:
                break
        state["params"] = p
        return time.perf_counter() - t0
    return run


def measure(name: str, run, pairs: int, backend: str, max_pending: int | None = None) -> dict:
    import tfprof_nb as tp

    extra = {} if max_pending is None else {"max_pending": max_pending}

    def monitored() -> tuple[float, float, int]:
        mon = tp.Monitor(logdir=tempfile.mkdtemp(prefix="bench_monitor_"), backend=backend,
                         **extra)
        wall = run(mon)
        t0 = time.perf_counter()
        mon.wait()
        hist = mon.history
        bad = hist[~hist.status.isin(["analysed", "dropped"])]
        if len(bad):
            raise SystemExit(f"{name}: windows not analysed:\n{bad[['window', 'status', 'error']]}")
        if (hist.status == "dropped").any():  # their analyses lagged: said, not measured
            print(f"{name}: {int((hist.status == 'dropped').sum())} window(s) dropped",
                  file=sys.stderr)
        return wall, time.perf_counter() - t0, int((hist.status == "analysed").sum())

    run(None)
    monitored()  # warm both sides: compiles, the profiler's first start
    bare, mon, drain, windows, per_run = [], [], [], 0, []
    for i in range(pairs):  # ABBA: a drift over the session falls on both sides alike
        for side in (("bare", "mon") if i % 2 == 0 else ("mon", "bare")):
            if side == "bare":
                bare.append(run(None))
                continue
            wall, after, windows = monitored()
            per_run.append(windows)
            mon.append(wall)
            drain.append(after)
        print(f"{name} pair {i + 1}: bare {bare[-1]:.2f} s, monitored {mon[-1]:.2f} s "
              f"({windows} windows, analyses {drain[-1]:.2f} s after the run)", file=sys.stderr)
    mb, mm = statistics.median(bare), statistics.median(mon)
    return {"bare_s": bare, "monitored_s": mon, "after_run_s": drain, "windows": windows,
            "windows_per_run": per_run,
            "median_bare_s": mb, "median_monitored_s": mm, "ratio": mm / mb,
            "per_window_ms": 1e3 * (mm - mb) / max(statistics.median(per_run), 1),
            "pair_ratios": [m / b for m, b in zip(mon, bare)]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--only", choices=("keras", "jax"))
    ap.add_argument("--max-pending", type=int, default=None,
                    help="the monitor's max_pending (default: its default, 2)")
    args = ap.parse_args(argv)
    out = {}
    if args.only in (None, "keras"):
        out["keras_fit_tf"] = measure("keras", keras_runner(args.steps), args.pairs, "tensorflow",
                                     args.max_pending)
    if args.only in (None, "jax"):
        out["jax_loop"] = measure("jax", jax_runner(args.steps), args.pairs, "jax",
                                  args.max_pending)
    print(json.dumps(out, indent=1))
    for name, r in out.items():
        print(f"{name}: bare {r['median_bare_s']:.2f} s, monitored {r['median_monitored_s']:.2f}"
              f" s, ratio {r['ratio']:.3f} (goal < 1.03), {r['windows']} windows, "
              f"{r['per_window_ms']:.0f} ms per window; pair ratios "
              f"{', '.join(f'{x:.3f}' for x in r['pair_ratios'])}; windows per run "
              f"{r['windows_per_run']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
