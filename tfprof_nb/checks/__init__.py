"""``tp.check``: performance limits on a profile, for notebooks, tests and CI.

    result = tp.check(prof, max_step_ms=120, max_input_pct=10, min_duty_cycle_pct=60)
    result                  # a table: each limit, the measured value, PASS/FAIL/UNKNOWN, evidence
    result.assert_ok()      # raises tp.PerformanceCheckError listing the failed limits
    tp.check(new, baseline=old, max_regression_pct=5).ok

Every measure is the number the tables, cards and findings show (:mod:`.limit_measures`:
``prof.measures``' rows); a regression against a baseline is judged on the two step-time
distributions (:mod:`.regression`).
A limit whose measure the profile lacks (no steps, no device, no memory events) is "unknown",
with the reason, and fails the check unless ``allow_missing=True``.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from . import limit_measures as m
from .limit_measures import STATISTICS, Measure, Subject
from .regression import MIN_STEPS, step_regression
from .result import CheckResult, CheckRow

__all__ = ["LIMITS", "MIN_STEPS", "STATISTICS", "CheckResult", "CheckRow", "Limit", "check",
           "step_regression"]


@dataclass(frozen=True)
class Limit:
    """A limit ``tp.check`` takes: its keyword, what it measures in words, whether the value
    must stay below (``max``) or above (``min``) the threshold, the unit, and its measure
    ``(subject, threshold, step_statistic, baseline) -> Measure``."""

    name: str
    what: str
    bound: str
    unit: str
    measure: Callable[..., Measure]


LIMITS = (
    Limit("max_step_ms", "{statistic} step time", "max", "ms",
          lambda s, t, stat, b: m.step_time(s, stat, t)),
    Limit("max_input_pct", "input wait", "max", "%", lambda s, t, stat, b: m.input_wait(s)),
    Limit("min_duty_cycle_pct", "device duty cycle", "min", "%",
          lambda s, t, stat, b: m.duty_cycle(s)),
    Limit("max_idle_pct", "device idle time", "max", "%", lambda s, t, stat, b: m.idle(s)),
    Limit("max_host_bound_pct", "GPU time waiting for late launches", "max", "%",
          lambda s, t, stat, b: m.host_bound(s)),
    Limit("max_kernel_launch_pct", "kernel launch time", "max", "%",
          lambda s, t, stat, b: m.kernel_launch(s)),
    Limit("max_memory_peak_bytes", "memory peak", "max", "bytes",
          lambda s, t, stat, b: m.memory_peak(s)),
    Limit("max_regression_pct", "median step time vs baseline", "max", "%",
          lambda s, t, stat, b: m.regression(s, b, t)),
)
_BY_NAME = {limit.name: limit for limit in LIMITS}


def _label(source) -> str:
    """The profile's name in the result: the path the user gave, or the profile's files."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    if isinstance(source, pd.DataFrame):
        return "a steps table"
    if isinstance(source, (list, tuple)):
        return ", ".join(map(str, source))
    files = list(getattr(source, "source", []) or [])
    if len(files) == 1:
        return files[0]
    if files:
        parent = os.path.commonpath([os.path.dirname(f) for f in files]) or files[0]
        return f"{parent} ({len(files)} files)"
    return repr(source)


def _subject(source) -> Subject:
    """A Profile, a steps table (a DataFrame with ``duration_ms``), or anything ``tp.load``
    takes (paths and URLs, loaded here)."""
    from ..profile import Profile

    if isinstance(source, Profile):
        return Subject(_label(source), source.steps, source)
    if isinstance(source, pd.DataFrame):
        if "duration_ms" not in source:
            raise ValueError("a steps table needs a duration_ms column (prof.steps has one)")
        return Subject(_label(source), source, None)
    from ..loading import load

    prof = load(source)
    return Subject(_label(source), prof.steps, prof)


