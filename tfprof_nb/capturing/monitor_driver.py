"""The training thread's side of a monitor: it counts steps, opens a window's profiler session
when the schedule says, marks each of the window's steps (``step_name``, ``step_num`` = the
run's step number, ``_r=1``), closes the window after N steps, or when training ends or
raises inside the window (``monitor_ending``: its session is then saved off the training
thread, ``monitor_saving``), and hands the saved window to the analysis thread.

The session starts one step before the window's first marked step (that step runs traced but
unmarked), so every marked step runs with the profiler already started: a profiler's start-up
cost never lands in a measured step.  A step that never ran (the data ran out: ``abandon_step``)
leaves no marker in the profile (its marker is left open and ended after the session stopped,
when the profiler records nothing) and is not counted; a window that ends without one marked
step leaves no row.

Windows open on schedule whatever the analysis thread is doing: a saved window's analysis
queues behind the ones before it; a window due while ``max_pending`` saved windows wait for
(or are in) their analysis is dropped instead, with a row that says so and why.

A window's own error never reaches the training loop: a profiler that will not start (another
session is running: a monitor never stops another tfprof_nb session), a step marker or a save
that fails, each fails that window's row and training goes on; after ``FAILURE_STREAK``
windows in a row failed with the same error the monitor stops scheduling windows.  The work
per step outside a window is a few comparisons and the step timer's appends
(``monitor_steps``: each step's start and end, whether it was in a window, whether a session
started or stopped in it).  The driver's state is behind a lock: a
window may be closed from another thread (a notebook cell's end) while training runs.
"""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext

from .monitor_budget import Budget
from .monitor_ending import FAILURE_STREAK, OpenWindow, WindowEnding
from .monitor_log import WindowLog
from .monitor_saving import WindowSaver
from .monitor_schedule import Schedule
from .monitor_steps import StepTimer

__all__ = ["FAILURE_STREAK", "WindowDriver"]


