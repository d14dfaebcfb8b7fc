"""Steps of TensorFlow eager programs (a ``tf.function`` called from Python) against xprof's
grouping: which events are roots (``_r``, tf.keras's old ``TraceContext``), which mark steps,
and what a window holding one call of the training function makes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.steps import breakdown as steps_module
from tfprof_nb.constants import CATEGORY_COLUMNS

from ..conftest import xplane_files
from .oracle import step_table
from .test_steps import CATEGORIES

# One tf.function training step called from Python, traced before the windows; each window
# is its own capture: one call without markers, one call inside tf.keras's step marker as
# TensorFlow 2.2-2.3 wrote it (TraceContext, graph_type, step_num) and as 2.4+ does (train,
# _r=1), three calls inside the old marker, and three marked calls of a function looping
# four times (a tf.while_loop: executors with iter_num 0-3).
CAPTURE = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
w = tf.Variable(tf.random.normal([256, 256]))
x = tf.random.normal([512, 256])

@tf.function
def train_function(x):
    y = x
    for _ in range(8):
        y = tf.tanh(tf.matmul(y, w))
    loss = tf.reduce_mean(y)
    w.assign_sub(0.01 * loss * tf.ones_like(w))
    return loss

@tf.function(autograph=False)  # (no source to convert under python -c: an explicit loop)
def train_loop(x, n):
    def body(i, loss):
        y = tf.tanh(tf.matmul(x, w))
        with tf.control_dependencies([w.assign_sub(0.01 * tf.reduce_mean(y) * tf.ones_like(w))]):
            return i + 1, tf.reduce_mean(y)
    return tf.while_loop(lambda i, _: i < n, body, (tf.constant(0), tf.constant(0.0)))[1]

train_function(x)
train_loop(x, tf.constant(2))
WINDOWS = {
    "once": [None],
    "trace_context": [("TraceContext", dict(graph_type="train", step_num=3, batch_size=512))],
    "train_r": [("train", dict(epoch_num=0, step_num=3, batch_size=512, _r=1))],
    "trace_context_3": [("TraceContext", dict(graph_type="train", step_num=s)) for s in range(3)],
    "loop_marked": [("train", dict(step_num=s, _r=1), train_loop) for s in range(3)],
}
for window, markers in WINDOWS.items():
    tf.profiler.experimental.start(os.path.join(sys.argv[1], window))
    for marker in markers:
        if marker is None:
            train_function(x)
        else:
            with tf.profiler.experimental.Trace(marker[0], **marker[1]):
                if len(marker) > 2:
                    marker[2](x, tf.constant(4))
                else:
                    train_function(x)
    tf.profiler.experimental.stop()
"""


@pytest.fixture(scope="module")
def eager_captures(tmp_path_factory):
    root = tmp_path_factory.mktemp("eager")
    subprocess.run([sys.executable, "-c", CAPTURE, str(root)], check=True,
                   capture_output=True, timeout=300)
    return {w: xplane_files(root / w)[0]
            for w in ("once", "trace_context", "train_r", "trace_context_3", "loop_marked")}


def _assert_equal_steps(ours, ref):
    """The same steps as xprof's, in number, name and breakdown (to the picosecond)."""
    assert len(ref) > 0 and len(ours) == len(ref)
    assert ours.step_name.tolist() == ref.stepnum.tolist()
    assert ours.index.tolist() == [int(s.split()[-1]) for s in ref.stepnum]
    for (_, mine), (_, theirs) in zip(ours.iterrows(), ref.iterrows()):
        assert mine.duration_ms == pytest.approx(theirs.stepTimeMs, rel=1e-12)
        for col, our_col in CATEGORIES.items():
            assert mine[our_col] == pytest.approx(theirs[col], rel=1e-9, abs=1e-12), col
    parts = ours[CATEGORY_COLUMNS].sum(axis=1)
    np.testing.assert_allclose(parts, ours.duration_ms, rtol=1e-9)


