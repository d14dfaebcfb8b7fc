"""The view of a monitored run (``tp.Monitor.show()``), updated in place as windows arrive.

The monitor hands the view its history (``update``, called from the monitor's analysis
thread; the traits change together under one lock) and a function giving a window's
Profile (``opener``); the view knows nothing else of the monitor.  A click on a window (its
point, its bars or its row) asks the kernel for that window's dashboard, which the view
shows inside itself, under its table (``dashboard`` names the dashboard widget's model; the
view's own DOM holds it, so a saved notebook has no other widget output that a reopened
notebook would show as "model not found"); the kernel answers once it is free (not while a
training cell runs).

Its offline copy (the loader output every view writes, rendered where no kernel holds the
widget: a notebook reopened, an export) is rewritten as windows arrive: displayed with a
display id, updated at most every few seconds (from a timer thread) and at the end of each
cell when windows came since, so a notebook saved after the run keeps the windows it showed.
"""

from __future__ import annotations

import threading
import time

import pandas as pd
import traitlets

from .. import offline
from ._base import BaseWidget
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["MonitorView"]

# the history's columns the view's table shows, in this order (when present)
_TABLE = ["window", "status", "first_step", "last_step", "steps", "median_step_ms",
          "vs_baseline_pct", "regressed", "input_pct", "duty_cycle_pct",
          "memory_peak_bytes", "top_op", "top_op_pct", "time_s", "wall_s", "note", "error"]


_COPY_EVERY_S = 5.0  # the offline copy is rewritten at most this often while windows arrive
_LOADER = {"tfprof_nb": "offline-loader"}  # the loader output's metadata (as every view's)


def _table(history: pd.DataFrame) -> TableData:
    frame = history[[c for c in _TABLE if c in history.columns]].copy()
    if "regressed" in frame:
        frame["regressed"] = frame["regressed"].map({True: "yes", False: ""}).astype(str)
    return TableData(frame, "Windows (click one for its dashboard; steps and step-time "
                     "figures: its marked steps; top op: its whole profile)", "top_op", 500)


