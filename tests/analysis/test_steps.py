"""prof.steps against xprof's step-time breakdown (input_pipeline_analyzer)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.constants import CATEGORY_COLUMNS

from ..conftest import xplane_files
from .oracle import step_table
from .real_xla import NVIDIA, REAL, named

CATEGORIES = {"deviceComputeTimeMs": "device_compute_ms",
              "deviceToDeviceTimeMs": "device_to_device_ms",
              "deviceCollectivesTimeMs": "device_collectives_ms",
              "hostComputeTimeMs": "host_compute_ms", "kernelLaunchTimeMs": "kernel_launch_ms",
              "infeedTimeMs": "input_ms", "outfeedTimeMs": "output_ms",
              "compileTimeMs": "compilation_ms", "otherTimeMs": "other_ms"}

NO_MARKER_FIT = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, keras, tensorflow as tf
x = np.random.rand(1024, 8).astype("float32"); y = np.random.rand(1024, 1).astype("float32")
m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
m.compile("sgd", "mse")
m.fit(x[:64], y[:64], batch_size=32, verbose=0)
tf.profiler.experimental.start(sys.argv[1])
m.fit(x, y, batch_size=64, epochs=1, verbose=0)
tf.profiler.experimental.stop()
"""


def _compare(ours, ref):
    """Every step the reference shows is ours too, with the same breakdown."""
    assert len(ref) > 0
    ref_steps = [int(s.split()[-1]) for s in ref.stepnum]
    assert set(ref_steps) <= set(ours.index)
    for (_, mine), (_, theirs) in zip(ours.loc[ref_steps].iterrows(), ref.iterrows()):
        # to the picosecond: a thread-pool region counted as host compute once made it differ
        # by a microsecond, enough to flip the input verdict's rounding
        assert mine.duration_ms == pytest.approx(theirs.stepTimeMs, rel=1e-12)
        for col, our_col in CATEGORIES.items():
            assert mine[our_col] == pytest.approx(theirs[col], rel=1e-9, abs=1e-12), \
                (col, mine.step_name)


def test_cpu_steps_match_xprof(cpu_file):
    ours = tp.load(cpu_file).steps
    ref, _ = step_table(cpu_file)
    _compare(ours, ref)
    assert (ours.source == "markers").all()
    # Deliberate difference: all 8 captured steps are whole (each marker lies inside the
    # profile window), so all 8 are shown; the reference drops the first and the last step
    # of any profile with more than 5 steps, complete or not.
    assert ours.index.tolist() == list(range(8))
    assert [int(s.split()[-1]) for s in ref.stepnum] == list(range(1, 7))
    parts = ours[list(CATEGORIES.values())].sum(axis=1)
    np.testing.assert_allclose(parts, ours.duration_ms, rtol=1e-9)


def test_gpu_fixture_steps_match_xprof(gpu_fixture_file):
    ours = tp.load(gpu_fixture_file).steps
    ref, _ = step_table(gpu_fixture_file)
    assert len(ours) == len(ref) == 1
    mine, theirs = ours.iloc[0], ref.iloc[0]
    assert mine.duration_ms == pytest.approx(theirs.stepTimeMs, rel=1e-6)
    assert mine.other_ms == pytest.approx(theirs.otherTimeMs, rel=1e-6)
    # CUPTI names copies MemcpyH2D/MemcpyD2H; the reference only knows MemcpyHToD-style
    # names and counts them as device compute: so do we
    for col, our_col in CATEGORIES.items():
        assert mine[our_col] == pytest.approx(theirs[col], rel=1e-9, abs=1e-12), col
    assert mine.device_compute_16_ms > 0 and mine.device_compute_32_ms > 0


@pytest.mark.parametrize("capture", named(NVIDIA))
def test_jax_gpu_steps_equal_xprof(capture):
    """JAX on an H100 and an H200 (tests/data): every step the reference keeps (all but the
    first and the last) has the same breakdown to the picosecond, including the device copies
    whose host side no step reaches (JAX's device_put runs on a PjRt worker thread): they
    count in the step whose work they follow."""
    path = REAL / capture
    ours = tp.load(path).steps
    ref, props = step_table(path)
    assert (ours.source == "device").all() and len(ours) >= 8 and len(ref) == len(ours) - 2
    steps = [int(s.split()[-1]) for s in ref.stepnum]
    for (_, mine), (_, theirs) in zip(ours.loc[steps].iterrows(), ref.iterrows()):
        assert mine.duration_ms == pytest.approx(theirs.stepTimeMs, rel=1e-12)
        for col, our_col in CATEGORIES.items():
            assert mine[our_col] == pytest.approx(theirs[col], rel=1e-9, abs=1e-12), col
    assert f"{ours.loc[steps].duration_ms.mean():.1f}" == props["steptime_ms_average"]


