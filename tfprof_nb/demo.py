"""The README's demo: profile a small Keras model on CPU and summarise the profile.

    python -m tfprof_nb.demo --out demo_out
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def profile_small_keras_model(logdir: str, steps: int = 10, warmup: int = 3) -> None:
    """Train a small Keras model on a tf.data pipeline and profile ``steps`` steps."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    (x, y) = (tf.random.normal([4096, 28, 28, 1]), tf.random.uniform([4096], 0, 10, tf.int32))
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(64).prefetch(2)
    model = tf.keras.Sequential([
        tf.keras.Input((28, 28, 1)),
        tf.keras.layers.Conv2D(16, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    it = iter(ds.repeat())
    for _ in range(warmup):
        model.train_on_batch(*next(it))
    tf.profiler.experimental.start(logdir, options=tf.profiler.experimental.ProfilerOptions(
        host_tracer_level=2, python_tracer_level=0, device_tracer_level=1))
    try:
        for step in range(steps):
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                model.train_on_batch(*next(it))
    finally:
        tf.profiler.experimental.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Profile a small Keras model and summarise it.")
    ap.add_argument("--out", default="demo_out", help="directory for the logdir and report")
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args(argv)
    logdir = os.path.abspath(os.path.join(args.out, "logdir"))
    t0 = time.perf_counter()
    profile_small_keras_model(logdir, steps=args.steps)
    t1 = time.perf_counter()

    import tfprof_nb as tp

    prof = tp.load(logdir)
    n = len(prof.events)
    t2 = time.perf_counter()
    print(prof.summary())
    print(f"\ncaptured in {t1 - t0:.1f} s, loaded {n:,} events in {t2 - t1:.2f} s")
    print(f"raw profile files: {', '.join(prof.source)}")
    top = (prof.events.groupby("name", observed=True)["duration_us"].sum()
           .sort_values(ascending=False).head(10))
    print("\nevents with the most total time (us):")
    print(top.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