class MonitorView(BaseWidget):
    """A monitored run: ``status`` (where it is), ``rule`` (when a window is flagged),
    ``figure`` (every step's time when the step timer's ``steps`` are given, step time per
    window, the breakdown per window), ``windows`` (the
    history's table), ``shown`` (the window whose dashboard is shown below, -1: none) and
    ``dashboard`` (the model id of that dashboard's widget, drawn inside the view; "" none)."""

    bundle = "monitor"
    status = traitlets.Unicode("").tag(sync=True)
    rule = traitlets.Unicode("").tag(sync=True)
    figure = FigureTrait()
    windows = TableTrait()
    shown = traitlets.Int(-1).tag(sync=True)
    dashboard = traitlets.Unicode("").tag(sync=True)

    def __init__(self, history: pd.DataFrame | None = None, status: str = "", rule: str = "",
                 baseline_ms: float | None = None, threshold_ms: float | None = None,
                 opener=None, steps: pd.DataFrame | None = None, period: str = "",
                 **kwargs):
        self._lock = threading.Lock()
        self._opener = opener
        self._board = None  # the shown window's dashboard widget (closed when replaced)
        self._copies: list = []  # display handles of the offline copies (one per display)
        self._copy = {"at": 0.0, "stale": False, "timer": None}
        super().__init__(**self._values(history, status, rule, baseline_ms, threshold_ms,
                                        steps, period), **kwargs)
        self.on_msg(self._on_message)

    @staticmethod
    def _values(history, status, rule, baseline_ms, threshold_ms, steps=None,
                period="", figure=None) -> dict:
        from ..plot.monitor_figures import monitor_figure

        history = history if history is not None else pd.DataFrame(
            columns=["window", "status", "median_step_ms"])
        if figure is None:
            figure = monitor_figure(history, baseline_ms, threshold_ms, steps=steps,
                                    period=period)
        return {"status": status, "rule": rule, "windows": _table(history), "figure": figure}

    def update(self, history: pd.DataFrame, status: str = "", rule: str = "",
               baseline_ms: float | None = None, threshold_ms: float | None = None,
               steps: pd.DataFrame | None = None, period: str = "",
               figure: dict | None = None) -> None:
        """Show ``history`` and the step timer's ``steps`` (safe from any thread: the figure
        is built first, then the traits change together); ``figure``: the chart already
        built from them (its JSON: the monitor builds it in its worker process)."""
        def apply():
            values = self._values(history, status, rule, baseline_ms, threshold_ms, steps,
                                  period, figure)
            with self._lock, self.hold_sync():
                for name, value in values.items():
                    setattr(self, name, value)
        self._safely(apply)
        self._copy_soon()

    # ---- the offline copy ---------------------------------------------------------------
    def _loader(self) -> dict:
        with self._lock:  # not while update() sets the traits
            return {"text/html": self._offline(offline.loader_output)}

    def _rewrite_copies(self) -> None:
        """Rewrite every displayed offline copy with the view's current state."""
        with self._lock:
            handles = list(self._copies)
            self._copy.update(at=time.monotonic(), stale=False, timer=None)
        if handles:
            data = self._loader()
            for handle in handles:
                handle.update(data, metadata=_LOADER, raw=True)

    def _copy_soon(self) -> None:
        """Rewrite the offline copies once ``_COPY_EVERY_S`` passed since the last time."""
        with self._lock:
            if not self._copies or self._copy["timer"] is not None:
                self._copy["stale"] = bool(self._copies)
                return
            self._copy["stale"] = True
            wait = max(0.0, self._copy["at"] + _COPY_EVERY_S - time.monotonic())
            timer = threading.Timer(wait, self._safely, (self._rewrite_copies,))
            timer.daemon = True
            self._copy["timer"] = timer
        timer.start()

    def _after_cell(self, *_) -> None:
        """At a cell's end (its outputs still being collected): the copies, if windows came."""
        if self._copy["stale"]:
            self._safely(self._rewrite_copies)

    def _keep_copies(self, handle) -> None:
        """Rewrite the copy ``handle`` shows as windows arrive (in IPython only)."""
        from IPython import get_ipython

        shell = get_ipython()
        if handle is None or shell is None:
            return
        with self._lock:
            self._copies.append(handle)
            first = len(self._copies) == 1
        if first:
            shell.events.register("post_execute", self._after_cell)

    # ---- a window's dashboard -------------------------------------------------------------
    def _answer(self, content, buffers):
        if not isinstance(content, dict) or content.get("kind") != "open":
            return None
        window = int(content.get("window", -1))
        try:
            self.open_window(window)
        except Exception as exc:  # the view says why, in its place
            return {"kind": "opened", "window": window,
                    "error": f"{type(exc).__name__}: {exc}"}, []
        return {"kind": "opened", "window": window}, []

    def open_window(self, window: int) -> None:
        """Show window ``window``'s dashboard inside the view, under its table (the
        dashboard shown before is closed)."""
        if self._opener is None:
            raise RuntimeError("this view has no monitor to ask for a window's profile")
        board = self._opener(window).show()
        with self._lock, self.hold_sync():
            old, self._board = self._board, board
            self.shown = window
            self.dashboard = board.model_id
        if old is not None:
            old.close()

    def close(self) -> None:
        """Close the view and the dashboard it shows."""
        board, self._board = getattr(self, "_board", None), None
        if board is not None:
            board.close()
        super().close()

    def _offline_state(self) -> dict:
        """The state an offline copy needs: no dashboard (its widget lives in the kernel)."""
        return {**super()._offline_state(), "dashboard": ""}

    def _ipython_display_(self):
        """The view, then its offline copy (as every view's, with a display id: rewritten
        as windows arrive)."""
        from IPython.display import display

        data, meta = self._bundle(offline.placeholder_html(self))
        display(data, metadata=meta, raw=True)
        self._keep_copies(display(self._loader(), metadata=_LOADER, raw=True,
                                  display_id=True))