def test_steps_inferred_without_markers(tmp_path):
    """Keras 3 fit without a step-marking callback: the reference finds no steps; we infer
    them from the repeated tf.function call, one per batch."""
    subprocess.run([sys.executable, "-c", NO_MARKER_FIT, str(tmp_path)], check=True,
                   capture_output=True, timeout=300)
    (xplane,) = xplane_files(tmp_path)
    ref, props = step_table(xplane)
    assert len(ref) == 0 and "No step time measured" in props.get("input_conclusion", "")
    steps = tp.load(xplane).steps
    assert len(steps) == 16  # one per batch: every call lies inside the profile window
    assert steps.source.iloc[0].startswith("inferred")
    assert "batches" not in steps.source.iloc[0]  # (one batch a call: nothing to say)
    assert (steps.host_compute_ms > 0).all()


ONE_CALL = """
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, keras, tensorflow as tf
x = np.random.rand(2048, 64).astype("float32"); y = np.random.randint(0, 10, 2048)
m = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256, activation="relu"),
                      keras.layers.Dense(10)])
m.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
m.fit(x, y, batch_size=2048, verbose=0)  # traced before the window
tf.profiler.experimental.start(sys.argv[1])
m.fit(x, y, batch_size=2048, epochs=1, verbose=0)  # one batch: one train function call
tf.profiler.experimental.stop()
"""


def test_one_training_call_in_the_window_is_one_step(tmp_path):
    """A window holding one call of the training function (one fit batch) is one step: the
    call and what it dispatched.  xprof finds none here: the call's FunctionRun groups the
    function's work but marks no step (test_steps_eager: marked calls match xprof's)."""
    subprocess.run([sys.executable, "-c", ONE_CALL, str(tmp_path)], check=True,
                   capture_output=True, timeout=300)
    (xplane,) = xplane_files(tmp_path)
    prof = tp.load(xplane)
    steps = prof.steps
    assert len(steps) == 1
    step = steps.iloc[0]
    call = step.step_name.rsplit(" ", 1)[0]
    assert step.source == f"inferred: the one call of '{call}' in the window"
    events = prof.events
    (duration_us,) = events[(events.name == call) & (events.plane == "/host:CPU")].duration_us
    assert duration_us > 0  # the step holds the call (ms and us round apart: 1 ps slack)
    assert step.duration_ms * 1e3 >= duration_us - 1e-6
    assert step.start_us == pytest.approx(events[events.name == call].start_us.iloc[0])
    parts = steps[CATEGORY_COLUMNS].sum(axis=1)
    np.testing.assert_allclose(parts, steps.duration_ms, rtol=1e-9)
    assert step.host_compute_ms > 0
    overview = prof.overview()
    assert overview.step_time["steps"] == 1
    assert any(r.startswith(f"steps inferred from the one call of '{call}'")
               for r in overview.reasons)
    ref, props = step_table(xplane)
    assert len(ref) == 0


def test_capture_profile_steps(cpu_logdir):
    steps = tp.load(cpu_logdir).steps
    assert steps.host.nunique() == 1 and steps.duration_ms.gt(0).all()


def test_empty_steps_have_the_columns():
    from tfprof_nb.analysis.steps.breakdown import STEP_COLUMNS, empty_steps

    empty = empty_steps()
    assert list(empty.columns) == STEP_COLUMNS and empty.index.name == "step"


def test_host_names_are_typed_as_by_their_string_methods():
    """Host event names typed and marked per name (Python's string methods, as pandas' ``.str``
    applied them): each rule, its precedence, case, and a name that is not a string."""
    from tfprof_nb.analysis.steps import breakdown as b

    names = ["IteratorGetNext", "iteratorgetnext:x", "MemcpyHtoD", "MEMCPYHTOH", "MemcpyHtoD:x",
             "a:InfeedEnqueueTuple", "InfeedEnqueue", "train", "train/x", "test_1",
             "TraceContext", "FunctionRun", "EagerExecute: y", "", None]
    assert b.classify_host(names).tolist() == [
        b.HOST_WAIT_INPUT, b.HOST_WAIT_INPUT, b.HOST_TO_DEVICE, b.HOST_TO_HOST,
        b.HOST_COMPUTE, b.HOST_TO_DEVICE, b.HOST_COMPUTE, *[b.HOST_COMPUTE] * 8]
    assert np.flatnonzero(b._explicit_marker(names)).tolist() == [7, 9, 10]
    assert np.flatnonzero(b._each(names, lambda n: n.startswith(b._NOT_COMPUTE))).tolist() \
        == [11, 12]


