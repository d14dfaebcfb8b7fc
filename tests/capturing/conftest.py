"""Capture tests run real TensorFlow (CPU) in the test process."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(scope="session")
def tf():
    import tensorflow as tf

    return tf


@pytest.fixture()
def dataset(tf):
    return tf.data.Dataset.range(1000).map(lambda i: tf.fill([4, 8], tf.cast(i, tf.float32)))


@pytest.fixture()
def xy():
    """640 samples of 8 features and one target (Keras fits, TF and JAX backends)."""
    rng = np.random.default_rng(0)
    return rng.random((640, 8), dtype=np.float32), rng.random((640, 1), dtype=np.float32)


@pytest.fixture()
def train_step(tf):
    w = tf.Variable(tf.ones([8, 2]))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w))
        w.assign_sub(0.001 * tape.gradient(loss, w))
        return loss

    return step


def step_markers(profile):
    """Step numbers of the profile's root step markers (``train`` events with ``_r``)."""
    ev = profile.events
    steps = profile.stat("step_num")
    roots = profile.stat("_r")
    marked = ev.loc[steps.index.intersection(roots.index)]
    return sorted(steps.loc[marked.index[marked["name"] == "train"]].tolist())
