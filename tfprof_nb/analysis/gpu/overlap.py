"""``gpu_overlap``, combined from every host's ``gpu_time`` partial: per device and step:
compute, collective time, the collective time hidden under compute and the exposed rest."""

from __future__ import annotations

import pandas as pd

from ..._words import counted
from ..runtime.unit import Analysis
from .time import concat_parts, empty_overlap

__all__ = ["ANALYSES", "gpu_overlap", "no_collectives_words"]


def gpu_overlap(parts: dict, gpu_time: dict) -> pd.DataFrame:
    """Compute/communication overlap per host, device and step (see module doc); with no
    collective time in any step, ``attrs["reasons"]`` says so, and whether collectives ran
    outside every step (the table's scope is the steps)."""
    table = concat_parts([p.overlap for p in gpu_time.values()], empty_overlap())
    if len(table) and not (table.collective_us > 0).any():
        outside = _collectives_outside(gpu_time)
        table.attrs["collectives_outside"] = outside
        table.attrs["reasons"] = [no_collectives_words(
            outside, "collectives (NCCL/RCCL kernels, XLA collectives, peer copies)", "device")]
    return table


def _collectives_outside(gpu_time: dict) -> dict:
    """{"ms", "devices"}: the collective time of the devices that have any (none in a step)."""
    devices = [p.devices for p in gpu_time.values() if "collective_us" in p.devices]
    per_device = pd.concat(devices).collective_us if devices else pd.Series(dtype=float)
    per_device = per_device[per_device > 0]
    return {"ms": float(per_device.sum()) / 1e3, "devices": len(per_device)}


def no_collectives_words(outside: dict, kinds: str, device: str) -> str:
    """Why the steps hold no collective time: none on any ``device``, or (``outside``) how
    much ran outside every step."""
    if not outside.get("devices"):
        return f"no {kinds} on any {device}"
    return (f"no {kinds} inside the steps: {outside['ms']:,.1f} ms of them ran outside every "
            f"step, on {counted(outside['devices'], device)}")


ANALYSES = (Analysis("gpu_overlap", combine=gpu_overlap, needs=("gpu_time",)),)
