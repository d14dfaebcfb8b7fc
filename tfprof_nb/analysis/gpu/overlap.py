"""``gpu_overlap``, combined from every host's ``gpu_time`` partial: per device and step:
compute, collective time, the collective time hidden under compute and the exposed rest."""

from __future__ import annotations

import pandas as pd

from ..runtime.unit import Analysis
from .time import concat_parts, empty_overlap

__all__ = ["ANALYSES", "gpu_overlap"]


def gpu_overlap(parts: dict, gpu_time: dict) -> pd.DataFrame:
    """Compute/communication overlap per host, device and step (see module doc)."""
    table = concat_parts([p.overlap for p in gpu_time.values()], empty_overlap())
    if len(table) and not (table.collective_us > 0).any():
        table.attrs["reasons"] = ["no collectives (NCCL/RCCL kernels, XLA collectives, peer "
                                  "copies) on any device"]
    return table


ANALYSES = (Analysis("gpu_overlap", combine=gpu_overlap, needs=("gpu_time",)),)
