"""When a monitor profiles: a window of N steps after W warm-up steps, then one every K steps
(or every T seconds), on schedule whatever the analyses of earlier windows are doing.  A
window's profiler session starts one step before its first step (see ``monitor_driver``):
the first window's first step is ``max(W, 1)``.

A capture is cheap next to its analysis (decoding and analysing the profile on a background
thread), so windows do not wait for analyses: these queue behind the captures, at most
``max_pending`` of them (the driver's rule); a window due while that many wait is dropped,
its row saying why, and the schedule goes on from it as if it had opened.  With
``catch_spikes``, once the step timer has found spikes recurring every P steps, a window due
waits (at most P - 1 steps) until its second step is the next expected spike.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

from .._words import counted
from .options import check_steps

__all__ = ["DEFAULT_EVERY_STEPS", "DEFAULT_MAX_PENDING", "DEFAULT_STEPS", "DEFAULT_WARMUP",
           "Schedule", "check_pending", "check_schedule"]

# Chosen with benchmarks/bench_monitor.py (BENCHMARKS.md, "Watching a long run"): a 10-step
# window every 500 steps kept the whole run's overhead under 3 % on the benchmark's models.
DEFAULT_EVERY_STEPS = 500
DEFAULT_STEPS = 10
DEFAULT_WARMUP = 3
DEFAULT_MAX_PENDING = 2  # saved windows waiting for (or in) their analysis: more are dropped


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


def check_pending(max_pending) -> int:
    """Validated ``max_pending`` (a positive integer)."""
    return _positive_int("max_pending", max_pending)


@dataclass
class Schedule:
    """Which step opens the next window (see the module's docstring)."""

    steps: int
    warmup: int
    every_steps: int | None = None
    every_seconds: float | None = None
    max_windows: int | None = None
    overhead_pct: float | None = None  # the windows' cost budget (monitor_budget), if any
    started: int = 0  # windows opened so far
    stopped: bool = False  # no window opens any more (Monitor.stop, or failing windows)
    reason: str = ""  # why it stopped, when it stopped by itself
    next_step: int = field(init=False)  # the first step the next window may open at
    next_time: float = float("-inf")  # the earliest time (perf_counter) it may open
    catch_spikes: bool = False  # wait for an expected spike (see the module's docstring)
    spike: object = None  # the step timer's spike period (monitor_spikes.Period), once found

    def __post_init__(self):
        self.next_step = max(self.warmup, 1)  # its session starts the step before

    def due(self, step: int, now: float) -> bool:
        """Whether a window opens at ``step`` (begun at ``now``)."""
        if self.stopped or step < self.next_step or now < self.next_time:
            return False
        if self.max_windows is not None and self.started >= self.max_windows:
            return False
        spike = self.spike if self.catch_spikes else None
        return spike is None or self.aimed_at(step) is not None \
            or step >= self.next_step + spike.period - 1  # (steps_per_execution jumps it)

    def aimed_at(self, step: int) -> int | None:
        """The expected spike a window opening at ``step`` catches as its second step (its
        first with 1-step windows), with ``catch_spikes``; else None."""
        spike = self.spike if self.catch_spikes else None
        if spike is None:
            return None
        target = step + min(1, self.steps - 1)
        return target if spike.next_at(target) == target else None

    def opened(self, step: int, now: float, counted: bool = True) -> None:
        """A window opened at ``step`` at ``now`` (``counted``: False for a window dropped,
        which ``max_windows`` does not count): when the next may open."""
        self.started += counted
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
        every = (f"every {counted(self.every_steps, 'step')}" if self.every_seconds is None
                 else f"every {self.every_seconds:g} s")
        if self.overhead_pct is not None:
            every += (f" (further apart where windows would cost training more than "
                      f"{self.overhead_pct:g}% of its time)")
        limit = f", at most {counted(self.max_windows, 'window')}" if self.max_windows else ""
        said = (f"{counted(self.steps, 'step')} profiled {every} after "
                f"{counted(self.warmup, 'warm-up step')}{limit}")
        return f"{said}; stopped: {self.reason}" if self.reason else said
