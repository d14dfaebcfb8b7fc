"""A JAX step on XLA:CPU: the host waits in ``np.asarray`` (PjRt's ``CommonPjRtBuffer::Await``
markers) for the program's ops on XLA:CPU's threads; the path and the replay go through those
ops (a synthetic XSpace with a known path, TensorFlow's xplane_pb2)."""

from __future__ import annotations

import pytest

from tests.analysis.critical.test_path import HOST, _run

PYTHON = [("train", 0, 30, {"step_num": 1, "_r": 1}),
          ("PjitFunction(f)", 0.5, 1.4, {}),
          ("ThreadpoolListener::Record", 1.5, 0, {"_pt": 15, "_p": 1}),
          ("np.asarray(jax.Array)", 2, 26, {}),
          ("CommonPjRtBuffer::Await", 3, 0, {"_pt": 0, "_p": 9}),
          ("CommonPjRtBuffer::Await", 27, 0.2, {"_ct": 0, "_c": 9})]
XLA = [("ThreadpoolListener::StartRegion", 3.5, 0, {"_ct": 15, "_c": 1}),
       ("ThunkExecutor::Execute", 4, 22, {}),
       ("fusion.1", 5, 20, {"hlo_op": "fusion.1", "hlo_module": "jit_f"})]
PLANES = {HOST: {"python": PYTHON, "tf_XLAPjRtCpuClient/1": XLA}}


def test_np_asarray_waits_for_the_programs_ops(tmp_path):
    _, path = _run(tmp_path, PLANES, 0.0)
    assert path == [(0.0, 0.5, "host_compute", "event", "train"),
                    (0.5, 1.0, "host_compute", "event", "PjitFunction(f)"),
                    (1.5, 2.5, "idle", "wait", "ThunkExecutor::Execute"),
                    (4.0, 1.0, "host_compute", "event", "ThunkExecutor::Execute"),
                    (5.0, 20.0, "host_compute", "event", "fusion.1"),
                    (25.0, 2.0, "host_wait", "wait", "CommonPjRtBuffer::Await"),
                    (27.0, 0.2, "host_compute", "event", "CommonPjRtBuffer::Await"),
                    (27.2, 0.8, "host_compute", "event", "np.asarray(jax.Array)"),
                    (28.0, 2.0, "host_compute", "event", "train")]


def test_a_faster_op_shortens_the_wait(tmp_path):
    prof, _ = _run(tmp_path, PLANES, 0.0)
    step = prof.steps.index[-1]
    w = prof.what_if({"fusion.1": 0.5}).set_index("step").loc[step]
    assert w.measured_ms * 1e3 == pytest.approx(30.0)
    assert w.predicted_ms * 1e3 == pytest.approx(20.0, abs=1e-3)
