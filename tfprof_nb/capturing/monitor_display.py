"""How a monitor shows itself: its view (``widgets.monitor_view``, updated in place from the
analysis thread as windows arrive, its chart built in the worker process: ``monitor_chart``),
its chart as a plotly Figure, its status in words."""

from __future__ import annotations

from .._words import counted
from .monitor_chart import ChartFeed
from .monitor_worker import AnalysisFailed, WorkerUnavailable, ask_chart

__all__ = ["Display"]


class Display:
    """The showing methods of :class:`~.monitor.Monitor` (a mixin over its ``_log``,
    ``_timer``, ``_driver``, ``_schedule``, ``counts`` and ``logdir``)."""

    _chart_feed: ChartFeed | None = None

    @property
    def _chart(self) -> ChartFeed:
        """What the worker has of this monitor's steps (made on first use)."""
        if self._chart_feed is None:
            self._chart_feed = ChartFeed()
        return self._chart_feed

    def show(self):
        """The monitor's view (a widget), updated in place as windows arrive: step time per
        window with regressions flagged, the breakdown per window, and the windows' table
        (a click shows a window's dashboard below)."""
        from ..widgets.monitor_view import MonitorView

        view = MonitorView(opener=self.window, **self._view_state())
        self._views.append(view)
        return view

    def figure(self, theme: str = "light"):
        """The view's chart as a plotly Figure: median step time per window (regressions
        flagged, the baseline and the threshold drawn) over the breakdown per window."""
        from ..plot.monitor_figures import monitor_figure

        state = self._view_state()
        return monitor_figure(state["history"], state["baseline_ms"], state["threshold_ms"],
                              theme, state["steps"], state["period"])

    def _repr_mimebundle_(self, include=None, exclude=None):
        from .._display import view_bundle

        return view_bundle(self.show, self.__repr__, include, exclude)

    def _ipython_display_(self):
        from .._display import display_view

        display_view(self.show, self.__repr__)

    def __repr__(self) -> str:
        return f"<tfprof_nb Monitor: {self._status()}>"

    def _status(self, period=None) -> str:
        """Where the run is, in words (``period``: the step timer's spike period)."""
        counts = self.counts
        total = sum(counts.values())
        said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        windows = f"{counted(total, 'window')} ({said})" if total else "no window yet"
        spikes = f"; {period.describe()}" if period is not None else ""
        return (f"{windows} after {counted(self._driver.step, 'step')}{spikes}; "
                f"{self._schedule.describe()}; files under {self.logdir}")

    def _view_state(self) -> dict:
        steps, period = self._timer.frame(self._driver.t0)
        return self._state(self._log.frame(), self._log.baseline(), period,
                           steps=steps if self._timer.enabled else None)

    def _state(self, history, base, period, **chart) -> dict:
        """The views' state from the history, the baseline and the spike period; ``chart``:
        the step rows (``steps``) or the worker's figure (``figure``)."""
        return {"history": history, "status": self._status(period), **chart,
                "period": "" if period is None else period.describe(),
                "rule": self._log.rule.describe(base),
                "baseline_ms": None if base is None else base.median_ms,
                "threshold_ms": None if base is None else base.threshold_ms}

    def _refresh(self) -> None:
        """Bring every view up to date (on the analysis thread), the chart built in the
        worker process (``monitor_chart``), here where none answers."""
        views = list(self._views)
        if views:
            try:
                state = self._chart_state()
            except (WorkerUnavailable, AnalysisFailed):  # (a chart error is raised here)
                state = self._view_state()
            for view in views:
                view.update(**state)

    def _chart_state(self) -> dict:
        """The views' state with the chart built by the worker (its JSON as ``figure``)."""
        base = self._log.baseline()
        history = self._log.frame()
        figure, period = self._chart.figure(
            ask_chart, self._timer, self._driver.t0, history,
            None if base is None else base.median_ms, None if base is None else base.threshold_ms)
        return self._state(history, base, period, figure=figure)