def test_one_step_number_for_two_steps():
    """A loop that numbers each epoch's steps from 0 (tests/data/tf_cpu_epochs.xplane.pb: 2 x
    6 steps): each step keeps a number of its own, its group id (XProf's step number: its pod
    viewer's), the marker's name beside it; XProf's step table counts 10 of the 12 by place,
    and every sentence counts 12 steps, not the 6 distinct marker numbers."""
    from tfprof_nb.analysis.findings.measures import xprof_steps_words

    from ..conftest import DATA
    from .oracle import run_tool

    path = DATA / "tf_cpu_epochs.xplane.pb"
    prof = tp.load(path)
    steps = prof.steps
    assert steps.index.is_unique and list(steps.index) == list(steps.group_id) == list(range(12))
    assert list(steps.step_name) == [f"train {i}" for i in range(6)] * 2
    ref, _ = step_table(path)
    assert list(ref.stepnum) == list(steps.step_name.iloc[1:-1])
    np.testing.assert_allclose(ref.stepTimeMs, steps.duration_ms.iloc[1:-1], atol=1e-6)
    pod = run_tool(path, "pod_viewer")["podStatsSequence"]["podStatsMap"]
    assert [r["stepNum"] for r in pod] == list(prof.pod.xprof_step) == list(steps.index)
    assert xprof_steps_words(steps) == "the 10 steps XProf counts, without the first and last " \
        "of the 12"
    assert "the 12 steps are bound by" in prof.critical_path_summary.attrs["sentence"]
    assert not prof.critical_path.duplicated(["host", "step", "order"]).any()
    assert "no GPU or TPU in this profile: the step-time breakdown's device columns are " \
        "zero" in prof.overview().reasons  # (no XLA: no device side to speak of)


def test_inferred_steps_say_how_many_batches_each_call_took():
    """Keras 3's fit with steps_per_execution=4 (tests/data/keras3_steps_per_execution): no
    step markers, so the steps are the repeated calls of multi_step_on_iterator, each running
    four training steps; the step source says so, counted from the tf.data root calls that
    start inside each step."""
    from ..conftest import DATA

    prof = tp.load(DATA / "keras3_steps_per_execution.xplane.pb")
    steps, ev = prof.steps, prof.events
    roots = ev[ev.name == "Iterator::Root"].join(prof.stat("id").rename("pipeline"))
    assert roots.pipeline.nunique() == 2  # (each epoch's iterator: a pipeline of its own)
    each = []
    for step in steps.itertuples():
        inside = roots[(roots.start_us >= step.start_us) &
                       (roots.start_us < step.start_us + step.duration_ms * 1e3)]
        each.append(int(inside.pipeline.value_counts().max()))
    assert len(steps) == 12 and set(each) == {4}
    assert steps.source.iloc[0] == (
        "inferred: repeated 'multi_step_on_iterator'; each call took 4 tf.data batches, so "
        "one step here is 4 training steps, as Keras's steps_per_execution runs them")


def test_a_tf1_session_loop_has_its_runs_as_steps():
    """TensorFlow 1's graph mode (tests/data/tf1_session_run: 20 ``sess.run`` calls, no
    markers): xprof finds no steps; the steps are inferred from the repeated SessionRun, one
    per call, each spanning its call."""
    from ..conftest import DATA

    path = DATA / "tf1_session_run.xplane.pb"
    ref, _ = step_table(path)
    prof = tp.load(path)
    steps, ev = prof.steps, prof.events
    runs = ev[ev.name == "SessionRun"].sort_values("start_us")
    assert len(ref) == 0 and len(runs) == 20 == len(steps)
    assert steps.source.iloc[0] == "inferred: repeated 'SessionRun'"
    np.testing.assert_allclose(steps.start_us.to_numpy(), runs.start_us.to_numpy(), atol=1e-6)
    assert (steps.duration_ms.to_numpy() * 1e3 >= runs.duration_us.to_numpy() - 1e-3).all()
