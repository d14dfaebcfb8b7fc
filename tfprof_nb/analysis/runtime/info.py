"""What the profile knows of each host without its events: sizes, times, planes and lines;
and what follows from all hosts' infos (their shared time axis, global event ids).

``info`` is the one host step that runs without a time shift: the shifts come from it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .host import HostData
from .unit import Analysis, parts_dict

__all__ = ["ANALYSES", "host_info", "time_shifts", "event_offsets", "planes_table",
           "lines_table", "timing", "PLANE_COLUMNS", "LINE_COLUMNS"]

PLANE_COLUMNS = ["host", "plane", "plane_id", "lines", "events", "stats"]
LINE_COLUMNS = ["host", "plane", "line", "line_id", "display_name", "display_id", "start_us",
                "events"]


def host_info(hd: HostData, shift_ps: int = 0) -> dict:
    """One host's sizes, times, planes and lines (line starts relative to the host's own
    origin)."""
    sp = hd.space
    ev = sp.events
    n_planes = len(sp.plane_names)
    line_events = hd.line_counts
    n_events = np.bincount(sp.line_plane, weights=line_events, minlength=n_planes) \
        .astype(np.int64)
    n_lines = np.bincount(sp.line_plane, minlength=n_planes)
    planes = [{"plane": p, "plane_id": int(sp.plane_ids[i]), "lines": int(n_lines[i]),
               "events": int(n_events[i]), "stats": sp.plane_stats(i)}
              for i, p in enumerate(sp.plane_names)]
    lines = pd.DataFrame({
        "plane": [sp.plane_names[p] for p in sp.line_plane.tolist()],
        "line": sp.line_names, "line_id": sp.line_ids, "display_name": sp.line_display_names,
        "display_id": sp.line_display_ids, "start_ps": sp.line_start_ps(),
        "events": line_events})
    return {"events": len(ev), "bytes": sp.n_bytes, "path": sp.path,
            "origin_ns": sp.origin_ns(), "wall_clock": sp.origin_is_wall_clock(),
            "start_ns": sp.profile_start_ns, "stop_ns": sp.profile_stop_ns,
            "span_ps": hd.span() if len(hd) else None, "planes": planes,
            "lines": lines, "hostnames": list(sp.hostnames), "errors": list(sp.errors),
            "warnings": list(sp.warnings)}


# hosts further apart than this (ps; about 53 days) keep their own time axes: their shared
# axis would not fit int64 picoseconds
_MAX_SHIFT_PS = 2**62


def _aligned(info: dict) -> bool:
    """Whether hosts share one time axis: every host's origin is a wall-clock time, and they
    are close enough in time for one axis in picoseconds."""
    if not all(i["wall_clock"] for i in info.values()):
        return False
    origins = [i["origin_ns"] for i in info.values()]
    return (max(origins) - min(origins)) * 1000 < _MAX_SHIFT_PS


def time_shifts(parts: dict, info: dict) -> dict[str, int]:
    """{host: ps to add to its times}: hosts share one time axis, starting at the earliest
    host's origin, when they can (see ``_aligned``); otherwise each host keeps its own
    (shift 0)."""
    if not _aligned(info):
        return {h: 0 for h in info}
    origin = min(i["origin_ns"] for i in info.values())
    return {h: (i["origin_ns"] - origin) * 1000 for h, i in info.items()}


def event_offsets(parts: dict, info: dict) -> dict[str, int]:
    """{host: global event id of its first event}, hosts in order."""
    offsets, total = {}, 0
    for host, i in info.items():
        offsets[host] = total
        total += i["events"]
    return offsets


def planes_table(parts: dict, info: dict) -> pd.DataFrame:
    """One row per plane: host, plane, plane_id, lines, events, and its plane-level stats."""
    rows = [{"host": h, **p} for h, i in info.items() for p in i["planes"]]
    return pd.DataFrame(rows, columns=PLANE_COLUMNS)


def lines_table(parts: dict, info: dict, shifts: dict) -> pd.DataFrame:
    """One row per line (thread or stream): host, plane, line, line_id, display name, display
    id, start_us (on the profile's time axis) and events."""
    frames = [pd.DataFrame({
        "host": h, "plane": i["lines"].plane, "line": i["lines"].line,
        "line_id": i["lines"].line_id, "display_name": i["lines"].display_name,
        "display_id": i["lines"].display_id,
        "start_us": (i["lines"].start_ps + shifts[h]) / 1e6, "events": i["lines"].events})
        for h, i in info.items()]
    return pd.concat(frames, ignore_index=True)[LINE_COLUMNS] if frames else \
        pd.DataFrame(columns=LINE_COLUMNS)


def timing(parts: dict, info: dict, shifts: dict) -> dict:
    """The profile's ``start_time`` and ``stop_time`` (UTC wall clock, None when unknown),
    ``duration_us`` (stop minus start, else the span of the events), ``n_events`` and
    ``aligned`` (whether every host's times are wall-clock times on one axis)."""
    starts = [i["start_ns"] for i in info.values() if i["start_ns"]]
    stops = [i["stop_ns"] for i in info.values() if i["stop_ns"]]
    start = pd.Timestamp(min(starts), unit="ns", tz="UTC") if starts else None
    stop = pd.Timestamp(max(stops), unit="ns", tz="UTC") if stops else None
    if start is not None and stop is not None:
        duration = (stop - start).value / 1e3
    else:
        spans = [(i["span_ps"][0] + shifts[h], i["span_ps"][1] + shifts[h])
                 for h, i in info.items() if i["span_ps"] is not None]
        duration = (max(b for _, b in spans) - min(a for a, _ in spans)) / 1e6 if spans else 0.0
    return {"start_time": start, "stop_time": stop, "duration_us": duration,
            "n_events": sum(i["events"] for i in info.values()),
            "aligned": _aligned(info)}


def summary_text(parts: dict, info: dict, timing: dict) -> str:
    """A few lines describing a profile: hosts, events, duration, planes."""
    lines = [f"Profile: {len(info)} host(s), {timing['n_events']:,} events, "
             f"{timing['duration_us'] / 1e3:,.1f} ms"]
    if timing["start_time"] is not None:
        lines.append(f"  captured {timing['start_time']:%Y-%m-%d %H:%M:%S} UTC")
    for host, i in info.items():
        planes = ", ".join(f"{p['plane']} ({p['events']:,})" for p in i["planes"])
        lines.append(f"  {host}: {planes}")
    return "\n".join(lines)


ANALYSES = (
    Analysis("info", host=host_info, combine=parts_dict, shifted=False, host_cost=0.1),
    Analysis("shifts", combine=time_shifts, needs=("info",)),
    Analysis("event_offsets", combine=event_offsets, needs=("info",)),
    Analysis("planes", combine=planes_table, needs=("info",)),
    Analysis("lines", combine=lines_table, needs=("info", "shifts")),
    Analysis("timing", combine=timing, needs=("info", "shifts")),
    Analysis("summary", combine=summary_text, needs=("info", "timing")),
)
