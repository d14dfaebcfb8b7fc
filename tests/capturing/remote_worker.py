"""A training process with a profiler server, for the multi-worker capture test.

    python remote_worker.py PORT SECONDS

Prints "ready" once the server is up and training has started, then trains with step markers
for SECONDS and exits.
"""

from __future__ import annotations

import os
import sys
import time


def main(port: int, seconds: float) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    import tfprof_nb as tp

    tp.start_server(port)
    w = tf.Variable(tf.random.normal([32, 32]))

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
        w.assign_sub(0.001 * tape.gradient(loss, w))
        return loss

    ds = iter(tf.data.Dataset.range(10**9).map(lambda i: tf.random.normal([16, 32])).prefetch(2))
    train_step(next(ds))
    print("ready", flush=True)
    end = time.time() + seconds
    step = 0
    while time.time() < end:
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
            train_step(next(ds))
        step += 1
        time.sleep(0.005)


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]))
