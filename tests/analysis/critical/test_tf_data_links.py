"""The critical path and what-if through tf.data: a consumer's ``Iterator::`` wait explained by
the producer's chain down to the map's function on tf.data's threads (synthetic XSpaces with a
known path; a real input-bound TensorFlow capture)."""

from __future__ import annotations

import pytest

import tfprof_nb as tp
from tests.analysis.critical.test_path import HOST, _run
from tests.conftest import xplane_files

MAIN = [("train", 0, 50, {"group_id": 1, "step_name": "train 1"}),
        ("Iterator::Root::Prefetch", 2, 30, {"id": 100, "group_id": 1}),
        ("PrefetchConsume", 31, 0.5, {"element_id": 7}),
        ("MatMul", 33, 16, {"group_id": 1})]
PRODUCER = [("PrefetchProduce", 1, 29.5, {"element_id": 7}),
            ("Iterator::Root::Prefetch::Map", 1.2, 29.1, {"parent_id": 100}),
            ("InstantiatedCapturedFunction::Run", 2, 28, {"id": 555}),
            ("ThreadpoolListener::Record", 2.5, 0, {"_pt": 15, "_p": 1})]
WORKER = [("ThreadpoolListener::StartRegion", 5, 0, {"_ct": 15, "_c": 1}),
          ("ExecutorState::Process", 6, 23.5, {"id": 555}),
          ("EagerPyFunc:EagerPyFunc", 7, 20, {}),
          ("ThreadpoolListener::Record", 28, 0, {"_pt": 15, "_p": 2})]
DONE = [("ThreadpoolListener::StartRegion", 28.2, 0, {"_ct": 15, "_c": 2}),
        ("ExecutorDoneCallback", 28.3, 0.7, {"id": 555})]
PLANES = {HOST: {"python": MAIN, "tf_data_iterator_resource": PRODUCER,
                 "tf_data_private_threadpool/1": WORKER, "tf_data_private_threadpool/2": DONE}}


def test_a_prefetch_wait_goes_through_the_map_function_on_tf_datas_threads(tmp_path):
    """The step waits in ``Iterator::Root::Prefetch`` for element 7; its producer's captured
    function (step id 555) runs on a thread pool woken by the run's ``Record``: the path is
    that chain, every part of it ``input``."""
    _, path = _run(tmp_path, PLANES, 0.0)
    assert path == [
        (0.0, 1.0, "idle", "idle", "idle"),
        (1.0, 0.2, "input", "event", "PrefetchProduce"),
        (1.2, 0.8, "input", "event", "Iterator::Root::Prefetch::Map"),
        (2.0, 0.5, "input", "event", "InstantiatedCapturedFunction::Run"),
        (2.5, 3.5, "idle", "wait", "ExecutorState::Process"),  # (queued on the pool)
        (6.0, 1.0, "input", "event", "ExecutorState::Process"),
        (7.0, 20.0, "input", "event", "EagerPyFunc:EagerPyFunc"),
        (27.0, 1.0, "input", "event", "ExecutorState::Process"),
        (28.0, 1.5, "input", "event", "ExecutorState::Process"),
        (29.5, 0.5, "input", "wait", "InstantiatedCapturedFunction::Run"),
        (30.0, 0.3, "input", "event", "Iterator::Root::Prefetch::Map"),
        (30.3, 0.2, "input", "event", "PrefetchProduce"),
        (30.5, 0.5, "input", "wait", "PrefetchConsume"),
        (31.0, 0.5, "input", "event", "PrefetchConsume"),  # (inside the Iterator:: event)
        (31.5, 0.5, "input", "event", "Iterator::Root::Prefetch"),
        (32.0, 1.0, "host_compute", "event", "train"),
        (33.0, 16.0, "host_compute", "event", "MatMul"),
        (49.0, 1.0, "host_compute", "event", "train")]


def test_a_faster_map_function_shortens_the_step_by_what_it_saves(tmp_path):
    """Halving the map function (20 us) moves the whole chain, and the step, 10 us earlier;
    the consumer's own work does not move it."""
    prof, _ = _run(tmp_path, PLANES, 0.0)
    step = prof.steps.index[-1]
    half = prof.what_if({"EagerPyFunc*": 0.5}).loc[lambda w: w.step == step].iloc[0]
    assert half.measured_ms * 1e3 == pytest.approx(50.0)
    assert half.predicted_ms * 1e3 == pytest.approx(40.0, abs=1e-3)
    by_input = prof.what_if({"input": 0.5}).loc[lambda w: w.step == step].iloc[0]
    assert by_input.predicted_ms < half.predicted_ms  # (the producer's own time too)


