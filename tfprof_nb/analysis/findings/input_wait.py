"""The share of step time waiting for input that sentences quote (``input_wait``), from one
source, so that a card, a statement and a finding about it agree.

With GPUs computing in the steps, the devices' own accounting (:mod:`..gpu.gpu_time`: the
device idles and the host fetches input before it launches the next kernel) over the devices'
step time; else the step breakdown's input share (the reference's, which on GPUs counts only
copies named ``MemcpyHToD`` and the device waiting on the host).  Where the two differ,
``statement`` says so.  (The other share quoted from one source: :mod:`.precision`.)
"""

from __future__ import annotations

import pandas as pd

from ...constants import GPU_PLANE_PREFIX
from ..gpu.gpu_time import ALL_STREAMS, step_rows
from ..runtime.unit import Analysis
from ..tf.input_pipeline import bottleneck_verdicts

__all__ = ["ANALYSES", "active_devices", "input_wait"]


def active_devices(util: pd.DataFrame) -> pd.DataFrame:
    """The GPUs' own rows (stream "all") over the steps (or the profile window) of the GPUs
    that compute in some step; not their rows outside the steps, nor TPUs (their idle time
    has no launch to blame: the overview's TPU figures say it)."""
    if not len(util):
        return util
    dev = step_rows(util[(util.stream == ALL_STREAMS)
                         & util.device.astype(str).str.startswith(GPU_PLANE_PREFIX)])
    return dev[dev.groupby(["host", "device"]).busy_us.transform("sum") > 0]


def _gpu_input(util: pd.DataFrame) -> float | None:
    """Input wait of the GPUs computing in the steps, in % of their step time (None: none)."""
    dev = active_devices(util)
    dev = dev[dev.step >= 0] if len(dev) else dev
    wall = float(dev.wall_us.sum()) if len(dev) else 0.0
    return 100 * float(dev.input_us.sum()) / wall if wall > 0 else None


def input_wait(parts: dict, steps: pd.DataFrame, gpu_utilization: pd.DataFrame) -> dict:
    """The share of step time waiting for input from one source (see the module doc):
    ``pct``, ``source`` ("devices" or "steps"), ``steps_pct`` (the step breakdown's share)
    and, where they differ, ``statement``; {} without steps."""
    verdict = bottleneck_verdicts(steps)
    if verdict.get("classification") in (None, "unknown"):
        return {}
    steps_pct = float(verdict["input_pct"])
    gpu_pct = _gpu_input(gpu_utilization)
    if gpu_pct is None:
        return {"pct": steps_pct, "source": "steps", "steps_pct": steps_pct}
    out = {"pct": gpu_pct, "source": "devices", "steps_pct": steps_pct}
    if f"{gpu_pct:.1f}" != f"{steps_pct:.1f}":
        out["statement"] = (
            f"The GPUs wait for input {gpu_pct:.1f}% of their step time (idle while the host "
            "fetches input before launching their next kernel); the step-time breakdown, "
            f"which follows XProf's rule, counts {steps_pct:.1f}% (on GPUs it counts only "
            "copies named MemcpyHToD and the device waiting on the host).")
    return out


ANALYSES = (Analysis("input_wait", combine=input_wait, needs=("steps", "gpu_utilization")),)
