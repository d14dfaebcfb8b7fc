"""Capture the two Keras captures kept in ``tests/data`` (tensorflow-cpu 2.21, this VM).

    python tests/make_keras_profiles.py LOGDIR keras2_validation
    python tests/make_keras_profiles.py LOGDIR keras3_steps_per_execution

``keras2_validation``: Keras 2 (``tf_keras`` 2.21, installed apart: ``pip install --target
SITE tf_keras==2.21.0 --no-deps``, then ``PYTHONPATH=SITE TF_USE_LEGACY_KERAS=1``) ``fit`` of
a small model for 2 epochs on a prefetched tf.data pipeline with ``validation_data``: four
iterators, two of which TensorFlow gives one id (``tf_keras2_validation.xplane.pb``).

``keras3_steps_per_execution``: Keras 3 ``fit`` with ``steps_per_execution=4`` on a pipeline
whose plain ``.map()`` (a Python function and some ops) tf.data fuses with the batch after
it; no step markers (``keras3_steps_per_execution.xplane.pb``).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np


def keras2_validation(logdir: str) -> None:
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import tensorflow as tf
    import tf_keras as keras

    rng = np.random.default_rng(0)
    x, y = rng.random((512, 32), dtype=np.float32), rng.integers(0, 10, 512)
    xv, yv = rng.random((128, 32), dtype=np.float32), rng.integers(0, 10, 128)
    train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).batch(32).prefetch(2)
    val = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(32)
    model = keras.Sequential([keras.layers.Dense(64, activation="relu", input_shape=(32,)),
                              keras.layers.Dense(10)])
    model.compile(keras.optimizers.SGD(0.01),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    tf.profiler.experimental.start(logdir)
    model.fit(train, validation_data=val, epochs=2, verbose=0)
    tf.profiler.experimental.stop()


def keras3_steps_per_execution(logdir: str) -> None:
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x, y = rng.random((384, 32), dtype=np.float32), rng.integers(0, 10, 384)

    def slow(a, b):
        def work(v):
            time.sleep(0.0015)  # about 1.5 ms of Python an element
            return np.tanh(v.numpy() * 2.0).astype(np.float32)

        a = tf.py_function(work, [a], tf.float32)
        a.set_shape([32])
        for _ in range(4):
            a = tf.tanh(a * 1.01) + tf.reduce_mean(tf.sin(tf.range(2048, dtype=tf.float32)))
        return a, b

    data = tf.data.Dataset.from_tensor_slices((x, y)).map(slow).batch(16)
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(keras.optimizers.SGD(0.01),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  steps_per_execution=4)
    model.fit(data.take(4), epochs=1, verbose=0)  # traced before the window
    tf.profiler.experimental.start(logdir)
    model.fit(data, epochs=2, verbose=0)
    tf.profiler.experimental.stop()


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    {"keras2_validation": keras2_validation,
     "keras3_steps_per_execution": keras3_steps_per_execution}[sys.argv[2]](sys.argv[1])
