"""The README's demo: profile a small Keras model on CPU, print its summary (what ``tfprof
summary`` prints) and write the offline report (one HTML file) and a report notebook.

    python -m tfprof_nb.demo --out demo_out
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def profile_small_keras_model(logdir: str, steps: int = 10, warmup: int = 3):
    """Train a small Keras CNN on a tf.data pipeline with ``model.fit`` and profile ``steps``
    batches after ``warmup`` with :class:`tfprof_nb.KerasProfiler`; return the Profile."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import tensorflow as tf

    import tfprof_nb as tp

    x = tf.random.normal([2048, 28, 28, 1])
    y = tf.random.uniform([2048], 0, 10, tf.int32)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024).batch(64).prefetch(2)
    model = keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    profiler = tp.KerasProfiler(steps=steps, warmup=warmup, logdir=logdir)
    model.fit(ds, epochs=1, callbacks=[profiler], verbose=0, shuffle=False)
    return profiler.profile


def print_summary(prof) -> None:
    """Print what ``tfprof summary`` prints for ``prof`` (the same function makes both)."""
    from .cli.summary import summarise, summary_text

    print(summary_text(summarise(prof)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Profile a small Keras model, summarise it and "
                                             "write an offline report.")
    ap.add_argument("--out", default="demo_out", help="directory for the logdir and report")
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args(argv)
    logdir = os.path.abspath(os.path.join(args.out, "logdir"))
    t0 = time.perf_counter()
    profile_small_keras_model(logdir, steps=args.steps)
    t1 = time.perf_counter()

    import tfprof_nb as tp

    prof = tp.load(logdir)  # what a later session would do: read the saved run back
    n = prof.n_events
    t2 = time.perf_counter()
    print_summary(prof)
    print(f"\ncaptured in {t1 - t0:.1f} s, loaded {n:,} events in {t2 - t1:.2f} s "
          f"(the same summary: tfprof summary {logdir})")
    t3 = time.perf_counter()
    report = prof.to_html(os.path.join(args.out, "report.html"))
    notebook = tp.export_notebook(prof, os.path.join(args.out, "report.ipynb"))
    t4 = time.perf_counter()
    print(f"\noffline report: {report} ({report.stat().st_size / 1e6:.1f} MB, written in "
          f"{t4 - t3:.1f} s; open it in any browser, no network needed)")
    print(f"report notebook: {notebook}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
