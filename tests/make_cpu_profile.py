"""Capture small real CPU profiles with tensorflow-cpu, for the tests (run in a subprocess).

    python tests/make_cpu_profile.py LOGDIR SCENARIO [STEPS]

Scenarios:
  loop      custom training loop, tf.profiler.experimental.Trace step markers, tf.data pipeline,
            host tracer level 3
  python    the same with the Python tracer on (many more events and lines)
  html      a loop whose trace names contain HTML (for escaping tests)
  formula   a loop whose trace names start like spreadsheet formulas (=, +, -, @: for CSV tests)
  slowmap   an input-bound loop: a heavy sequential map and no prefetch
  epochs    two epochs of the loop, each numbering its steps from 0 (one step number for two
            steps: tests/data/tf_cpu_epochs.xplane.pb)
"""

from __future__ import annotations

import contextlib
import os
import sys

# trace names wrapped around every train step, per scenario (hostile names for the tests)
HOSTILE_NAMES = {
    "html": ["<img src=x onerror=alert(1)>"],
    "formula": ['=HYPERLINK("https://example.invalid","x")', "+1+2", "-2+3", "@SUM(A1)"],
}


def main(logdir: str, scenario: str, steps: int = 8) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    ds = (tf.data.Dataset.range(10**6)
          .map(lambda i: (tf.cast(tf.fill([16], i % 7), tf.float32), i % 3))
          .batch(8).prefetch(2))
    if scenario == "slowmap":
        def heavy(i):
            m = tf.random.stateless_normal([192, 192], seed=[i, 0])
            for _ in range(96):  # ~25 ms a step idle: slower than the loop even when preempted
                m = tf.matmul(m, m) / 192.0
            return m[:8, :16], tf.fill([8], i % 3)  # one ready-made batch per element

        options = tf.data.Options()  # keep the map sequential and the pipeline unprefetched
        options.experimental_optimization.map_parallelization = False
        options.experimental_optimization.inject_prefetch = False
        ds = tf.data.Dataset.range(10**6).map(heavy).with_options(options)
    w = tf.Variable(tf.random.normal([16, 3]))
    opt = tf.keras.optimizers.SGD(0.01)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, w)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    it = iter(ds)
    for _ in range(2):
        train_step(*next(it))
    from tfprof_nb.capturing.options import TracerOptions  # (levels TF 2.21 honours)

    options = TracerOptions(host_tracer_level=3,
                            python_tracer_level=1 if scenario == "python" else 0,
                            device_tracer_level=1).to_tf()
    tf.profiler.experimental.start(logdir, options=options)
    numbers = [*range(steps // 2), *range(steps - steps // 2)] if scenario == "epochs" \
        else range(steps)
    for step in numbers:
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
            x, y = next(it)
            with contextlib.ExitStack() as names:
                for name in HOSTILE_NAMES.get(scenario, ()):
                    names.enter_context(tf.profiler.experimental.Trace(name))
                train_step(x, y)
    tf.profiler.experimental.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "loop",
         int(sys.argv[3]) if len(sys.argv) > 3 else 8)
