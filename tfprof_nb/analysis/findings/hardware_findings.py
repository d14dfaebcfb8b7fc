"""Findings from the hardware samples inside the steps (``prof.counters``; the table of
:func:`.hardware_steps.hardware_table`, which the GPU tab shows): each sentence quotes that
table's numbers.

- ``gpu_throttled``: a GPU's clock lowered for a reason other than idling or its applications
  clocks setting (NVML's clock-event reasons), or its SM clock 10% or more below the
  device's maximum in steps where it ran kernels, in at least 5% of its samples inside the
  steps (samples come at a fixed period, so that share is about the share of step time).
- ``host_cpu_saturated``: the machine's CPU at 90% or more in at least half of its samples
  inside the steps while the steps wait for input (``prof.measures``' ``input_wait_pct``: the
  devices' input wait, or on CPU-only profiles the step breakdown's input share) at least
  5% of the time.

No finding reads NVML's utilisation (any kernel resident in a window, not busy time) nor the
device memory NVML sees (the framework's preallocated pool).
"""

from __future__ import annotations

import pandas as pd

from ...constants import HIGHLY_INPUT_BOUND_PCT, MODERATELY_INPUT_BOUND_PCT
from ..runtime.unit import Analysis
from .hardware_steps import (CLOCK_LOW_WORDS, CPU_BUSY_WORDS, NORMAL_REASONS, device_context,
                             hardware_table, samples_in_steps)
from .measure_words import device_words, get, scope_tail
from .recommendations import Finding

__all__ = ["ANALYSES", "hardware_findings"]

_REASON = "clock lowered: "
_THROTTLE_FIX = ("Check the GPU's power limit, cooling and clocks (nvidia-smi -q -d "
                 "PERFORMANCE,POWER,TEMPERATURE,CLOCK): a power cap or thermal slowdown makes "
                 "the same kernels slower; compare step times across GPUs and runs.")
_CPU_FIX = ("Give the input pipeline the CPU it needs: fewer processes or threads competing on "
            "the machine, parallel and cached input preparation (tf.data's num_parallel_calls "
            "and .cache(), a loader with workers), lighter per-example work, or preprocess "
            "once ahead of training.")


def _severity(pct: float) -> str:
    return "high" if pct >= HIGHLY_INPUT_BOUND_PCT else "moderate"


def _who(host: str, device: str, many_hosts: bool) -> str:
    return f"{host} {device}" if many_hosts else device


def _value(rows: pd.DataFrame, what: str, column: str = "mean"):
    hit = rows[rows.what == what]
    return None if hit.empty else hit[column].iloc[0]


def _throttled(table: pd.DataFrame, many_hosts: bool) -> list[Finding]:
    """A finding per GPU whose clock was lowered (see the module docstring)."""
    out = []
    for (host, device), rows in table.groupby(["host", "device"], sort=False):
        reasons = rows[rows.what.str.startswith(_REASON)]
        reasons = reasons[~reasons.what.str.removeprefix(_REASON).isin(NORMAL_REASONS)]
        reasons = reasons[reasons["mean"] >= MODERATELY_INPUT_BOUND_PCT]
        low = _value(rows, CLOCK_LOW_WORDS)
        low = low if low is not None and low >= MODERATELY_INPUT_BOUND_PCT else None
        if reasons.empty and low is None:
            continue
        parts = [f"{r.what.removeprefix(_REASON)} in {r['mean']:.1f}% of its samples inside "
                 "the steps" for _, r in reasons.iterrows()]
        if low is not None:
            parts.append(f"SM clock 10% or more below its max in {low:.1f}% of its samples "
                         "in steps with kernels")
        clock, top = _value(rows, "SM clock"), _value(rows, CLOCK_LOW_WORDS, "note")
        tail = f"; SM clock mean {clock:,.0f} MHz" if clock is not None else ""
        tail += f" ({top})" if tail and top else ""
        worst = max([*reasons["mean"], low or 0.0])
        out.append(Finding(
            "gpu_throttled", f"{_who(host, device, many_hosts)} ran with its clock lowered "
            f"during the steps: {'; '.join(parts)}{tail}",
            {"throttled_samples_pct": float(worst)}, _THROTTLE_FIX, _severity(worst)))
    return out


def _cpu_saturated(table: pd.DataFrame, measures: pd.DataFrame,
                   many_hosts: bool) -> list[Finding]:
    """A finding per host whose CPU was saturated while the steps wait for input."""
    wait = get(measures, "input_wait_pct")
    if wait is None or not wait["value"] >= MODERATELY_INPUT_BOUND_PCT:
        return []
    out = []
    for host, rows in table[table.device == "host"].groupby("host", sort=False):
        busy = _value(rows, CPU_BUSY_WORDS)
        if busy is None or busy < 50:
            continue
        mean = _value(rows, "machine CPU")
        if wait["device_count"]:
            who, one = device_words(wait)
            who = f"{who} wait{'s' * one}"
        else:
            who = "the steps wait"
        out.append(Finding(
            "host_cpu_saturated", f"The CPU of host {host} was saturated during the steps: "
            f"{CPU_BUSY_WORDS} in {busy:.1f}% of its samples inside the steps (mean "
            f"{mean:.1f}%), while {who} for input {wait['value']:.1f}% of the time "
            f"{scope_tail(wait)}".rstrip(),
            {"cpu_saturated_samples_pct": float(busy), "input_wait_pct": float(wait["value"])},
            _CPU_FIX, _severity(float(wait["value"])), "input_wait_pct"))
    return out


def hardware_findings(parts: dict, counters: pd.DataFrame, steps: pd.DataFrame,
                      environment: dict, gpu_utilization: pd.DataFrame,
                      measures: pd.DataFrame) -> list[Finding]:
    """The hardware findings of a profile (none without samples inside its steps)."""
    if not len(counters) or steps is None or not len(steps):
        return []
    inside = samples_in_steps(counters, steps)
    table = hardware_table(inside, *device_context(environment, gpu_utilization))
    if table.empty:
        return []
    table = table.assign(host=table.host.astype(str), device=table.device.astype(str))
    many_hosts = table.host.nunique() > 1
    return _throttled(table[table.device != "host"], many_hosts) + \
        _cpu_saturated(table, measures, many_hosts)


ANALYSES = (Analysis("hardware_findings", combine=hardware_findings,
                     needs=("counters", "steps", "environment", "gpu_utilization",
                            "measures")),)
