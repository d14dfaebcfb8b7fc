"""When the profile ran and how much it holds (``timing``), and its few lines of summary
(``summary``), from every host's ``info`` on the profile's time axis."""

from __future__ import annotations

import pandas as pd

from ..runtime.info import aligned
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "timing", "summary_text"]


def timing(parts: dict, info: dict, shifts: dict) -> dict:
    """The profile's ``start_time`` and ``stop_time`` (UTC wall clock, None when unknown),
    ``duration_us`` (stop minus start, else the span of the events), ``events_span_us``
    (the first event's start and the last one's end on the profile's time axis, as
    ``prof.events.start_us``; None without events), ``n_events`` and ``aligned`` (whether
    every host's times are wall-clock times on one axis)."""
    starts = [i["start_ns"] for i in info.values() if i["start_ns"]]
    stops = [i["stop_ns"] for i in info.values() if i["stop_ns"]]
    start = pd.Timestamp(min(starts), unit="ns", tz="UTC") if starts else None
    stop = pd.Timestamp(max(stops), unit="ns", tz="UTC") if stops else None
    spans = [(i["span_ps"][0] + shifts[h], i["span_ps"][1] + shifts[h])
             for h, i in info.items() if i["span_ps"] is not None]
    events = (min(a for a, _ in spans) / 1e6, max(b for _, b in spans) / 1e6) if spans else None
    if start is not None and stop is not None:
        duration = (stop - start).value / 1e3
    else:
        duration = events[1] - events[0] if events else 0.0
    return {"start_time": start, "stop_time": stop, "duration_us": duration,
            "events_span_us": events,
            "n_events": sum(i["events"] for i in info.values()),
            "aligned": aligned(info)}


def summary_text(parts: dict, info: dict, timing: dict) -> str:
    """A few lines describing a profile: hosts, events, duration, planes."""
    lines = [f"Profile: {len(info)} host{'s' * (len(info) != 1)}, {timing['n_events']:,} events, "
             f"{timing['duration_us'] / 1e3:,.1f} ms"]
    if timing["start_time"] is not None:
        lines.append(f"  captured {timing['start_time']:%Y-%m-%d %H:%M:%S} UTC")
    for host, i in info.items():
        planes = ", ".join(f"{p['plane']} ({p['events']:,})" for p in i["planes"])
        lines.append(f"  {host}: {planes}")
    return "\n".join(lines)


ANALYSES = (
    Analysis("timing", combine=timing, needs=("info", "shifts")),
    Analysis("summary", combine=summary_text, needs=("info", "timing")),
)
