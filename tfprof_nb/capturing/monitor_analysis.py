"""A monitor's background work: each stopped window's profile loaded and reduced to its row of
the history, one window at a time, on a thread of its own that never blocks training; the
loading and reducing happen in a worker process (``monitor_worker``: no GIL shared with
training), on this thread only where no worker starts.

The thread starts when there is work and ends when there is none; it runs at the lowest CPU
priority (Linux: nice 19, inherited by the decoding threads it starts), so that a training
loop that keeps the cores busy is slowed as little as possible (the window's analysis then
waits).  An error in a window's analysis goes into that window's row, never to the training
loop.  A window's Profile is loaded from its run directory when asked for (or kept from an
analysis on this thread), the last few in a small cache (``WindowProfiles``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque

import numpy as np

from .monitor_log import WindowLog
from .monitor_values import window_values

__all__ = ["Analyser", "WindowProfiles", "analyse_window", "window_values"]

_KEPT_PROFILES = 3  # the last analysed (or opened) windows' Profiles kept in memory


def analyse_window(log: WindowLog, index: int, run_dir, profiles: "WindowProfiles",
                   publish=None) -> None:
    """Load window ``index``'s run, write its values into its row (or why it failed) and keep
    its Profile.  ``publish(run_dir)`` (a URL logdir's upload) gives the run's final place."""
    from .monitor_worker import AnalysisFailed, WorkerUnavailable, analyse_run

    prof = None
    try:
        try:
            values, step_ms = analyse_run(run_dir)  # in the worker process
        except WorkerUnavailable:  # here then, on this thread
            from ..loading import load

            prof = load(run_dir, progress=False)
            values, step_ms = window_values(prof)
        if publish is not None:
            run_dir, prof = publish(run_dir), None  # the staged files are gone
            values["run"] = str(run_dir)
    except AnalysisFailed as err:
        log.fail(index, str(err))
        return
    except Exception as err:  # the window's row says why; training goes on
        log.fail(index, err)
        return
    log.analysed(index, values, step_ms)
    if prof is not None:
        profiles.keep(index, prof)


class Analyser:
    """Runs jobs (callables that handle their own errors) one at a time, in order, on a
    background thread started when there is work (see the module's docstring)."""

    def __init__(self):
        self._jobs: deque = deque()
        self._cv = threading.Condition()
        self._running = False

    def submit(self, job) -> None:
        """Run ``job()`` after the jobs before it."""
        with self._cv:
            self._jobs.append(job)
            if not self._running:
                self._running = True
                threading.Thread(target=self._drain, name="tfprof-monitor",
                                 daemon=True).start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every job is done (False: ``timeout`` seconds passed first)."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._running and not self._jobs, timeout)

    def _drain(self) -> None:
        from ..analysis.runtime.scheduling.priority import yield_to_critical_path

        yield_to_critical_path()  # this thread, and the decoding threads it starts
        try:
            while True:
                with self._cv:
                    if not self._jobs:
                        return
                    job = self._jobs.popleft()
                job()
        finally:
            with self._cv:
                self._running = False
                if self._jobs:  # a job raised (a bug, shown by the thread's excepthook)
                    self._running = True
                    threading.Thread(target=self._drain, name="tfprof-monitor",
                                     daemon=True).start()
                self._cv.notify_all()


class WindowProfiles:
    """``Monitor.profiles``: window i's Profile by index, the last few kept in memory and the
    others loaded again from their runs (``run_of(i)`` gives a window's run, or raises why
    it has none)."""

    def __init__(self, count, run_of):
        self._count, self._run_of = count, run_of
        self._kept: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count()

    def keep(self, index: int, prof) -> None:
        """Keep window ``index``'s Profile (the oldest kept one goes)."""
        with self._lock:
            self._kept[index] = prof
            self._kept.move_to_end(index)
            while len(self._kept) > _KEPT_PROFILES:
                self._kept.popitem(last=False)

    def __getitem__(self, index: int):
        n = len(self)
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError(f"a window index is an integer, got {type(index).__name__}")
        if not -n <= index < n:
            raise IndexError(f"no window {index}: the monitor has {n}")
        index = int(index) % n
        with self._lock:
            prof = self._kept.get(index)
        if prof is None:
            from ..loading import load

            prof = load(self._run_of(index), progress=False)
            self.keep(index, prof)
        return prof

    def __iter__(self):
        return (self[i] for i in range(len(self)))
