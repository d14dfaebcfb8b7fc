"""The per-host analysis steps, by name: what runs where a host lives.

Every step takes a :class:`HostData` and the profile's time shift for that host (ps, so hosts
share one time axis) and returns a small, picklable partial result; the analyses' combine
functions turn the partials of all hosts into tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._native import release_free_memory
from .._native.kernels import span
from .host import HostData

__all__ = ["STEPS", "run", "host_info"]


def host_info(hd: HostData, shift_ps: int = 0) -> dict:
    """What the profile needs to know of a host without its events: sizes, times, planes
    and lines (line starts relative to the host's origin)."""
    sp = hd.space
    ev = sp.events
    n_planes = len(sp.plane_names)
    line_events = np.bincount(ev.line, minlength=len(sp.line_names))
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
            "span_ps": _span_ps(hd), "planes": planes, "lines": lines,
            "hostnames": list(sp.hostnames), "errors": list(sp.errors),
            "warnings": list(sp.warnings)}


def _span_ps(hd: HostData) -> tuple[int, int] | None:
    return span(hd.begin, hd.duration) if len(hd) else None


def _steps():
    from .framework import host_framework
    from .kernel_stats import host_kernels
    from .memory import host_memory
    from .op_stats import device_op_partial, host_op_partial
    from .steps import host_steps
    from .tf_data import host_tf_data
    from .xla_ops import host_tf_kernels, host_xla_ops

    return {"info": host_info, "steps": host_steps, "host_ops": host_op_partial,
            "device_ops": device_op_partial, "kernels": host_kernels, "memory": host_memory,
            "tf_data": host_tf_data, "framework": host_framework, "xla_ops": host_xla_ops,
            "tf_kernels": host_tf_kernels}


STEPS: dict = {}


def run(hd: HostData, step: str, shift_ps: int = 0):
    """Run the per-host analysis ``step`` on ``hd`` (times shifted by ``shift_ps``).  The
    per-event arrays the step derives are dropped after it, so a host's memory between steps
    is its decoded columns."""
    if not STEPS:
        STEPS.update(_steps())
    try:
        fn = STEPS[step]
    except KeyError:
        raise ValueError(f"unknown analysis step {step!r}; known: {sorted(STEPS)}") from None
    try:
        return fn(hd, shift_ps)
    finally:
        hd.release(keep_core=True)
        release_free_memory()
