"""A monitor view's refresh (``monitor_chart``): the chart built in the worker process from the
step timer's rows sent in chunks, so that the training process's share of a refresh does not
grow with the number of steps; a real monitor, view and worker process."""

from __future__ import annotations

import itertools

import pytest

import tfprof_nb as tp
from tfprof_nb.capturing import monitor_steps, monitor_worker
from tfprof_nb.capturing.monitor_chart import TAIL
from tfprof_nb.widgets.traits import figure_json


def _run(it, steps: int) -> None:
    for n, _ in enumerate(it):
        if n + 1 >= steps:
            return


@pytest.fixture()
def frames_here(monkeypatch):
    """How many times this process made the step timer's rows (the O(steps) work)."""
    calls = []
    real = monitor_steps.StepTimer.frame

    def frame(self, *args, **kwargs):
        calls.append(len(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(monitor_steps.StepTimer, "frame", frame)
    return calls


def test_refresh_sends_only_the_new_steps_and_draws_them_all(frames_here):
    """Refreshed after 100 more steps, at 2,100 steps or at 10,100, the view's refresh sends
    the worker the same number of rows (the 100 and the tail sent again), makes no rows of
    the whole run in this process, and shows the chart built here from every step."""
    mon = tp.Monitor(every_steps=10**9, warmup=10**9, backend="jax")  # no window: steps only
    view = mon.show()
    frames_here.clear()
    it = mon.iterate(itertools.count())
    sent = []
    for total in (2_000, 10_000):
        _run(it, total - mon._driver.step)
        mon._refresh()  # everything not sent yet
        _run(it, 100)
        mon._refresh()
        sent.append(mon._chart.rows_sent)
    assert sent == [100 + TAIL, 100 + TAIL]
    assert frames_here == []  # the rows of the run were made in the worker only
    assert monitor_worker._WORKER.proc is not None
    assert view.figure == figure_json(mon.figure())  # (mon.figure() builds it here)
    it.close()


def test_a_worker_started_again_is_sent_every_step(frames_here):
    """A worker that died loses the steps it had: the new one is sent every step, and the
    chart still has them all."""
    mon = tp.Monitor(every_steps=10**9, warmup=10**9, backend="jax")
    view = mon.show()
    it = mon.iterate(itertools.count())
    _run(it, 1_000)
    mon._refresh()
    proc = monitor_worker._WORKER.proc
    proc.kill()
    proc.wait()
    _run(it, 100)
    frames_here.clear()
    mon._refresh()
    assert monitor_worker._WORKER.proc is not proc and frames_here == []
    assert mon._chart.rows_sent == len(mon._timer) == mon._driver.step > 1_000
    assert view.figure == figure_json(mon.figure())
    it.close()
