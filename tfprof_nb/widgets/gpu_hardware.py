"""The GPU tab's "what the trace lacks": the hardware samples inside the steps
(``prof.counters``; see :mod:`..analysis.findings.hardware_steps`): per device its clocks and
why they were lowered, power, temperature, bus traffic and errors, per host its CPU and memory,
as a table and a figure per step.  A profile without samples gets none of it (the tab as it
was)."""

from __future__ import annotations

import pandas as pd

from .._words import counted
from ..analysis.findings.hardware_steps import (NOT_IN_TABLE, device_context, hardware_table,
                                                samples_in_steps)
from .hardware_tables import counters_of
from .traits import TableData

__all__ = ["hardware_state"]

_TITLE = "What the trace lacks: the hardware in the steps"


def _sources(counters: pd.DataFrame) -> str:
    """The sources of the samples, in words."""
    words = {"sampler:nvml": "NVML", "sampler:psutil": "psutil", "sampler:libtpu": "libtpu",
             "sampler:procfs": "/proc (host CPU and memory)",
             "profile:_counters_": "the profile's counter lines (PM sampling)"}
    found = [words.get(s, s) for s in sorted(set(counters["source"].astype(str)))]
    return ", ".join(found)


def _series_words(inside: pd.DataFrame) -> str:
    """", over 18 counters: the table's rows give 16 of them (...), not the device memory NVML
    sees (memory_used_bytes, memory_total_bytes: 32 samples)": how the samples counted relate
    to the table's rows (a counter's samples column counts its own; a share of a counter's
    samples is a row of its own, a clock-event reason too)."""
    if not len(inside):
        return ""
    keys = inside.groupby(["host", "device", "counter"], observed=True).size()
    left = keys[keys.index.get_level_values("counter").astype(str).isin(NOT_IN_TABLE)]
    said = f", over {counted(len(keys), 'counter')}"
    if left.empty:
        return said + " (the table's samples column counts each one's)"
    names = ", ".join(sorted({str(c) for c in left.index.get_level_values("counter")}))
    return (f"{said}: the table gives {len(keys) - len(left)} of them (its samples column "
            f"counts each one's), not the device memory NVML sees ({names}: "
            f"{counted(int(left.sum()), 'sample')}; the framework's pool, not what the "
            "program uses)")


def _notes(counters: pd.DataFrame, inside: pd.DataFrame, steps: int) -> list[str]:
    """What the table covers, the sampler's period and what it could not sample, and what
    NVML's utilisation is."""
    period = counters.attrs.get("period_ms", {})
    every = ", ".join(f"{h} every {p:g} ms" for h, p in period.items()) if period else ""
    scope = f"inside the {steps} steps" if steps else "over the whole capture (no steps)"
    out = [f"Hardware samples {scope}: {len(inside):,} of {len(counters):,}"
           f"{_series_words(inside)} ({_sources(counters)}"
           f"{'; sampler ' + every if every else ''}). Mean and max of the samples; what the "
           "trace does not record."]
    for host, missing in counters.attrs.get("notes", {}).items():
        out += [f"{host}: {note}." for note in missing]
    if (counters["counter"].astype(str) == "gpu_util_pct").any():
        out.append("NVML utilisation is the share of NVML's sample window (1/6 s to 1 s) with "
                   "any kernel resident, not the device's busy time: the kernels' own times "
                   "give that (the devices' table above). NVML updates it once a window, so "
                   "over steps shorter than its window it can read 0 while kernels ran.")
    return out


def hardware_state(prof) -> dict:
    """The GPU view's ``hardware`` table, ``hardware_figure`` and ``hardware_notes``: empty
    without samples."""
    counters = counters_of(prof)
    if not len(counters):
        return {"hardware": TableData(pd.DataFrame()), "hardware_figure": {},
                "hardware_notes": []}
    try:
        steps = prof.steps
    except Exception:  # no steps: the samples of the whole capture (the notes say so)
        steps = None
    inside = samples_in_steps(counters, steps)
    has_steps = steps is not None and len(steps) > 0
    table = hardware_table(inside, *device_context(prof.result("environment"),
                                                   prof.gpu_utilization))
    if table["host"].nunique() <= 1:
        table = table.drop(columns="host")
    figure = prof.plot.hardware() if has_steps and len(inside) else {}
    return {"hardware": TableData(table, _TITLE, "what", 50),
            "hardware_figure": figure,
            "hardware_notes": _notes(counters, inside, len(steps) if has_steps else 0)}
