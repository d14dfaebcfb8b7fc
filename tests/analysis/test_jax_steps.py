"""prof.steps on real JAX CPU profiles, against xprof's step-time breakdown.

The profiles are captured with ``jax.profiler`` in a subprocess (tests/make_jax_profile.py):
a jitted train step, six steps, marked with ``StepTraceAnnotation`` (named ``train`` or
``my_step``) or not marked at all.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp

from ..make_jax_profile import capture
from .oracle import step_table
from .test_steps import CATEGORIES

XLA_CLIENT_THREADS = "tf_XLAPjRtCpuClient"  # the thread pool that runs XLA:CPU programs


@pytest.fixture(scope="module")
def jax_profiles(tmp_path_factory) -> dict:
    return {s: capture(tmp_path_factory.mktemp(f"jax_{s}"), s)
            for s in ("marked", "named", "unmarked")}


def _without_xla_threads(xplane, out):
    """A copy of ``xplane`` without the XLA client's thread-pool lines."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(xplane.read_bytes())
    for plane in space.planes:
        keep = [line for line in plane.lines if not line.name.startswith(XLA_CLIENT_THREADS)]
        del plane.lines[:]
        plane.lines.extend(keep)
    out.write_bytes(space.SerializeToString())
    return out


def _ref_steps(ref) -> list[int]:
    return [int(s.split()[-1]) for s in ref.stepnum]


@pytest.mark.parametrize("scenario,name", [("marked", "train"), ("named", "my_step")])
def test_marked_jax_steps_match_xprof(jax_profiles, tmp_path, scenario, name):
    """StepTraceAnnotation markers of any name are steps: six marked steps give six steps.
    Durations, names and numbers match xprof's; so does every category once the XLA client's
    threads are left out (see the next test for what we count there)."""
    xplane = jax_profiles[scenario]
    ours = tp.load(xplane).steps
    ref, _ = step_table(xplane)
    assert (ours.source == "markers").all()
    assert ours.index.tolist() == list(range(6))
    assert ours.step_name.tolist() == [f"{name} {i}" for i in range(6)]
    # Deliberate difference, as for TensorFlow: all six steps are whole, so all six are
    # shown; xprof drops the first and the last of any profile with more than five steps.
    assert _ref_steps(ref) == [1, 2, 3, 4]
    mine = ours.loc[_ref_steps(ref)]
    np.testing.assert_allclose(mine.duration_ms, ref.stepTimeMs, rtol=1e-6)
    parts = ours[list(CATEGORIES.values())].sum(axis=1)
    np.testing.assert_allclose(parts, ours.duration_ms, rtol=1e-9)

    stripped = _without_xla_threads(xplane, tmp_path / "stripped.xplane.pb")
    ours, (ref, _) = tp.load(stripped).steps, step_table(stripped)
    assert _ref_steps(ref) == [1, 2, 3, 4]
    for (_, m), (_, t) in zip(ours.loc[_ref_steps(ref)].iterrows(), ref.iterrows()):
        assert m.duration_ms == pytest.approx(t.stepTimeMs, rel=1e-6)
        for col, our_col in CATEGORIES.items():
            assert m[our_col] == pytest.approx(t[col], abs=1e-6), (col, m.step_name)


def _union_us(intervals) -> float:
    total, end = 0.0, -np.inf
    for b, e in sorted(intervals):
        if e > end:
            total += e - max(b, end)
            end = e
    return total


def _busy_until(events: pd.DataFrame, t: float) -> float:
    """End of the first busy period (overlapping events) starting after ``t``."""
    after = sorted(zip(events.start_us[events.start_us > t], events.end_us[events.start_us > t]))
    stop = after[0][1]
    for b, e in after[1:]:
        if b > stop:
            break
        stop = max(stop, e)
    return stop


