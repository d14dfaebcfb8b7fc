"""When a monitor profiles: a window of N steps after W warm-up steps, then one every K steps
(or every T seconds), never while the previous window is still being analysed.  A window's
profiler session starts one step before its first step (see ``monitor_driver``): the first
window's first step is ``max(W, 1)``.

The last rule keeps the analysis of a window (decoding and analysing its profile on a
background thread) off the steps the next window measures, and bounds the work a monitor
adds: when the analysis takes longer than K steps of training, the next window starts at
the first step after it ends (the history's ``first_step`` says where each window began).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

from .options import check_steps

__all__ = ["DEFAULT_EVERY_STEPS", "DEFAULT_STEPS", "DEFAULT_WARMUP", "Schedule",
           "check_schedule"]

# Chosen with benchmarks/bench_monitor.py (BENCHMARKS.md, "Watching a long run"): a 10-step
# window every 500 steps kept the whole run's overhead under 3 % on the benchmark's models.
DEFAULT_EVERY_STEPS = 500
DEFAULT_STEPS = 10
DEFAULT_WARMUP = 3


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_schedule(every_steps, every_seconds, steps, warmup, max_windows=None):
    """Validated ``(every_steps, every_seconds, steps, warmup, max_windows)``: windows every
    ``every_steps`` steps (at least ``steps``, so that windows never overlap) or every
    ``every_seconds`` seconds, not both; ``every_steps`` defaults to DEFAULT_EVERY_STEPS
    when neither is given."""
    steps, warmup = check_steps(steps, warmup)
    if every_steps is not None and every_seconds is not None:
        raise ValueError("give every_steps or every_seconds, not both")
    if every_seconds is not None:
        if isinstance(every_seconds, bool) or not isinstance(every_seconds, numbers.Real) \
                or not every_seconds > 0:
            raise ValueError(f"every_seconds must be a positive number, got {every_seconds!r}")
        every_seconds = float(every_seconds)
    else:
        every_steps = _positive_int("every_steps", DEFAULT_EVERY_STEPS if every_steps is None
                                    else every_steps)
        if every_steps < steps:
            raise ValueError(f"every_steps ({every_steps}) must be at least steps ({steps}): "
                             f"a window of {steps} steps starts every {every_steps} steps")
    if max_windows is not None:
        max_windows = _positive_int("max_windows", max_windows)
    return every_steps, every_seconds, steps, warmup, max_windows


@dataclass
class Schedule:
    """Which step opens the next window (see the module's docstring)."""

    steps: int
    warmup: int
    every_steps: int | None = None
    every_seconds: float | None = None
    max_windows: int | None = None
    started: int = 0  # windows opened so far
    stopped: bool = False  # no window opens any more (Monitor.stop, or failing windows)
    reason: str = ""  # why it stopped, when it stopped by itself
    next_step: int = field(init=False)  # the first step the next window may open at
    next_time: float = float("-inf")  # the earliest time (perf_counter) it may open

    def __post_init__(self):
        self.next_step = max(self.warmup, 1)  # its session starts the step before

    def due(self, step: int, now: float, analysing: bool) -> bool:
        """Whether a window opens at ``step`` (begun at ``now``), ``analysing`` saying
        whether the previous window is still being analysed."""
        if self.stopped or analysing or step < self.next_step or now < self.next_time:
            return False
        return self.max_windows is None or self.started < self.max_windows

    def opened(self, step: int, now: float) -> None:
        """A window opened at ``step`` at ``now``: when the next may open."""
        self.started += 1
        if self.every_seconds is None:
            self.next_step = step + self.every_steps
        else:
            self.next_step = step + self.steps
            self.next_time = now + self.every_seconds

    def state(self) -> tuple:
        """What ``opened`` changes, for ``restore``."""
        return self.started, self.next_step, self.next_time

    def restore(self, state: tuple) -> None:
        """Undo the ``opened`` of a window that left no row (it ended before its first
        step), ``state`` from ``state()`` before it."""
        self.started, self.next_step, self.next_time = state

    def stop(self, reason: str = "") -> None:
        """No window opens any more (``reason``: why, when the monitor stops by itself)."""
        self.stopped = True
        self.reason = self.reason or reason

    def describe(self) -> str:
        """The schedule in words."""
        every = (f"every {self.every_steps} steps" if self.every_seconds is None
                 else f"every {self.every_seconds:g} s")
        limit = f", at most {self.max_windows} windows" if self.max_windows else ""
        said = f"{self.steps} steps profiled {every} after {self.warmup} warm-up steps{limit}"
        return f"{said}; stopped: {self.reason}" if self.reason else said
