"""``stragglers``: per step, the host and device that finished last and by how much (from the
steps and ``gpu_utilization``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.unit import Analysis
from .time import ALL_STREAMS

__all__ = ["ANALYSES", "STRAGGLER_COLUMNS", "FINISH_COLUMNS", "stragglers"]

STRAGGLER_COLUMNS = ["step", "hosts", "devices", "last_host", "last_device", "last_end_us",
                     "first_end_us", "median_end_us", "lag_us", "spread_us"]
FINISH_COLUMNS = ["step", "host", "device", "end_us", "behind_us"]


def _finish_times(steps: pd.DataFrame, util: pd.DataFrame) -> pd.DataFrame:
    """When each host's devices (or the host itself, without devices) finished each step."""
    dev = util[(util.stream == ALL_STREAMS) & util.last_end_us.notna() & (util.step >= 0)]
    ends = dev[["step", "host", "device", "last_end_us"]].rename(columns={"last_end_us":
                                                                          "end_us"})
    gpu_hosts = set(dev.host)
    own = steps[~steps.host.isin(gpu_hosts)] if len(steps) else steps
    host_ends = pd.DataFrame({"step": own.index.to_numpy(np.int64), "host": own.host,
                              "device": "host",
                              "end_us": own.start_us + 1e3 * own.duration_ms}) \
        if len(own) else ends.iloc[:0]
    return pd.concat([ends, host_ends], ignore_index=True)


def stragglers(parts: dict, steps: pd.DataFrame, gpu_utilization: pd.DataFrame) -> pd.DataFrame:
    """Per step seen on more than one device or host: who finished last, when, how far
    behind the median (``lag_us``) and the first (``spread_us``) finisher.
    ``attrs["finish"]`` holds every (step, host, device) end and how far behind the first."""
    ends = _finish_times(steps, gpu_utilization)
    if ends.empty:
        out = pd.DataFrame({c: pd.Series(dtype=object) for c in STRAGGLER_COLUMNS})
        out.attrs["finish"] = pd.DataFrame(columns=FINISH_COLUMNS)
        out.attrs["reasons"] = ["no steps with device or host end times"]
        return out
    ends = ends.sort_values(["step", "end_us", "host", "device"], kind="stable")
    g = ends.groupby("step", sort=True)
    ends["behind_us"] = ends.end_us - g.end_us.transform("min")
    last = g.tail(1).set_index("step")
    out = pd.DataFrame({
        "hosts": g.host.nunique(), "devices": g.size(), "last_host": last.host,
        "last_device": last.device, "last_end_us": last.end_us,
        "first_end_us": g.end_us.min(), "median_end_us": g.end_us.median()})
    out["lag_us"] = out.last_end_us - out.median_end_us
    out["spread_us"] = out.last_end_us - out.first_end_us
    out = out[out.devices > 1].reset_index()
    out.attrs["finish"] = ends[FINISH_COLUMNS].reset_index(drop=True)
    return out[STRAGGLER_COLUMNS]


ANALYSES = (Analysis("stragglers", combine=stragglers, needs=("steps", "gpu_utilization")),)