def test_xla_thread_pool_work_follows_the_reference(jax_profiles):
    """XLA:CPU runs a jitted program on its client's thread pool, in a ThreadpoolListener
    region; the reference leaves such regions ungrouped, so a step's host compute is its
    calling thread's events, plus an artefact of the reference's priority tracker that we
    reproduce: the region's zero-length StartRegion sorts its end before its start, and
    when it falls where the calling thread is idle (the call already returned) host compute
    runs from there until the calling thread's next busy period ends, idle time included.
    Both parts are checked on every step, and against the reference where it has the step."""
    xplane = jax_profiles["marked"]
    prof = tp.load(xplane)
    ev = prof.events
    ev = ev.assign(end_us=ev.start_us + ev.duration_us)
    starts = ev[ev.name == "ThreadpoolListener::StartRegion"].start_us.to_numpy()
    calling = ev[ev.line == ev.loc[ev.name == "train", "line"].iloc[0]]
    ref, _ = step_table(xplane)
    ref.index = _ref_steps(ref)
    for step, row in prof.steps.iterrows():
        b, e = row.start_us, row.start_us + row.duration_ms * 1e3
        inside = calling[(calling.start_us >= b) & (calling.end_us <= e + 1e-6)
                         & (calling.name != "train")]
        own = list(zip(inside.start_us, inside.end_us))
        (start,) = starts[(starts >= b) & (starts < e)]
        idle = not ((inside.start_us <= start) & (inside.end_us > start)).any()
        artefact = [(start, min(_busy_until(inside, start), e))] if idle else []
        assert row.host_compute_ms * 1e3 == pytest.approx(_union_us(own + artefact),
                                                          abs=2e-3), (step, idle)
        if step in ref.index:
            assert row.host_compute_ms == pytest.approx(ref.hostComputeTimeMs[step],
                                                        rel=1e-9, abs=1e-12), step
    assert len(prof.steps) == 6


def test_unmarked_jax_steps_are_inferred(jax_profiles):
    """Without markers xprof finds no steps; we infer one per call of the jitted step (the
    repeated top-level event), each lasting until the next call starts."""
    xplane = jax_profiles["unmarked"]
    ref, props = step_table(xplane)
    assert len(ref) == 0 and "No step time measured" in props.get("input_conclusion", "")
    prof = tp.load(xplane)
    steps = prof.steps
    assert len(steps) == 6
    assert (steps.source == "inferred: repeated 'PjitFunction(train_step)'").all()
    assert (steps.host_compute_ms > 0).all()
    calls = prof.events
    calls = calls[calls.name == "PjitFunction(train_step)"]
    begin, end = calls.start_us.to_numpy(), (calls.start_us + calls.duration_us).to_numpy()
    inside = (begin[:, None] >= begin) & (end[:, None] <= end) & (
        np.arange(len(begin))[:, None] != np.arange(len(begin)))
    outer = np.sort(begin[~inside.any(axis=1)])  # the jitted call nests in a call of itself
    assert len(outer) == 6
    np.testing.assert_allclose(steps.start_us, outer, atol=1e-3)
    ends = steps.start_us + steps.duration_ms * 1e3
    np.testing.assert_allclose(ends.iloc[:-1], steps.start_us.iloc[1:], atol=1e-3)
    parts = steps[list(CATEGORIES.values())].sum(axis=1)
    np.testing.assert_allclose(parts, steps.duration_ms, rtol=1e-9)
    # XProf's verdict on these steps says, wherever it is read, that they are inferred here
    said = "By XProf's rule on the steps inferred here (XProf itself finds none): "
    for text in (prof.input_pipeline.summary["input_statement"],
                 prof.overview().input_bound["input_statement"],
                 prof.overview().verdict["statement"]):
        assert text.startswith(said) and text.count(said) == 1, text
    assert prof.measures.at["step_time_mean_ms", "scope"] == \
        "over the 6 steps inferred here; XProf itself finds no steps"  # (the mean's card)


def test_jax_profile_loads_from_its_logdir(jax_profiles):
    """JAX writes <host>.xplane.pb and <host>.trace.json.gz into the run directory; loading
    the logdir or the run directory reads the XSpace file only."""
    xplane = jax_profiles["marked"]
    run_dir = xplane.parent
    assert sorted(p.name.split(".", 1)[1] for p in run_dir.iterdir()) == \
        ["trace.json.gz", "xplane.pb"]
    for path in (run_dir.parent.parent.parent, run_dir):
        prof = tp.load(path)
        assert prof.source == [str(xplane)]
        pd.testing.assert_frame_equal(prof.steps, tp.load(xplane).steps)
