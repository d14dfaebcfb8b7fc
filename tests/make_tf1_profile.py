"""Capture the TensorFlow 1 graph-mode profile kept as ``tests/data/tf1_session_run.xplane.pb``
(tensorflow-cpu 2.21 on this project's 2-core VM).

    python tests/make_tf1_profile.py LOGDIR

Eager execution off, a small MLP built with ``tf.compat.v1`` and a ``Session`` that runs its
train op 20 times with a ``feed_dict``, profiled with ``tf.profiler.experimental.start/stop``
after three warm-up runs; no step markers.
"""

from __future__ import annotations

import os
import sys

import numpy as np


def main(logdir: str) -> None:
    import tensorflow as tf

    v1 = tf.compat.v1
    v1.disable_eager_execution()
    x, y = v1.placeholder(tf.float32, [64, 32]), v1.placeholder(tf.int32, [64])
    w1, b1 = v1.get_variable("w1", [32, 64]), v1.get_variable("b1", [64])
    w2, b2 = v1.get_variable("w2", [64, 10]), v1.get_variable("b2", [10])
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train_op = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    feed = {x: np.random.rand(64, 32).astype("float32"), y: np.random.randint(0, 10, 64)}
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        for _ in range(3):
            sess.run(train_op, feed)
        tf.profiler.experimental.start(logdir)
        for _ in range(20):
            sess.run(train_op, feed)
        tf.profiler.experimental.stop()


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    main(sys.argv[1])
