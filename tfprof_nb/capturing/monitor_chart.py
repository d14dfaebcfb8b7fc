"""A monitor view's chart built in the analysis worker process (``monitor_worker``), so that a
refresh costs the training process the same whatever the number of steps.

Built in the training process, each refresh made the step timer's rows of the whole run
(spikes, their period) and the figure from them, holding the GIL: 28 ms at 3,000 steps,
over 200 ms at 100,000, twice a window.  Here the training process sends the worker only
the step timer's raw columns it has not sent yet (:class:`ChartFeed`; with the last
``TAIL`` rows again: a step's end moves when its output's readiness comes after it was
sent), and the worker, which keeps each monitor's columns (:func:`chart_answer`), makes the
rows (``monitor_steps.steps_frame``), the period and the figure (``monitor_figure``), and
sends back the figure's JSON and the period.  The history, small, goes whole each time.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict

import numpy as np

__all__ = ["TAIL", "ChartFeed", "chart_answer"]

TAIL = 256  # rows sent again with each refresh (their end may have moved since)
_KEPT = 4  # the worker keeps the columns of this many monitors (the last ones asked)
_charts: OrderedDict = OrderedDict()  # in the worker: {monitor's key: its columns}


class ChartFeed:
    """The training process's side: one per monitor (see the module's docstring).
    ``rows_sent``: the step rows the last refresh sent (its share of the work)."""

    def __init__(self):
        self.key = uuid.uuid4().hex
        self.sent = 0  # step rows the worker has
        self.rows_sent = 0

    def figure(self, ask, timer, t0, history, baseline_ms, threshold_ms
               ) -> tuple[dict, object]:
        """``(figure JSON, spike period or None)`` of the monitor's chart, built by the
        worker: ``ask(request)`` (``monitor_worker.ask_chart``) gives its answer, or raises
        where it cannot."""
        since = max(0, self.sent - TAIL)
        for _ in range(2):  # (a worker started again has nothing: everything once more)
            columns = timer.columns(since=since) if timer.enabled else None
            answer = ask({"key": self.key, "since": since, "columns": columns, "t0": t0,
                          "history": history, "baseline_ms": baseline_ms,
                          "threshold_ms": threshold_ms})
            self.rows_sent = 0 if columns is None else len(columns["start"])
            if answer is not None:
                self.sent = since + self.rows_sent
                return answer
            since = 0
        raise RuntimeError("the analysis process lost the steps it was sent twice")


def chart_answer(request: dict):
    """In the worker: the request's columns added to the monitor's (from row ``since``),
    then ``(figure JSON, period)``; None when the worker lacks the rows before ``since``."""
    from ..plot.monitor_figures import monitor_figure
    from ..widgets.traits import figure_json
    from .monitor_steps import steps_frame

    key, since, new = request["key"], request["since"], request["columns"]
    steps = period = None
    if new is not None:
        have = _charts.pop(key, None)
        if since and (have is None or len(have["start"]) < since):
            return None
        columns = new if not since else {c: np.concatenate([v[:since], new[c]])
                                         for c, v in have.items()}
        _charts[key] = columns
        while len(_charts) > _KEPT:
            _charts.popitem(last=False)
        steps, period = steps_frame(columns, request["t0"])
    fig = monitor_figure(request["history"], request["baseline_ms"], request["threshold_ms"],
                         steps=steps, period="" if period is None else period.describe())
    return figure_json(fig), period
