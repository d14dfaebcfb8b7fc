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


def _union_us(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, -np.inf
    for b, e in sorted(intervals):
        if e > end:
            total += e - max(b, end)
            end = e
    return total


def test_xla_thread_pool_work_is_host_compute(jax_profiles):
    """Deliberate difference: XLA:CPU runs a jitted program on its client's thread pool, in a
    ThreadpoolListener region linked to the step's call (the reference converters add these
    regions too).  We count each step's region as host compute, so a step's host compute is
    the union of its events on the calling thread and its region.  xprof leaves these regions
    out in the captures we checked (its host compute equals that of the calling thread
    alone), so ours is at least xprof's."""
    xplane = jax_profiles["marked"]
    prof = tp.load(xplane)
    ours = prof.steps
    ev = prof.events
    ev = ev.assign(end_us=ev.start_us + ev.duration_us)
    starts = ev[ev.name == "ThreadpoolListener::StartRegion"].start_us.to_numpy()
    stops = ev[ev.name == "ThreadpoolListener::StopRegion"].start_us.to_numpy()
    calling = ev[ev.line == ev.loc[ev.name == "train", "line"].iloc[0]]
    for step, row in ours.iterrows():
        b, e = row.start_us, row.start_us + row.duration_ms * 1e3
        inside = calling[(calling.start_us >= b) & (calling.end_us <= e + 1e-6)
                         & (calling.name != "train")]
        intervals = list(zip(inside.start_us, inside.end_us))
        region = (starts >= b) & (starts < e)
        assert region.sum() == 1, step
        stop = stops[stops > starts[region][0]].min()
        intervals.append((starts[region][0], min(stop, e)))
        assert row.host_compute_ms * 1e3 == pytest.approx(_union_us(intervals), abs=2e-3)
    ref, _ = step_table(xplane)
    mine = ours.loc[_ref_steps(ref)]
    assert (mine.host_compute_ms.to_numpy() >= ref.hostComputeTimeMs.to_numpy() - 1e-9).all()
    assert (mine.host_compute_ms.to_numpy() > ref.hostComputeTimeMs.to_numpy()).any()


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
    outer = calls.drop_duplicates("start_us").start_us.to_numpy()  # a call nests in another
    outer = np.sort(outer)[np.r_[True, np.diff(np.sort(outer)) > 1.0]]
    np.testing.assert_allclose(steps.start_us, outer[:6], atol=1e-3)
    ends = steps.start_us + steps.duration_ms * 1e3
    np.testing.assert_allclose(ends.iloc[:-1], steps.start_us.iloc[1:], atol=1e-3)
    parts = steps[list(CATEGORIES.values())].sum(axis=1)
    np.testing.assert_allclose(parts, steps.duration_ms, rtol=1e-9)


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
