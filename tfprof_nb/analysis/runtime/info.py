"""What the profile knows of each host without its events (``info``: sizes, times, planes and
lines) and the time axis the hosts share (``shifts``): the host facts the runtime itself
stands on.  The tables made from the infos are units of ``trace`` (``planes``, ``lines``,
``event_offsets``, ``timing``, ``summary``).

``info`` is the one host step that runs without a time shift: the shifts come from it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hostdata.host import HostData
from .unit import Analysis, parts_dict

__all__ = ["ANALYSES", "host_info", "time_shifts", "aligned"]


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


def aligned(info: dict) -> bool:
    """Whether hosts share one time axis: every host's origin is a wall-clock time, and they
    are close enough in time for one axis in picoseconds."""
    if not all(i["wall_clock"] for i in info.values()):
        return False
    origins = [i["origin_ns"] for i in info.values()]
    return (max(origins) - min(origins)) * 1000 < _MAX_SHIFT_PS


def time_shifts(parts: dict, info: dict) -> dict[str, int]:
    """{host: ps to add to its times}: hosts share one time axis, starting at the earliest
    host's origin, when they can (see ``aligned``); otherwise each host keeps its own
    (shift 0)."""
    if not aligned(info):
        return {h: 0 for h in info}
    origin = min(i["origin_ns"] for i in info.values())
    return {h: (i["origin_ns"] - origin) * 1000 for h, i in info.items()}


ANALYSES = (
    Analysis("info", host=host_info, combine=parts_dict, shifted=False, host_cost=0.1),
    Analysis("shifts", combine=time_shifts, needs=("info",)),
)
