"""tp.KerasProfiler with Keras 3 model.fit, real TensorFlow."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tfprof_nb as tp

from .conftest import step_markers


@pytest.fixture()
def model(tf):
    import keras

    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile("sgd", "mse")
    return m


def test_fit_profiles_steps_with_markers(model, xy):
    cb = tp.KerasProfiler(steps=4, warmup=3, progress=False)
    model.fit(*xy, batch_size=32, epochs=1, callbacks=[cb], verbose=0)
    assert cb.steps_profiled == 4
    assert step_markers(cb.profile) == [3, 4, 5, 6]
    assert "tensorboard" not in sys.modules


def test_every_profiled_batch_is_a_step(model, xy):
    """8 profiled batches give 8 steps (whole steps at the window's edges are kept)."""
    cb = tp.KerasProfiler(steps=8, warmup=3, progress=False)
    model.fit(*xy, batch_size=32, epochs=1, callbacks=[cb], verbose=0)
    steps = cb.profile.steps
    assert steps.index.tolist() == list(range(3, 11))
    assert (steps.duration_ms > 0).all()


def test_window_spans_epochs(model, xy):
    cb = tp.KerasProfiler(steps=5, warmup=8, progress=False)
    model.fit(xy[0][:320], xy[1][:320], batch_size=32, epochs=2, callbacks=[cb], verbose=0)
    assert step_markers(cb.profile) == [8, 9, 10, 11, 12]


def test_fewer_batches_than_asked_warns(model, xy):
    cb = tp.KerasProfiler(steps=10, warmup=1, progress=False)
    with pytest.warns(tp.CaptureWarning, match="3 of 10"):
        model.fit(xy[0][:128], xy[1][:128], batch_size=32, epochs=1, callbacks=[cb], verbose=0)
    assert step_markers(cb.profile) == [1, 2, 3]


def test_error_in_a_batch_saves_partial_profile(tf, model):
    def gen():
        for i in range(20):
            if i == 5:
                raise ValueError("corrupt record")
            yield np.ones((8, 8), np.float32), np.ones((8, 1), np.float32)

    ds = tf.data.Dataset.from_generator(gen, output_signature=(
        tf.TensorSpec((8, 8), tf.float32), tf.TensorSpec((8, 1), tf.float32)))
    cb = tp.KerasProfiler(steps=10, warmup=2, progress=False)
    with pytest.raises(Exception, match="corrupt record") as info:
        model.fit(ds, epochs=1, callbacks=[cb], verbose=0, shuffle=False)
    assert info.value.tfprof_profile is cb.profile
    assert step_markers(cb.profile) == [2, 3, 4, 5]
    # the profiler is free again
    cb2 = tp.KerasProfiler(steps=1, warmup=0, progress=False)
    model.fit(np.ones((8, 8), np.float32), np.ones((8, 1), np.float32), callbacks=[cb2],
              verbose=0)
    assert step_markers(cb2.profile) == [0]