def test_input_bound_tf_capture_is_bound_by_input(cpu_slowmap_logdir):
    """A real input-bound capture (a heavy sequential map, no prefetch): most of each step's
    path is the map's work, as the step breakdown says of the steps."""
    prof = tp.load(xplane_files(cpu_slowmap_logdir)[0])
    cp, steps = prof.critical_path, prof.steps
    share = cp[cp.category == "input"].duration_us.sum() / cp.duration_us.sum()
    measured = steps.input_ms.sum() / steps.duration_ms.sum()
    assert measured > 0.5 and share > 0.5
    on_workers = cp[(cp.category == "input") & ~cp.resource.str.endswith("/ python")]
    assert on_workers.duration_us.sum() > 0.25 * cp.duration_us.sum()
    assert "ExecutorState::Process" in set(on_workers.name)  # (the map function's executor)


RUNNER = [("MapAndBatchProduce", 1, 1, {}),
          ("InstantiatedCapturedFunction::RunAsync", 2, 1, {"id": 555}),
          ("ThreadpoolListener::Record", 2.5, 0, {"_pt": 15, "_p": 1}),
          ("MapAndBatchProduce", 31, 1, {"element_id": 7})]
ASYNC_PLANES = {HOST: {
    "python": [("train", 0, 60, {"group_id": 1, "step_name": "train 1"}),
               ("Iterator::Root::MapAndBatch", 2, 40, {"id": 100, "group_id": 1}),
               ("MapAndBatchConsume", 41, 0.5, {"element_id": 7}),
               ("MatMul", 45, 14, {"group_id": 1})],
    "tf_data_iterator_resource": RUNNER,
    "tf_data_private_threadpool/1": [("ThreadpoolListener::StartRegion", 3.5, 0,
                                      {"_ct": 15, "_c": 1}),
                                     ("ExecutorState::Process", 4, 24, {"id": 555}),
                                     ("EagerPyFunc:EagerPyFunc", 5, 20, {}),
                                     ("ThreadpoolListener::Record", 27.5, 0,
                                      {"_pt": 15, "_p": 2})],
    "tf_data_private_threadpool/2": [("ThreadpoolListener::StartRegion", 28.5, 0,
                                      {"_ct": 15, "_c": 2}),
                                     ("ExecutorDoneCallback", 29, 3, {"id": 555})]}}


def test_a_runner_thread_waits_for_its_async_map_function(tmp_path):
    """A map's function run with RunAsync returns at once; its runner thread sleeps until the
    function's done callback (on the pool) wakes it to finish the element.  The path goes
    through that work (input), not through a 28 us gap with no traced event on the runner."""
    _, path = _run(tmp_path, ASYNC_PLANES, 0.0)
    assert path == [
        (0.0, 1.0, "idle", "idle", "idle"),
        (1.0, 1.0, "host_compute", "event", "MapAndBatchProduce"),
        (2.0, 0.5, "input", "event", "InstantiatedCapturedFunction::RunAsync"),
        (2.5, 1.5, "idle", "wait", "ExecutorState::Process"),  # (queued on the pool)
        (4.0, 1.0, "input", "event", "ExecutorState::Process"),
        (5.0, 20.0, "input", "event", "EagerPyFunc:EagerPyFunc"),
        (25.0, 2.5, "input", "event", "ExecutorState::Process"),
        (27.5, 1.5, "idle", "wait", "ExecutorDoneCallback"),
        (29.0, 2.0, "input", "event", "ExecutorDoneCallback"),  # (it wakes the runner)
        (31.0, 1.0, "input", "event", "MapAndBatchProduce"),
        (32.0, 9.0, "input", "wait", "MapAndBatchConsume"),
        (41.0, 0.5, "input", "event", "MapAndBatchConsume"),
        (41.5, 0.5, "input", "event", "Iterator::Root::MapAndBatch"),
        (42.0, 3.0, "host_compute", "event", "train"),
        (45.0, 14.0, "host_compute", "event", "MatMul"),
        (59.0, 1.0, "host_compute", "event", "train")]


def test_keras_over_a_plain_map_is_bound_by_the_maps_work():
    """Keras 3's fit over a plain ``.map()`` that tf.data runs with RunAsync (tests/data/
    keras3_steps_per_execution): the step breakdown puts 90% of the steps in input; the path
    goes through the map's work on tf.data's pool (it read 81% gaps with no traced event
    before the runner thread's wake-ups)."""
    from ...conftest import DATA

    prof = tp.load(DATA / "keras3_steps_per_execution.xplane.pb")
    cp, steps = prof.critical_path, prof.steps
    share = cp.groupby("category").duration_us.sum() / cp.duration_us.sum()
    assert steps.input_ms.sum() / steps.duration_ms.sum() > 0.85
    assert share["input"] > 0.8 and share["idle"] < 0.15
    on_pool = cp[(cp.category == "input") & cp.resource.str.contains("tf_data_private_thread")]
    assert on_pool.duration_us.sum() > 0.5 * cp.duration_us.sum()
