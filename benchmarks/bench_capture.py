"""Capture overhead: step time inside the profiled window, tp.Capture vs bare TF profiler.

    python benchmarks/bench_capture.py [--runs 8] [--steps 40]

Alternates runs of the same training loop in one process: (a) ``tp.Capture.iterate`` and
(b) ``tf.profiler.experimental.start/stop`` with a hand-written ``Trace`` per step (next()
inside).  Step time is the wall time between successive loop iterations (fetch + step +
capture bookkeeping).  Reports the medians and their ratio (target <= 1.02).
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args(argv)

    import tensorflow as tf

    import tfprof_nb as tp

    ds = tf.data.Dataset.range(10**9).map(
        lambda i: tf.random.stateless_normal([64, 128], seed=[i, 1])).prefetch(2)
    w1 = tf.Variable(tf.random.normal([128, 256]) * 0.05)
    w2 = tf.Variable(tf.random.normal([256, 10]) * 0.05)

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2) ** 2)
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(0.01 * g1)
        w2.assign_sub(0.01 * g2)
        return loss

    it = iter(ds)
    for _ in range(5):
        train_step(next(it))
    opts = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=0,
                                                    device_tracer_level=1, delay_ms=0)

    def run_tp() -> list[float]:
        times, last = [], None
        with tp.Capture(steps=args.steps, warmup=args.warmup, logdir=tempfile.mkdtemp(),
                        progress=False) as cap:
            for i, x in enumerate(cap.iterate(it)):
                now = time.perf_counter()
                if last is not None and i > args.warmup:
                    times.append(now - last)
                last = now
                train_step(x).numpy()
        return times

    def run_bare() -> list[float]:
        times, last = [], None
        for _ in range(args.warmup):
            train_step(next(it)).numpy()
        tf.profiler.experimental.start(tempfile.mkdtemp(), options=opts)
        for step in range(args.warmup, args.warmup + args.steps):
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                x = next(it)
                now = time.perf_counter()
                if last is not None:
                    times.append(now - last)
                last = now
                train_step(x).numpy()
        tf.profiler.experimental.stop()
        return times

    tp_times, bare_times = [], []
    for r in range(args.runs):
        order = (run_tp, run_bare) if r % 2 == 0 else (run_bare, run_tp)
        for fn in order:
            (tp_times if fn is run_tp else bare_times).extend(fn())
    tp_med = statistics.median(tp_times)
    bare_med = statistics.median(bare_times)
    res = {"runs": args.runs, "steps_per_run": args.steps,
           "tp_capture_median_ms": round(tp_med * 1e3, 4),
           "bare_tf_median_ms": round(bare_med * 1e3, 4),
           "ratio": round(tp_med / bare_med, 4)}
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
