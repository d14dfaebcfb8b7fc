"""How a monitor's window ends (a mixin of ``monitor_driver.WindowDriver``): closed after its
steps and handed to ``monitor_saving`` to be saved off the training thread (on this thread
only when markers of steps that never ran must end after the stop), discarded when no step
was marked, or failed (a marker or a save that failed; ``FAILURE_STREAK`` failures in a row
with the same error stop the schedule).  ``_failed`` and ``_saved`` also run on the saving
thread: they never take the driver's lock."""

from __future__ import annotations

import functools
import shutil
import time
from dataclasses import dataclass, field

__all__ = ["FAILURE_STREAK", "OpenWindow", "WindowEnding"]

FAILURE_STREAK = 3  # windows failed in a row with the same error: the monitor stops


@dataclass
class OpenWindow:
    """The window being profiled."""

    index: int
    first_step: int  # its first marked step
    session: object  # a LocalSession, started
    undo: tuple  # the schedule's state before it opened (given back when it leaves no row)
    thread: int  # the thread that opened it
    started: float | None = None  # perf_counter at its first marked step
    steps: int = 0  # training steps (batches) marked
    per_marker: set = field(default_factory=set)  # steps per marker seen


class WindowEnding:
    """The ending of the driver's open window (see the module's docstring); the driver holds
    ``_window``, ``_orphans``, ``_profiled``, ``schedule``, ``log``, ``saver``,
    ``_analyse`` and ``_changed``."""

    def _stop(self, window: OpenWindow):
        """Stop the window's session; the markers of steps that never ran end after it."""
        self._profiled = True
        try:
            return window.session.stop()
        finally:
            orphans, self._orphans = self._orphans, []
            for marker in orphans:
                try:
                    marker.__exit__(None, None, None)
                except Exception:  # the profiler is stopped: nothing is recorded anyway
                    pass

    def _close(self, note: str) -> None:
        window, self._window = self._window, None
        if window.steps == 0:
            self._discard(window)
            return
        wanted = self.schedule.steps
        values = {"steps": window.steps, "last_step": window.first_step + window.steps - 1,
                  "wall_s": time.perf_counter() - window.started,
                  "backend": window.session.backend or ""}
        notes = []
        if window.steps < wanted and note:
            notes.append(f"{window.steps} of {wanted} steps: {note}")
        if max(window.per_marker) > 1:
            notes.append(f"each step marker covers {max(window.per_marker)} steps "
                         f"(steps_per_execution): step times are per execution")
        self.log.update(window.index, **values)
        for note in notes:
            self.log.add_note(window.index, note)
        if not self._orphans:  # saved off the training thread (monitor_saving)
            self._profiled = True
            self.saver.save(window.session, functools.partial(self._saved, window.index),
                            functools.partial(self._failed, window.index))
            return
        try:  # steps that never ran: their markers end after the stop, on this thread
            run_dir = self._stop(window)
        except Exception as err:  # the profiler could not save: this window fails
            self._failed(window.index, err)
            return
        self._saved(window.index, run_dir)

    def _saved(self, index: int, run_dir) -> None:
        """Window ``index`` is saved in ``run_dir``: its analysis is queued."""
        self.log.update(index, status="pending", run=str(run_dir))
        self._analyse(index, run_dir)

    def _discard(self, window: OpenWindow) -> None:
        """A window that ended before its first marked step: no row, no files, and the
        schedule as if it never opened."""
        try:
            self._stop(window)
        except Exception:  # nothing was marked: whatever it saved goes
            pass
        shutil.rmtree(window.session.logdir, ignore_errors=True)
        self.log.drop(window.index)
        self.schedule.restore(window.undo)
        self._changed()

    def _failed(self, index: int, err) -> None:
        self.log.fail(index, err)
        streak = self.log.failed_streak(FAILURE_STREAK)
        if streak:
            self._give_up(streak)
        self._changed()

    def _give_up(self, error: str) -> None:
        """``FAILURE_STREAK`` windows in a row failed with ``error``: no window opens any
        more; the status and the last row say why."""
        if self.schedule.stopped:
            return
        reason = (f"{FAILURE_STREAK} windows in a row failed ({error}): no more windows are "
                  f"profiled")
        self.schedule.stop(reason)
        self.log.add_note(len(self.log) - 1, reason)

    def _stop_failed(self, err: Exception) -> None:
        """A step marker failed: stop the window's session, fail its row."""
        window, self._window = self._window, None
        if window is None:
            return
        try:
            self._stop(window)
        except Exception:  # the marker's error is the one the row keeps
            pass
        self._failed(window.index, err)
