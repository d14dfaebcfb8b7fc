"""A monitor's options: where they are not given, from a running ``%%tfprof`` cell (its
``--every``, ``--steps``, ``--warmup``, tracer levels), then from the defaults; and read back
(``Settings``)."""

from __future__ import annotations

from .monitor_budget import check_overhead
from .monitor_schedule import DEFAULT_STEPS, DEFAULT_WARMUP, Schedule, check_schedule
from .options import TracerOptions

__all__ = ["Settings", "schedule_of", "tracer_of"]

_TRACER = ("host_tracer_level", "python_tracer_level", "device_tracer_level", "sample_ms")


def schedule_of(ctx, every_steps, every_seconds, steps, warmup, max_windows,
                max_overhead_pct=None) -> Schedule:
    """The schedule of the options given; unset ones come from a running ``%%tfprof`` cell
    (its ``--every``, ``--steps``, ``--warmup``), then from the defaults; the cost budget
    (``monitor_budget``) only with the default spacing, unless given."""
    if every_steps is None and every_seconds is None and ctx is not None:
        every_steps = ctx.every
    overhead = check_overhead(max_overhead_pct, every_steps is not None
                              or every_seconds is not None)
    if steps is None:
        steps = ctx.steps if ctx else DEFAULT_STEPS
    if warmup is None:
        warmup = ctx.warmup if ctx else DEFAULT_WARMUP
    every_steps, every_seconds, steps, warmup, max_windows = check_schedule(
        every_steps, every_seconds, steps, warmup, max_windows)
    return Schedule(steps, warmup, every_steps, every_seconds, max_windows, overhead)


def tracer_of(ctx, levels: dict) -> TracerOptions:
    """Tracer levels given, else a running cell's, else the defaults."""
    merged = {k: v for k, v in (ctx.tracer if ctx else {}).items() if k in _TRACER}
    merged.update({k: v for k, v in levels.items() if v is not None})
    return TracerOptions(**merged)


class Settings:
    """The schedule a :class:`~.monitor.Monitor` runs with, read back (a mixin over its
    ``_schedule`` and ``_driver``)."""

    @property
    def steps(self) -> int:
        """Steps per window."""
        return self._schedule.steps

    @property
    def warmup(self) -> int:
        return self._schedule.warmup

    @property
    def every_steps(self) -> int | None:
        return self._schedule.every_steps

    @property
    def every_seconds(self) -> float | None:
        return self._schedule.every_seconds

    @property
    def max_overhead_pct(self) -> float | None:
        """The windows' cost budget, a share of the run (%), None without one."""
        return self._schedule.overhead_pct

    @property
    def steps_run(self) -> int:
        """Training steps run so far under the monitor."""
        return self._driver.step