@pytest.mark.parametrize("window", ["trace_context", "train_r", "trace_context_3"])
def test_keras_step_markers_match_xprof(eager_captures, window):
    """tf.keras's step marker around the call: ``train`` with ``_r`` (Keras 2 on TF 2.4+) and
    ``TraceContext`` without one (tf.keras on TF 2.2-2.3, a root of level 1 in the reference
    by its name: without that rule these windows had no marked step).  The marker's group
    holds the call's ``FunctionRun`` (a root of the same level below it) and its work."""
    path = eager_captures[window]
    ours = tp.load(path).steps
    ref, _ = step_table(path)
    _assert_equal_steps(ours, ref)
    assert (ours.source == "markers").all()
    assert ours.step_name.iloc[0] in ("train 3", "train 0")


def test_one_call_without_markers(eager_captures):
    """One call of the training function and no step marker (a window opened inside a Keras 2
    batch, or around one call): TensorFlow records the call's ``FunctionRun``, a root that
    groups the function's work, yet xprof marks no step, since only a named root or a
    ``train``/``test``/``TraceContext`` event in a group does.  We make one step of the call,
    and say so in ``source``."""
    path = eager_captures["once"]
    prof = tp.load(path)
    events = prof.events
    host = events[events.plane == "/host:CPU"]
    assert (host.name == "FunctionRun").sum() == 1
    ref, props = step_table(path)
    assert len(ref) == 0 and "No step time measured" in props.get("input_conclusion", "")
    steps = prof.steps
    assert len(steps) == 1
    step = steps.iloc[0]
    assert step.source == "inferred: the one call of 'train_function' in the window"
    (call,) = host[host.name == "train_function"].itertuples()
    assert step.start_us == pytest.approx(call.start_us)
    assert step.duration_ms * 1e3 >= call.duration_us - 1e-6
    assert step.host_compute_ms > 0


def test_one_call_found_by_its_function_run(eager_captures, monkeypatch):
    """Where TensorFlow names the eager call otherwise, the call around the ``FunctionRun``
    that starts a group (as the reference groups it) is the call: the same step."""
    path = eager_captures["once"]
    by_name = tp.load(path).steps
    monkeypatch.setattr(steps_module, "_FUNCTION_CALL", steps_module.re.compile(r"(?!)"))
    by_run = tp.load(path).steps
    assert len(by_run) == 1
    for col in ("step_name", "source", "start_us", "duration_ms", "host_compute_ms"):
        assert by_run[col].iloc[0] == by_name[col].iloc[0], col


def test_marked_steps_of_a_looping_function(eager_captures):
    """Deliberate difference: where a function loops (a tf.while_loop, Keras 2's
    ``steps_per_execution``, a recurrent layer's loop), the reference makes each iteration of
    the loop a root and takes no other root, so the ``train`` markers lose their groups and it
    finds no step; we keep the roots with ``_r`` and show the three marked steps."""
    path = eager_captures["loop_marked"]
    ref, props = step_table(path)
    assert len(ref) == 0 and "No step time measured" in props.get("input_conclusion", "")
    steps = tp.load(path).steps
    assert steps.step_name.tolist() == ["train 0", "train 1", "train 2"]
    assert (steps.source == "markers").all() and (steps.host_compute_ms > 0).all()


def test_root_events_by_name():
    """Roots besides ``_r``: ``TraceContext`` at level 1 only where it has no ``_r``, the
    batching runtimes' events at their level whatever their ``_r`` (as the reference's
    preprocessing sets it)."""
    from tfprof_nb.analysis.trace.grouping import _root_events
    from tfprof_nb.analysis.runtime.hostdata.host import SparseStat

    r = SparseStat(np.array([2, 5, 9], np.int32), np.array([1, 3, 1], np.int32))
    legacy = np.array([1, 5], np.int32)  # row 5 has _r=3: kept
    named = [(np.array([9], np.int32), 2), (np.array([7], np.int32), 1)]
    out = _root_events(r, legacy, named)
    assert out.rows.tolist() == [1, 2, 5, 7, 9] and out.values.tolist() == [1, 1, 3, 1, 2]
    assert _root_events(r, np.empty(0, np.int32), [(np.empty(0, np.int32), 1)]) is r
