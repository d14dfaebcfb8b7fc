"""``gpu_utilization``, combined from every host's ``gpu_time`` partial: per host, device,
stream and step: wall, busy and idle time by cause (the causes and busy time add up to the wall
time); the rows with stream ``"all"`` are the device as a whole (busy while any of its streams
runs a kernel); step -2 holds a device's time outside every step, step -1 its active span on a
host without steps (:mod:`.time`).  The other tables of the ``gpu_time`` partials:
:mod:`.overlap`, :mod:`.launch_latency`, :mod:`.duty_cycle`; over this one: :mod:`.stragglers`.
"""

from __future__ import annotations

import pandas as pd

from ..runtime.unit import Analysis
from .time import concat_parts, empty_utilization

__all__ = ["ANALYSES", "gpu_utilization"]


def _reasons(gpu_time: dict) -> list[str]:
    return [r for part in gpu_time.values() for r in part.reasons]


def gpu_utilization(parts: dict, gpu_time: dict) -> pd.DataFrame:
    """Busy and idle time by cause per host, device, stream and step (see module doc)."""
    table = concat_parts([p.utilization for p in gpu_time.values()], empty_utilization())
    table.attrs["reasons"] = _reasons(gpu_time) if len(table) else \
        ["no GPU or TPU activity in this profile"]
    return table


ANALYSES = (Analysis("gpu_utilization", combine=gpu_utilization, needs=("gpu_time",)),)