def _thresholds(given: dict, baseline) -> dict:
    """The limits given, in :data:`LIMITS`' order, checked: finite numbers, not negative
    (but a regression limit, which may ask for a speed-up), a baseline with its limit."""
    out = {}
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, not {value!r}")
        if value < 0 and name != "max_regression_pct":
            raise ValueError(f"{name} must not be negative (got {value!r})")
        out[name] = float(value)
    if (baseline is None) != ("max_regression_pct" not in out):
        raise ValueError("baseline= and max_regression_pct= go together: the limit is the "
                         "slowdown of the median step time from the baseline, in %")
    if not out:
        raise ValueError("no limit given: pass at least one of "
                         + ", ".join(f"{limit.name}=" for limit in LIMITS))
    return out


def _row(limit: Limit, subject: Subject, threshold: float, statistic: str,
         baseline: Subject | None) -> CheckRow:
    """Measure one limit and judge it."""
    got = limit.measure(subject, threshold, statistic, baseline)
    if got.value is None:
        status = "unknown"
    elif got.passed is not None:
        status = "passed" if got.passed else "failed"
    else:
        ok = got.value <= threshold if limit.bound == "max" else got.value >= threshold
        status = "passed" if ok else "failed"
    return CheckRow(limit.name, limit.what.format(statistic=statistic), limit.bound,
                    threshold, got.value, limit.unit, status, got.evidence, got.details)


def check(prof, *, max_step_ms: float | None = None, max_input_pct: float | None = None,
          min_duty_cycle_pct: float | None = None, max_idle_pct: float | None = None,
          max_host_bound_pct: float | None = None, max_kernel_launch_pct: float | None = None,
          max_memory_peak_bytes: float | None = None, baseline=None,
          max_regression_pct: float | None = None, step_statistic: str = "median",
          allow_missing: bool = False) -> CheckResult:
    """Check ``prof`` against performance limits; one result row per limit given.

    ``prof`` (and ``baseline``): a Profile, anything ``tp.load`` takes (paths, URLs), or a
    steps table (a DataFrame with ``duration_ms``, e.g. ``prof.steps``; only the step-time
    limits can be measured on it).  The limits, each measured as the views show it:

    * ``max_step_ms``: the ``step_statistic`` of ``prof.steps.duration_ms`` ("median",
      default; "mean": the overview's average; "p90", "p95", "p99", "max");
    * ``max_input_pct``: the share of step time waiting for input (the overview's card);
    * ``min_duty_cycle_pct``: the devices' busy time over their active spans (the overview's);
    * ``max_idle_pct``: the devices' idle share of their step time (``prof.gpu_utilization``);
    * ``max_host_bound_pct``: the GPUs' share of step time idle waiting for late launches;
    * ``max_kernel_launch_pct``: the step breakdown's kernel-launch share;
    * ``max_memory_peak_bytes``: the largest allocator's peak memory in use;
    * ``baseline`` with ``max_regression_pct``: the slowdown of the median step time from the
      baseline, failed only when the noise band of the two step distributions (the 95 %
      Mann-Whitney interval of the ratio of step times; at least 5 steps each) lies above the
      limit: see ``tfprof_nb.checks.regression``.

    A limit whose measure the profile lacks is "unknown" (its evidence says why) and fails
    the check unless ``allow_missing=True``.  Raises ValueError when no limit is given or a
    limit is not a finite number; loading errors (a missing path, an unreadable file)
    propagate as ``tp.load`` raises them.
    """
    limits = _thresholds({"max_step_ms": max_step_ms, "max_input_pct": max_input_pct,
                          "min_duty_cycle_pct": min_duty_cycle_pct,
                          "max_idle_pct": max_idle_pct,
                          "max_host_bound_pct": max_host_bound_pct,
                          "max_kernel_launch_pct": max_kernel_launch_pct,
                          "max_memory_peak_bytes": max_memory_peak_bytes,
                          "max_regression_pct": max_regression_pct}, baseline)
    if step_statistic not in STATISTICS:
        raise ValueError(f"step_statistic must be one of {', '.join(STATISTICS)}, not "
                         f"{step_statistic!r}")
    subject = _subject(prof)
    base = _subject(baseline) if baseline is not None else None
    rows = [_row(_BY_NAME[name], subject, threshold, step_statistic, base)
            for name, threshold in limits.items()]
    return CheckResult(rows, allow_missing, subject.label, base.label if base else None)
