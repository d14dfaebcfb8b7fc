"""The training thread's side of a monitor: it counts steps, opens a window's profiler session
when the schedule says, marks each of the window's steps (``step_name``, ``step_num`` = the
run's step number, ``_r=1``), stops the session after N steps, or when training ends or
raises inside the window, and hands the saved window to the analysis thread.

A window's own error never reaches the training loop: a profiler that will not start (another
session is running), a step marker or a save that fails, each fails that window's row and
training goes on.  The work per step outside a window is a few comparisons.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .monitor_log import WindowLog
from .monitor_schedule import Schedule

__all__ = ["WindowDriver"]


@dataclass
class _Open:
    """The window being profiled."""

    index: int
    first_step: int
    session: object  # a LocalSession, started
    started: float  # perf_counter at its first step
    steps: int = 0


class WindowDriver:
    """Steps and windows (see the module's docstring).  ``make_session(index)`` gives window
    ``index``'s LocalSession (not started); ``analyse(index, run_dir)`` queues a saved
    window's analysis; ``changed()`` says a row changed without an analysis to follow."""

    def __init__(self, schedule: Schedule, log: WindowLog, busy, make_session, analyse,
                 changed, step_name: str = "train"):
        self.schedule, self.log = schedule, log
        self._busy, self._make_session = busy, make_session
        self._analyse, self._changed = analyse, changed
        self.step_name = step_name
        self.step = 0  # steps begun and ended so far, over the whole run
        self._t0: float | None = None
        self._window: _Open | None = None
        self._marker = None

    @property
    def profiling(self) -> bool:
        """Whether a window is open."""
        return self._window is not None

    def begin_step(self) -> None:
        """A training step begins: open a window when one is due, mark the step in one."""
        now = time.perf_counter()
        if self._t0 is None:
            self._t0 = now
        if self._window is None and self.schedule.due(self.step, now, self._busy()):
            self._open(now)
        if self._window is not None and self._marker is None:
            self._mark()

    def end_step(self) -> None:
        """The step ended: count it, and close its window after its last step."""
        marked = self._unmark()
        self.step += 1
        window = self._window
        if window is None or not marked:
            return
        window.steps += 1
        if window.steps >= self.schedule.steps:
            self._close("")

    def abandon_step(self) -> None:
        """The step did not run (no more data): drop its marker."""
        self._unmark()

    def close(self, note: str) -> None:
        """Training left the loop (``note`` says how): an open window stops with the steps
        that ran (its row says why there are fewer, when there are)."""
        self._unmark()
        if self._window is not None:
            self._close(note)

    # ---- windows ------------------------------------------------------------------------
    def _open(self, now: float) -> None:
        index = self.log.open(self.step, now - self._t0)
        self.schedule.opened(self.step, now)
        session = self._make_session(index)
        try:
            session.start()
        except Exception as err:  # e.g. another profiler session runs: this window fails
            self.log.fail(index, err)
            self._changed()
            return
        self._window = _Open(index, self.step, session, now)

    def _mark(self) -> None:
        try:
            marker = self._window.session.step_marker(self.step_name, self.step)
            marker.__enter__()
        except Exception as err:
            self._stop_failed(err)
            return
        self._marker = marker

    def _unmark(self) -> bool:
        """Close the step's marker; whether there was one."""
        marker, self._marker = self._marker, None
        if marker is None:
            return False
        try:
            marker.__exit__(None, None, None)
        except Exception as err:
            self._stop_failed(err)
            return False
        return True

    def _close(self, note: str) -> None:
        window, self._window = self._window, None
        wanted = self.schedule.steps
        values = {"steps": window.steps, "last_step": window.first_step + window.steps - 1,
                  "wall_s": time.perf_counter() - window.started,
                  "backend": window.session.backend or ""}
        if window.steps < wanted and note:
            values["note"] = f"{window.steps} of {wanted} steps: {note}"
        self.log.update(window.index, **values)
        try:
            run_dir = window.session.stop()
        except Exception as err:  # the profiler could not save: this window fails
            self.log.fail(window.index, err)
            self._changed()
            return
        self.log.update(window.index, status="pending", run=str(run_dir))
        self._analyse(window.index, run_dir)

    def _stop_failed(self, err: Exception) -> None:
        """A step marker failed: stop the window's session, fail its row."""
        window, self._window = self._window, None
        if window is None:
            return
        try:
            window.session.stop()
        except Exception:  # the marker's error is the one the row keeps
            pass
        self.log.fail(window.index, err)
        self._changed()
