"""``prof.what_if`` (:mod:`tfprof_nb.analysis.critical.what_if`): no scaling replays every step
as measured; synthetic XSpaces (TensorFlow's xplane_pb2) with a known answer; the committed
H200 pair (input built in Python loops, then with NumPy) predicted within 10 %."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.critical.what_if import INPUT_NOTE
from tests.analysis.critical.test_path import REAL, _kernel, _launch, _space
from tests.test_cli import tfprof

DATA = Path(__file__).resolve().parents[2] / "data"
HOST, GPU0 = "/host:CPU", "/device:GPU:0"


def _load(tmp_path, planes):
    path = tmp_path / "space.xplane.pb"
    path.write_bytes(_space(planes))
    return tp.load(path)


def _one_step(tmp_path, dev):
    host = [_launch(0, 1, 1), _launch(1, 2, 1), _launch(2, 3, 1),
            ("cudaStreamSynchronize", 3, 30, {})]
    return _load(tmp_path, {HOST: {"python": host}, GPU0: dev})


def test_a_kernel_on_the_path_scaled_by_half_shortens_the_step_by_half_of_it(tmp_path):
    dev = {"Stream #1": [_kernel("k0", 2, 2, 1, 1), _kernel("k1_long", 4, 26, 2, 1),
                         _kernel("k2", 30, 2, 3, 1)]}
    prof = _one_step(tmp_path, dev)
    w = prof.what_if({"k1_*": 0.5})
    assert w.measured_ms.iloc[-1] == pytest.approx(0.030)
    assert w.predicted_ms.iloc[-1] == pytest.approx(0.030 - 0.013, rel=1e-6)
    assert w.attrs["matched"]["k1_*"]["names"] == {"k1_long": pytest.approx(0.026)}
    cp = w.attrs["critical_path"]
    long = cp[cp.name == "k1_long"]
    assert long.duration_us.sum() == pytest.approx(13.0)
    assert cp.duration_us.sum() == pytest.approx(17.0, abs=1e-3)


def test_a_kernel_off_the_path_changes_nothing(tmp_path):
    """k_short on a second stream is overlapped by k_long: halving it (or doubling it while
    it stays shorter) leaves the step as measured."""
    dev = {"Stream #1": [_kernel("k_long", 2, 30, 1, 1)],
           "Stream #2": [_kernel("k_short", 3, 10, 2, 1)]}
    prof = _one_step(tmp_path, dev)
    for f in (0.5, 2.0):
        w = prof.what_if({"k_short": f})
        assert w.predicted_ms.iloc[-1] == pytest.approx(w.measured_ms.iloc[-1], rel=1e-9)
        assert w.attrs["matched"]["k_short"]["nodes"] == 1
    w = prof.what_if({"k_long": 0.5})
    assert w.predicted_ms.iloc[-1] == pytest.approx(0.015, rel=1e-6)


def _host_work(tmp_path, on_path: bool):
    """Two steps (device windows of group ids), each: kernel ``a``, 20 us of host work
    ``prep``, kernel ``b``.  On the path: ``prep`` runs on the training thread before ``b``'s
    launch; off the path: on another thread while ``a`` (25 us) computes, ``b`` launched at
    once."""
    main, other, dev = [], [], []
    for i, t in enumerate((0.0, 40.0)):
        g = i + 1
        main.append(_launch(t, 2 * g, g))
        (main if on_path else other).append(("prep", t + 2, 20, {}))
        at = t + (23 if on_path else 2)
        main += [_launch(at, 2 * g + 1, g), ("cudaStreamSynchronize", at + 1, t + 31 - at - 1,
                                               {"group_id": g})]
        dev += [_kernel("a", t + 1, 5 if on_path else 25, 2 * g, g),
                _kernel("b", t + (24 if on_path else 26), 6 if on_path else 4, 2 * g + 1, g)]
    planes = {HOST: {"python": main, **({"worker": other} if other else {})},
              GPU0: {"Stream #1": dev}}
    return _load(tmp_path, planes)


@pytest.mark.parametrize("on_path", [True, False], ids=["on_path", "off_path"])
def test_host_work_moves_the_step_only_on_the_path(tmp_path, on_path):
    prof = _host_work(tmp_path, on_path)
    assert (prof.what_if({}).predicted_ms == prof.what_if({}).measured_ms).all()
    w = prof.what_if({"prep": 0.5})
    assert w.attrs["matched"]["prep"]["nodes"] == 2
    shrink = (w.measured_ms - w.predicted_ms).to_numpy()
    if on_path:
        assert shrink == pytest.approx([0.010, 0.010], abs=2e-6)
        assert "prep" in set(w.attrs["critical_path"].name)
    else:
        assert shrink == pytest.approx([0.0, 0.0], abs=1e-9)


def test_notes_and_unmatched_keys(tmp_path):
    prof = _one_step(tmp_path, {"Stream #1": [_kernel("k0", 2, 2, 1, 1)]})
    w = prof.what_if({"no_such_op*": 3.0, "device_compute": 1.0})
    notes = " ".join(w.attrs["notes"])
    assert "recompiles" in notes and "'no_such_op*' matched no event" in notes
    assert w.attrs["matched"]["device_compute"]["nodes"] == 1
    # 'input' is the path's category, not the overview's measure: said where it is scaled
    assert INPUT_NOTE not in w.attrs["notes"]
    assert INPUT_NOTE in prof.what_if({"input": 0.5}).attrs["notes"]
    assert list(w.columns) == ["host", "step", "measured_ms", "predicted_ms", "low_ms",
                               "high_ms", "change"]
    with pytest.raises(ValueError):
        prof.what_if({"k0": -1})


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_no_scaling_predicts_every_step_as_measured(path):
    """The replay itself, on every real capture (TPU's too, which prof.what_if refuses:
    see test_tpu_steps_are_not_predicted)."""
    from tfprof_nb.analysis.critical.what_if import what_if

    prof = tp.load(path)
    w = what_if(prof.result("replay_graph"), prof.event_offsets, {})
    assert len(w) == len(prof.steps)
    assert np.allclose(w.predicted_ms, w.measured_ms, rtol=1e-3, atol=0)
    assert (w.low_ms <= w.predicted_ms).all() and (w.predicted_ms <= w.high_ms).all()


def test_tpu_steps_are_not_predicted():
    """TPU v6e: with no edge between the host's calls and the TPU programs, the replay moved
    nothing with the devices ('device_compute x0.5: -0.0%'); what_if refuses and says why,
    and the CLI answers with that error."""
    from tfprof_nb.analysis.critical.path_summary import TPU_PATH_WHY

    path = DATA / "tpu_v6e_jax_inference.xplane.pb"
    with pytest.raises(ValueError, match="what_if does not predict TPU steps: ") as err:
        tp.load(path).what_if({"device_compute": 0.5})
    assert TPU_PATH_WHY in str(err.value)
    run = tfprof("what-if", path, "--scale", "device_compute=0.5", code=2)
    assert "what_if does not predict TPU steps" in run.stderr


def test_no_scaling_on_a_tf_cpu_capture(cpu_file):
    w = tp.load(cpu_file).what_if({})
    assert len(w) and np.allclose(w.predicted_ms, w.measured_ms, rtol=1e-3, atol=0)


def _self_ms(prof, name):
    """Each ``name`` event's own time (ms): its duration less its children's."""
    from tfprof_nb.analysis.critical.what_if import node_self_ms

    return node_self_ms(prof, name)


def test_the_h200_pair_input_in_python_predicts_the_numpy_run():
    """Scaling ``train``'s own time (the batch built in Python loops) to its time in the run
    that builds it with NumPy predicts that run's median step within 10 %."""
    slow = tp.load(DATA / "jax_h200_inputbound.xplane.pb")
    fast = tp.load(DATA / "jax_h200_transformer.xplane.pb")
    factor = np.median(_self_ms(fast, "train")) / np.median(_self_ms(slow, "train"))
    assert 0.2 < factor < 0.3
    w = slow.what_if({"train": factor})
    measured = fast.steps.duration_ms.median()
    error = abs(w.predicted_ms.median() - measured) / measured
    assert error < 0.10


def test_a_replay_that_would_not_fit_is_refused_first(monkeypatch):
    """A replay needing more than the machine's free memory (here: a cost per node no machine
    has) is refused before it starts, naming the host, the need and the way out."""
    from tfprof_nb.analysis.critical import what_if as module

    prof = tp.load(DATA / "jax_h200_inputbound.xplane.pb")
    monkeypatch.setattr(module, "REPLAY_NODE_BYTES", 2**50)
    with pytest.raises(MemoryError, match=r"what_if: host jax_h200_inputbound's dependency "
                       r"graph has [\d,]+ events.*GiB are free.*window=\(start_us, end_us\)"):
        prof.what_if({"input": 0.5})
    monkeypatch.undo()
    assert len(prof.what_if({"input": 0.5})) == len(prof.steps)
