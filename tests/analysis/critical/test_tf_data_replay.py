"""What-if replays through TensorFlow's executor and tf.data's buffer: an op the executor hands
to another thread moves with the step that asked for it, and a prefetch producer held back by
a full buffer moves with the consumer that freed a slot (synthetic XSpaces with known answers;
the demo's Keras capture)."""

from __future__ import annotations

import pytest

from tests.analysis.critical.test_path import HOST, _run

RUN = 900  # the tf.function run's step id, carried by its executor's events

DISPATCH = {HOST: {
    "python": [("train", 0, 50, {"group_id": 1, "step_name": "train 1"}),
               ("FunctionRun", 1, 48, {"id": RUN, "group_id": 1})],
    "tf_Compute/1": [("ExecutorState::Process", 2, 20, {"id": RUN}),
                     ("Conv:Conv2D", 3, 18, {"group_id": 1}),
                     ("ThreadpoolListener::StartRegion", 24, 0, {"_ct": 15, "_c": 3}),
                     ("ExecutorState::Process", 25, 23, {"id": RUN}),
                     ("Dense:MatMul", 26, 21, {"group_id": 1})],
    "tf_data_iterator_get_next/1": [("IteratorGetNextOp::DoCompute", 0.2, 0.3, {"id": 7}),
                                    ("IteratorGetNextOp::DoCompute", 22.5, 1, {"id": RUN}),
                                    ("ThreadpoolListener::Record", 23.6, 0,
                                     {"_pt": 15, "_p": 3})]}}


def test_an_op_handed_to_another_thread_moves_with_the_step_that_asked_for_it(tmp_path):
    """The get-next op (the run's step id) starts 0.5 us after the executor event that
    scheduled it ends, and wakes the executor's next event: halving the convolution (18 us)
    moves the op, the wake-up and the step's end 9 us earlier.  Kept at its measured time
    (the thread's previous event, 22 us before), the step would not move at all."""
    prof, path = _run(tmp_path, DISPATCH, 0.0)
    step = prof.steps.index[-1]
    assert "IteratorGetNextOp::DoCompute" in [p[4] for p in path]  # (on the measured path)
    w = prof.what_if({"Conv:Conv2D": 0.5}).loc[lambda t: t.step == step].iloc[0]
    assert w.measured_ms * 1e3 == pytest.approx(50.0)
    assert w.predicted_ms * 1e3 == pytest.approx(41.0, abs=1e-3)


PRODUCER = {HOST: {
    "python": [("train", 0, 40, {"group_id": 1, "step_name": "train 1"}),
               ("pre_work", 1, 6, {"group_id": 1}),
               ("Iterator::Root::Prefetch", 8, 3, {"id": 100}),
               ("PrefetchConsume", 9.5, 1, {"element_id": 1}),
               ("host_work", 11.5, 18, {}),
               ("Iterator::Root::Prefetch", 30, 3, {"id": 100}),
               ("PrefetchConsume", 31.5, 1, {"element_id": 2}),
               ("tail", 34, 5, {})],
    "tf_data_iterator_resource/1": [("PrefetchProduce", 0.5, 4, {"element_id": 1}),
                                    ("PrefetchProduce", 10.6, 4, {"element_id": 2})]}}


def test_a_full_buffers_producer_waits_for_the_consumer_that_freed_a_slot(tmp_path):
    """The producer made element 2 0.1 us after the consumer of element 1 ended (its buffer
    was full).  With the work before that consumer halved (3 us earlier) and the host work
    after it cut to a tenth, element 2 is asked for at 12.3 us; the producer, moved with the
    consumer that freed its slot, has it ready at 11.6 us: the step ends at 20.8 us.  Kept at
    its measured time (ready at 14.6 us) the step would end 2.3 us later."""
    prof, _ = _run(tmp_path, PRODUCER, 0.0)
    step = prof.steps.index[-1]
    assert prof.what_if({}).loc[lambda t: t.step == step].predicted_ms.iloc[0] * 1e3 == \
        pytest.approx(40.0)
    w = prof.what_if({"pre_work": 0.5, "host_work": 0.1}).loc[lambda t: t.step == step].iloc[0]
    assert w.predicted_ms * 1e3 == pytest.approx(20.8, abs=1e-3)


ASYNC_RUN = {HOST: {
    "python": [("train", 0, 30, {"group_id": 1, "step_name": "train 1"}),
               ("KernelAndDeviceFunc::Run", 1, 27, {"group_id": 1}),
               ("FunctionRun", 2, 2, {"id": 901, "group_id": 1})],
    "tf_Compute/1": [("ExecutorState::Process", 2.5, 0.7, {"id": 901})],
    "tf_Compute/2": [("ExecutorState::Process", 3, 23, {"id": 901}),
                     ("Dense:MatMul", 4, 21, {"group_id": 1})]}}


def test_the_call_that_outlives_an_asynchronous_run_waits_for_the_functions_last_op(tmp_path):
    """``FunctionRun`` returns after 2 us (one op of its function ended inside it); the
    enclosing ``KernelAndDeviceFunc::Run`` waits until the function's last op ends (26 us):
    halving the 21 us MatMul ends it, and the step, 10.5 us earlier.  Counted as the call's
    own work, the wait would not move."""
    prof, _ = _run(tmp_path, ASYNC_RUN, 0.0)
    step = prof.steps.index[-1]
    w = prof.what_if({"Dense:MatMul": 0.5}).loc[lambda t: t.step == step].iloc[0]
    assert w.measured_ms * 1e3 == pytest.approx(30.0)
    assert w.predicted_ms * 1e3 == pytest.approx(19.5, abs=1e-3)
