"""``stragglers``: per step, the host and device that finished last and by how much (from the
steps and ``gpu_utilization``).

Hosts are compared on a step number only where they ran it together: every host's span of
that step overlaps every other's on the profile's axis.  Workers that do not step in lockstep
(asynchronous training, separate jobs) number their steps each their own way: their "step
1500" may lie a second apart, and the distance between them is no lag.  Such step numbers are
left out (``attrs["apart"]``, and a reason says how many).
"""

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


def _apart(steps: pd.DataFrame) -> np.ndarray:
    """The step numbers several hosts have but did not run together (some host's span of the
    step does not overlap another's)."""
    if steps.empty or "host" not in steps or steps.host.nunique() < 2:
        return np.zeros(0, np.int64)
    start = steps.start_us.to_numpy(float)
    spans = pd.DataFrame({"host": steps.host.to_numpy(), "start": start,
                          "end": start + 1e3 * steps.duration_ms.to_numpy(float)},
                         index=steps.index.to_numpy(np.int64))
    g = spans.groupby(level=0, sort=True)
    hosts, latest_start, first_end = g.host.nunique(), g.start.max(), g.end.min()
    return hosts.index[(hosts > 1) & (latest_start > first_end)].to_numpy(np.int64)


def _empty(reasons: list) -> pd.DataFrame:
    out = pd.DataFrame({c: pd.Series(dtype=object) for c in STRAGGLER_COLUMNS})
    out.attrs["finish"] = pd.DataFrame(columns=FINISH_COLUMNS)
    out.attrs["reasons"] = reasons
    return out


def _apart_reason(apart: np.ndarray) -> list:
    n = len(apart)
    return [f"{n} step number{'s' if n > 1 else ''} that several hosts have at times that do "
            f"not overlap (the hosts do not step together) {'are' if n > 1 else 'is'} not "
            "compared"] if n else []


def stragglers(parts: dict, steps: pd.DataFrame, gpu_utilization: pd.DataFrame) -> pd.DataFrame:
    """Per step seen on more than one device or host: who finished last, when, how far
    behind the median (``lag_us``) and the first (``spread_us``) finisher; hosts only where
    they ran the step together (see the module doc).
    ``attrs["finish"]`` holds every (step, host, device) end and how far behind the first."""
    ends = _finish_times(steps, gpu_utilization)
    apart = _apart(steps)
    if len(apart) and len(ends):
        ends = ends[~ends.step.isin(apart)]
    if ends.empty:
        out = _empty(_apart_reason(apart) or ["no steps with device or host end times"])
        out.attrs["apart"] = apart
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
    out = out[out.devices > 1].reset_index()[STRAGGLER_COLUMNS]
    out.attrs["finish"] = ends[FINISH_COLUMNS].reset_index(drop=True)
    out.attrs["apart"] = apart
    out.attrs["reasons"] = _apart_reason(apart)
    return out


ANALYSES = (Analysis("stragglers", combine=stragglers, needs=("steps", "gpu_utilization")),)
