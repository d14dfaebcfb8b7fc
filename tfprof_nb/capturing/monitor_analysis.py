"""A monitor's background work: each stopped window's profile loaded and reduced to its row of
the history, one window at a time, on a thread of its own that never blocks training.

The thread starts when there is work and ends when there is none; it runs at the lowest CPU
priority (Linux: nice 19, inherited by the decoding threads it starts), so that a training
loop that keeps the cores busy is slowed as little as possible (the window's analysis then
waits).  An error in a window's analysis goes into that window's row, never to the training
loop.  The window's Profile stays in a small cache (``WindowProfiles``), loaded again from its
run directory when it was dropped.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque

import numpy as np

from ..analysis.findings.measure_words import value_of
from ..constants import CATEGORY_COLUMNS
from .monitor_log import WindowLog

__all__ = ["Analyser", "WindowProfiles", "analyse_window", "window_values"]

_KEPT_PROFILES = 3  # the last analysed (or opened) windows' Profiles kept in memory


def _top_op(ops) -> tuple[str, float]:
    """The op with the most self time (a device op where the profile has them, as the
    overview's top ops), and its share of self time (%)."""
    device = ops[ops.host_or_device == "Device"]
    top = device if len(device) else ops[ops.host_or_device == "Host"]
    if top.empty:
        return "", float("nan")
    return str(top.operation.iloc[0]), float(top.self_time_pct.iloc[0])


def window_values(prof) -> tuple[dict, np.ndarray]:
    """A window's numbers from its Profile (the same tables the overview reads): median step
    time, mean ms per step-time category, input wait share, device duty cycle, memory peak,
    top op; and its steps' durations (ms)."""
    steps = prof.steps
    step_ms = steps.duration_ms.to_numpy(dtype=float)
    values = {"median_step_ms": float(np.median(step_ms)) if len(step_ms) else np.nan}
    for col in CATEGORY_COLUMNS:
        values[col] = float(steps[col].mean()) if len(steps) else np.nan
    measures = prof.measures  # the numbers the window's own pages quote
    values["input_pct"] = value_of(measures, "input_wait_pct", np.nan)
    values["duty_cycle_pct"] = value_of(measures, "duty_cycle_pct", np.nan)
    memory = prof.memory_summary
    values["memory_peak_bytes"] = float(memory.peak_bytes_in_use.max()) if len(memory) \
        else np.nan
    values["top_op"], values["top_op_pct"] = _top_op(prof.op_stats_table(include_idle=False))
    if not len(step_ms):
        values["note"] = "no steps found in this window's profile"
    return values, step_ms


def analyse_window(log: WindowLog, index: int, run_dir, profiles: "WindowProfiles",
                   publish=None) -> None:
    """Load window ``index``'s run, write its values into its row (or why it failed) and keep
    its Profile.  ``publish(run_dir)`` (a URL logdir's upload) gives the run's final place."""
    from ..loading import load

    try:
        prof = load(run_dir, progress=False)
        values, step_ms = window_values(prof)
        if publish is not None:
            run_dir, prof = publish(run_dir), None  # the staged files are gone
            values["run"] = str(run_dir)
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
