"""What each limit measures: the numbers the pages quote, never a second computation.

* step time: a statistic of ``prof.steps.duration_ms`` (the median by default; on a pod each
  step's slowest host's);
* input wait, device idle, duty cycle, host-bound time, kernel launch: the rows of
  ``prof.measures`` (:mod:`..analysis.findings.measures`) that the cards, verdicts and
  findings quote, with their scope (which devices, which time), their spread over the
  devices and XProf's figure where its rule differs;
* memory peak: ``prof.memory_summary.peak_bytes_in_use``, the largest allocator's.

Each measure returns a :class:`Measure`: the value (None when the profile lacks it, with the
reason as evidence) and evidence in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._words import counted
from ..analysis.findings.measure_words import (get, left_out_words, measure_text, spread_words,
                                         xprof_words)
from ..analysis.steps.breakdown import NO_STEPS_WHY
from ..analysis.steps.per_step import host_count, judged_steps, per_step
from ..analysis.tf.memory import LABELS
from ..plot.memory_figures import human_bytes
from .regression import CONFIDENCE, step_regression

__all__ = ["Measure", "Subject", "STATISTICS", "duty_cycle", "host_bound", "idle", "input_wait",
           "kernel_launch", "memory_peak", "per_step", "regression", "step_time"]

# the statistics of step time a limit may take (name: function of the step times)
STATISTICS = {"median": np.median, "mean": np.mean, "p90": lambda x: np.percentile(x, 90),
              "p95": lambda x: np.percentile(x, 95), "p99": lambda x: np.percentile(x, 99),
              "max": np.max}
NO_STEPS = f"the profile has no steps ({NO_STEPS_WHY})"


@dataclass
class Subject:
    """What is checked: a profile (``prof``) or a steps table alone (``prof`` None)."""

    label: str
    steps: pd.DataFrame
    prof: object = None

    def needs_profile(self, what: str) -> "Measure | None":
        """An unknown measure when only a steps table was given, else None."""
        if self.prof is not None:
            return None
        return Measure(None, f"a steps table has no {what}: give the profile itself")


@dataclass
class Measure:
    """A measured value (None: unknown, ``evidence`` says why) and its evidence in words;
    ``details``: numbers for JSON; ``passed`` decides instead of the threshold when set."""

    value: float | None
    evidence: str
    details: dict = field(default_factory=dict)
    passed: bool | None = None


def _source_words(steps: pd.DataFrame, words: str) -> str:
    """The steps judged in ``words`` (:func:`judged_steps`'s: "the 8 steps", on a pod "the
    140 steps of 2 hosts paired as XProf's pod viewer aligns them, ...") and where they come
    from: "the 8 steps (source: markers)"."""
    return f"{words} (source: {steps.source.iloc[0]})" if "source" in steps and len(steps) \
        else words


def _step_names(steps: pd.DataFrame, rows) -> str:
    """The steps at positions ``rows``: "step 3", "steps 0, 4", on a pod "step 3 on host"."""
    numbers = [str(steps.index[i]) for i in rows]
    if host_count(steps) > 1:
        numbers = [f"{k} on {h}" for k, h in zip(numbers, steps.host.iloc[list(rows)])]
    return f"step{'s' * (len(numbers) > 1)} {', '.join(numbers)}"


def _page_mean(subject: Subject):
    """The profile's average step time as its pages say it (``prof.measures``' mean: over
    the steps XProf counts), or None (a steps table alone, or no such measure)."""
    return None if subject.prof is None else get(subject.prof.measures, "step_time_mean_ms")


def step_time(subject: Subject, statistic: str, threshold: float) -> Measure:
    """A statistic of the step times (``steps.duration_ms``; on a pod each step's slowest
    host's), in ms; the mean is the pages' average step time (over the steps XProf counts:
    each host's first and last left out of more than five), the others are over every step."""
    steps, judged = judged_steps(subject.steps)
    if steps.empty:
        return Measure(None, NO_STEPS if subject.prof is not None else "the steps table is "
                       "empty")
    d = steps.duration_ms.astype(float).to_numpy()
    page = _page_mean(subject)
    mean = float(page["value"]) if page is not None else float(d.mean())
    value = mean if statistic == "mean" else float(STATISTICS[statistic](d))
    over = np.flatnonzero(d > threshold)
    mean_words = f"the average {mean:.3f} ms ({page['scope']})" if page is not None else \
        f"mean {mean:.3f} ms"
    others = [words for k, words in (("median", f"median {np.median(d):.3f} ms"),
                                     ("mean", mean_words)) if k != statistic]
    head = f"{statistic} of {_source_words(subject.steps, judged)}: {value:.3f} ms" \
        if statistic != "mean" or page is None else \
        f"average step time {value:.3f} ms ({page['scope']})"
    words = (f"{head} ({', '.join(others)}, slowest {_step_names(steps, [int(d.argmax())])}: "
             f"{d.max():.3f} ms); "
             f"{len(over):,} of {counted(len(d), 'step')} over {threshold:g} ms")
    if 0 < len(over) <= 5:
        words += f" ({_step_names(steps, over)})"
    return Measure(value, words, {"statistic": statistic, "steps": len(d),
                                  "median_ms": float(np.median(d)), "mean_ms": mean,
                                  "max_ms": float(d.max()), "steps_over": len(over)})


def _registered(subject: Subject, key: str, what: str, unknown) -> Measure:
    """The measure ``key`` of ``prof.measures`` (the number every page quotes) in words with
    its scope, spread and XProf's figure; ``unknown(subject)`` says why it is missing."""
    missing = subject.needs_profile(what)
    if missing:
        return missing
    table = subject.prof.measures
    if key in table.index and pd.isna(table.at[key, "value"]):  # (the trace cannot give it:
        return Measure(None, f"{table.at[key, 'label']} unknown: {table.at[key, 'scope']}")
    row = get(table, key)  # its scope says why)
    if row is None:
        return Measure(None, unknown(subject))
    parts = [f"{row['label']} {measure_text(row['value'], row['unit'])} ({row['scope']}"
             f"{left_out_words(row, table)})",
             spread_words(row), xprof_words(row)]
    details = {"scope": row["scope"], "rule": row["rule"], "devices": int(row["device_count"])}
    if pd.notna(row["xprof_value"]):
        details["xprof_value"] = float(row["xprof_value"])
    return Measure(float(row["value"]), "; ".join(p for p in parts if p), details)


def input_wait(subject: Subject) -> Measure:
    """The share of step time waiting for input: ``prof.measures``' ``input_wait_pct``."""
    return _registered(subject, "input_wait_pct", "input accounting", lambda s: NO_STEPS)


def _no_device(subject: Subject) -> str:
    env = subject.prof.result("environment")
    if env["device_type"] == "CPU":
        return "no GPU or TPU in this profile (CPU only)"
    return f"no {env['device_type']} of this profile was active"


def duty_cycle(subject: Subject) -> Measure:
    """The devices' busy time over their active spans: ``prof.measures``' ``duty_cycle_pct``
    (the devices active in the steps)."""
    return _registered(subject, "duty_cycle_pct", "device activity", _no_device)


def idle(subject: Subject) -> Measure:
    """The devices' idle share of their step time: ``prof.measures``' ``device_idle_pct``."""
    return _registered(subject, "device_idle_pct", "device time accounting", _no_device)


def _gpu_only(subject: Subject) -> str:
    if subject.prof.result("environment")["device_type"] == "TPU":
        return ("this profile's devices are TPUs: host-bound time is measured on GPUs (late "
                "kernel launches)")
    return _no_device(subject)


def host_bound(subject: Subject) -> Measure:
    """The GPUs' time idle waiting for launches that come late from a busy host:
    ``prof.measures``' ``host_wait_pct``."""
    return _registered(subject, "host_wait_pct", "device time accounting", _gpu_only)


def _no_launches(subject: Subject) -> str:
    if subject.steps.empty:
        return NO_STEPS
    env = subject.prof.result("environment")
    if env["device_type"] == "TPU":
        return "this profile's devices are TPUs: the host launches no kernels"
    return _no_device(subject) + ": no kernels are launched"


def kernel_launch(subject: Subject) -> Measure:
    """XProf's step-breakdown kernel-launch share: ``prof.measures``' ``kernel_launch_pct``."""
    return _registered(subject, "kernel_launch_pct", "devices", _no_launches)


def memory_peak(subject: Subject) -> Measure:
    """The largest peak of memory in use of any allocator (``prof.memory_summary``)."""
    missing = subject.needs_profile("memory events")
    if missing:
        return missing
    summary = subject.prof.memory_summary
    if summary.empty:
        return Measure(None, "no memory events in this profile (on CPU only some allocators "
                       "and workloads record them)")
    row = summary.loc[summary.peak_bytes_in_use.idxmax()]
    peak = int(row.peak_bytes_in_use)
    name = summary.attrs.get(LABELS, {}).get((str(row.host), str(row.allocator)),
                                             str(row.allocator))
    if len(subject.prof.hosts) > 1:
        name = f"{name} on {row.host}"
    words = f"largest peak in use: {name}, {human_bytes(peak)} ({peak:,} bytes)"
    if row.memory_capacity_bytes > 0:
        words += f" of its {human_bytes(float(row.memory_capacity_bytes))} capacity"
    if pd.notna(row.peak_time_us):  # (its step_id stat is the allocator's, not a step's)
        words += f", at {float(row.peak_time_us) / 1e3:,.3f} ms"
        if pd.notna(row.peak_step) and row.peak_step >= 0:
            words += f" (allocator step id {int(row.peak_step)})"
    words += f"; {counted(len(summary), 'allocator')}"
    return Measure(float(peak), words, {"allocator": name, "allocators": len(summary)})


def _verdict(r) -> str:
    if r.max_pct < 0:  # a speed-up asked for
        if r.regressed:
            return (f"not faster than the limit beyond the noise band: it reaches up to "
                    f"{r.high_pct:+.1f}% > {r.max_pct:+g}%")
        return f"faster than the limit beyond the noise band: {r.high_pct:+.1f}% at most"
    if r.regressed:
        return (f"slower than the limit beyond the noise band: by at least {r.low_pct:+.1f}% "
                f"> {r.max_pct:g}%")
    if r.change_pct > r.max_pct:
        return (f"the medians differ by more than the limit, but the noise band reaches "
                f"down to {r.low_pct:+.1f}%: not a regression beyond noise (more steps "
                "narrow the band)")
    return f"within the limit of {r.max_pct:g}%"


def regression(subject: Subject, baseline: Subject, max_pct: float) -> Measure:
    """The change of median step time from ``baseline`` to ``subject``, judged against
    ``max_pct`` beyond the noise band of the two step distributions (:mod:`.regression`)."""
    for which, s in (("baseline", baseline), ("profile", subject)):
        if s.steps.empty:
            return Measure(None, f"the {which} has no steps to compare")
    try:
        r = step_regression(per_step(baseline.steps).duration_ms,
                            per_step(subject.steps).duration_ms, max_pct)
    except ValueError as e:
        return Measure(None, str(e))
    pod = " (each its slowest host's time)" if max(host_count(baseline.steps),
                                                     host_count(subject.steps)) > 1 else ""
    words = (f"median step time {r.base_median_ms:.3f} ms over {r.base_steps} steps in the "
             f"baseline, {r.new_median_ms:.3f} ms over {r.new_steps} steps now{pod}: "
             f"{r.change_pct:+.1f}%; noise band {r.low_pct:+.1f}% to {r.high_pct:+.1f}% (the "
             f"{100 * CONFIDENCE:g}% interval of the ratio of new to baseline step times, "
             f"Mann-Whitney); {_verdict(r)}")
    details = {"baseline_median_ms": r.base_median_ms, "median_ms": r.new_median_ms,
               "baseline_steps": r.base_steps, "steps": r.new_steps,
               "band_low_pct": r.low_pct, "band_high_pct": r.high_pct}
    return Measure(r.change_pct, words, details, passed=not r.regressed)