class WindowDriver(WindowEnding):
    """Steps and windows (see the module's docstring).  ``make_session(index)`` gives window
    ``index``'s LocalSession (not started); ``analyse(index, run_dir)`` queues a saved
    window's analysis; ``changed()`` says a row changed without an analysis to follow."""

    def __init__(self, schedule: Schedule, log: WindowLog, make_session, analyse,
                 changed, step_name: str = "train", max_pending: int = 2,
                 timer: StepTimer | None = None):
        self.schedule, self.log = schedule, log
        self.max_pending = max_pending
        self.timer = timer if timer is not None else StepTimer(enabled=False)
        self.budget = Budget(schedule.overhead_pct)  # (none without the step timer)
        self.saver = WindowSaver()  # a closed window's session stops and saves on it
        self._profiled = False  # a session started or stopped in this step
        self._dropped = None  # (row, schedule's state before) of a window dropped this step
        self._make_session = make_session
        self._analyse, self._changed = analyse, changed
        self.step_name = step_name
        self.step = 0  # steps begun and ended so far, over the whole run
        self._t0: float | None = None
        self._window: OpenWindow | None = None
        self._marker = None
        self._orphans: list = []  # markers of steps that never ran, ended after the stop
        self._last = 1  # steps the last marked call covered (Keras' steps_per_execution)
        self._lock = threading.RLock()

    @property
    def t0(self) -> float | None:
        """When the run's first step began (perf_counter), None before."""
        return self._t0

    @property
    def profiling(self) -> bool:
        """Whether a window is open."""
        return self._window is not None

    @property
    def window_index(self) -> int | None:
        """The open window's index (None: none is open)."""
        window = self._window
        return None if window is None else window.index

    @property
    def window_thread(self) -> int | None:
        """The ident of the thread that opened the open window (None: none is open)."""
        window = self._window
        return None if window is None else window.thread

    def begin_step(self) -> None:
        """A training step begins: open a window's session when the next step is the
        window's first, mark the step when the session runs already."""
        with self._lock:
            now = time.perf_counter()
            self.timer.begin(now)
            self._profiled, self._dropped = False, None
            if self._t0 is None:
                self._t0 = now
            window = self._window
            if window is not None and self._marker is None:
                if window.started is None:
                    window.started = now
                self._mark()
            elif window is None and self._due(now):
                self._open(now)

    def end_step(self, steps: int = 1) -> None:
        """The step ended (``steps`` training steps in one call: Keras'
        ``steps_per_execution``): count it, and close its window after its last step."""
        with self._lock:
            marked = self._unmark()
            first = self.step
            self.step += steps
            self._last = steps
            window = self._window
            if window is not None and marked:
                window.steps += steps
                window.per_marker.add(steps)
                if window.steps >= self.schedule.steps:
                    self._close("")
            self.timer.end(first, steps, window.index if window is not None and marked
                           else -1, self._profiled)

    def input_marker(self):
        """A context manager marking the fetch of a marked step's batch as input (the
        backends' ``INPUT_MARKER``); nothing outside the windows' marked steps (the training
        thread's own call, as ``begin_step``)."""
        window = self._window
        if self._marker is None or window is None:
            return nullcontext()
        return window.session.input_marker()

    def abandon_step(self) -> None:
        """The step did not run (no more data): its marker is ended unrecorded, the step not
        counted; an open window stays open."""
        with self._lock:
            self.timer.abandon()
            if self._dropped is not None:  # the window would not have opened: no row
                self.log.drop(self._dropped[0])
                self.schedule.restore(self._dropped[1])
                self._dropped = None
            marker, self._marker = self._marker, None
            if marker is not None:
                self._orphans.append(marker)

    def close(self, note: str, index: int | None = None) -> None:
        """Training left the loop (``note`` says how): an open window (only window ``index``,
        when given) stops with the steps that ran (its row says why there are fewer)."""
        with self._lock:
            if self._window is None or index is not None and self._window.index != index:
                self._changed()  # the views show the steps timed since
                return
            self._unmark()
            if self._window is not None:  # (a marker that failed has failed the window)
                self._close(note)

    # ---- windows ------------------------------------------------------------------------
    def _due(self, now: float) -> bool:
        """Whether the next step opens a window (this one is its session's first)."""
        if not self.schedule.due(self.step + self._last, now) \
                or not self.budget.allows(now, self.timer, self.log.ended_at):
            return False
        streak = self.log.failed_streak(FAILURE_STREAK)
        if streak:
            self._give_up(streak)
            return False
        return True

    def _open(self, now: float) -> None:
        self.saver.join()  # one session at a time: the last window's save ends first
        if self.schedule.stopped:  # that save failed the last window of a streak
            return
        first = self.step + self._last
        waiting = self.log.pending()
        if len(waiting) >= self.max_pending:
            self._drop(first, now, waiting)
            return
        undo = self.schedule.state()
        index = self.log.open(first, now - self._t0)
        aimed = self.schedule.aimed_at(first)
        if aimed is not None:
            self.log.add_note(index, f"opened to catch the spike expected at step {aimed} "
                                     f"({self.schedule.spike.describe()})")
        self.schedule.opened(first, now)
        waited = self.budget.take_note()
        if waited:
            self.log.add_note(index, waited)
        self.budget.opened(index, now, len(self.timer))
        self._profiled = True
        try:
            session = self._make_session(index)
            session.start(take_over=False)
        except Exception as err:  # e.g. another profiler session runs: this window fails
            self._failed(index, err)
            return
        self._window = OpenWindow(index, first, session, undo, threading.get_ident())

    def _drop(self, first: int, now: float, waiting: list[int]) -> None:
        """The window due at ``first`` is dropped: ``waiting`` windows wait for their
        analysis; the schedule goes on as if it had opened."""
        which, one = ", ".join(str(i) for i in waiting), len(waiting) == 1
        undo = self.schedule.state()
        index = self.log.dropped(first, now - self._t0,
                                 f"dropped: {'window' if one else 'windows'} {which} still "
                                 f"waited for {'its' if one else 'their'} analysis "
                                 f"(max_pending={self.max_pending})")
        self.schedule.opened(first, now, counted=False)
        self.budget.take_note()  # (why it waited is moot: it did not open)
        self._dropped = (index, undo)  # undone if this step never runs
        self._changed()

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
