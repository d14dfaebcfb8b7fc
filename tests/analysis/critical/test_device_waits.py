"""Collectives across devices and async start/done pairs across streams (synthetic XSpaces
with a known critical path, TensorFlow's xplane_pb2): the path and the replay follow the
device that arrived last, and the stream the done waits for."""

from __future__ import annotations

import pytest

from tests.analysis.critical.test_path import GPU0, GPU1, HOST, _kernel, _launch, _run

AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"


def _two_gpus():
    host = [_launch(0, 1, 1), _launch(1, 2, 1), _launch(2, 3, 1), _launch(3, 4, 1),
            ("cudaStreamSynchronize", 4, 28, {})]
    gpu0 = [_kernel("k0", 2, 8, 1, 1), _kernel(AR, 10, 21, 3, 1)]
    gpu1 = [_kernel("k1_long", 3, 22, 2, 1), _kernel(AR, 25, 5.9, 4, 1)]
    return {HOST: {"python": host}, GPU0: {"Stream #1": gpu0}, GPU1: {"Stream #1": gpu1}}


def test_an_all_reduce_waits_for_the_device_that_arrived_last(tmp_path):
    """GPU:0 reaches the all-reduce at 10 us, GPU:1 only at 25 after its long kernel: the path
    is GPU:1's kernel and transfer, GPU:0's 21 us in the collective a wait on it."""
    _, path = _run(tmp_path, _two_gpus(), 0.0)
    assert path == [(2.0, 1.0, "kernel_launch", "wait", "k1_long"),
                    (3.0, 22.0, "device_compute", "event", "k1_long"),
                    (25.0, 5.9, "device_collectives", "event", AR),
                    (30.9, 0.1, "device_collectives", "wait", AR)]


def test_a_faster_late_device_shortens_the_collective_on_every_device(tmp_path):
    prof, _ = _run(tmp_path, _two_gpus(), 0.0)
    step = prof.steps.index[-1]
    w = prof.what_if({"k1_long": 0.5}).set_index("step").loc[step]
    assert w.measured_ms * 1e3 == pytest.approx(29.0)
    assert w.predicted_ms * 1e3 == pytest.approx(18.0, abs=1e-3)  # k1 11 us shorter
    early = prof.what_if({"k0": 0.5}).set_index("step").loc[step]
    assert early.predicted_ms == pytest.approx(early.measured_ms)  # (off the path)


def _start_done():
    host = [_launch(0, 1, 1), _launch(1, 2, 1), _launch(3, 3, 1), _launch(4, 4, 1),
            ("cudaStreamSynchronize", 5, 19, {})]
    compute = [_kernel("k0", 2, 4, 1, 1), _kernel("all-reduce-done.1", 20, 1, 3, 1),
               _kernel("k2", 21, 2, 4, 1)]
    comm = [_kernel("all-reduce-start.1", 4, 15.5, 2, 1)]
    return {HOST: {"python": host}, GPU0: {"Stream #1": compute, "Stream #2": comm}}


def test_a_done_waits_for_its_start_on_the_other_stream(tmp_path):
    _, path = _run(tmp_path, _start_done(), 0.0)
    assert path == [(2.0, 2.0, "kernel_launch", "wait", "all-reduce-start.1"),
                    (4.0, 15.5, "device_collectives", "event", "all-reduce-start.1"),
                    (19.5, 0.5, "device_collectives", "wait", "all-reduce-done.1"),
                    (20.0, 1.0, "device_collectives", "event", "all-reduce-done.1"),
                    (21.0, 2.0, "device_compute", "event", "k2")]


def test_a_faster_async_collective_moves_the_done_and_what_follows(tmp_path):
    prof, _ = _run(tmp_path, _start_done(), 0.0)
    step = prof.steps.index[-1]
    w = prof.what_if({"all-reduce-start*": 0.5}).set_index("step").loc[step]
    assert w.measured_ms * 1e3 == pytest.approx(21.0)
    assert w.predicted_ms * 1e3 == pytest.approx(13.25, abs=1e-3)
