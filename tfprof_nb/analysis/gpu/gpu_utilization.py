"""The profile-wide GPU tables, combined from every host's ``gpu_time`` partial.

* ``gpu_utilization``: per host, device, stream and step: wall, busy and idle time by cause
  (the causes and busy time add up to the wall time); the rows with stream ``"all"`` are the
  device as a whole (busy while any of its streams runs a kernel); step -2 holds a device's
  time outside every step, step -1 its active span on a host without steps (:mod:`.gpu_time`).
* ``gpu_overlap``: per device and step: compute, collective time, the collective time hidden
  under compute and the exposed rest.
* ``launch_latency``: launch-to-start latency per kernel, its histogram per device, the
  outliers and the queue of launched, not yet started kernels over time.
* ``duty_cycle``: per device: busy time over the span from its first to its last activity;
  ``attrs["device_duty_cycle_pct"]`` combines the devices as xprof's overview does.
* ``stragglers``: per step, the host and device that finished last and by how much.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..runtime.unit import Analysis
from .gpu_launch import empty_launch_tables
from .gpu_time import ALL_STREAMS, empty_overlap, empty_utilization

__all__ = ["ANALYSES", "LaunchLatency", "STRAGGLER_COLUMNS", "FINISH_COLUMNS",
           "gpu_utilization", "gpu_overlap", "launch_latency", "duty_cycle", "stragglers"]

STRAGGLER_COLUMNS = ["step", "hosts", "devices", "last_host", "last_device", "last_end_us",
                     "first_end_us", "median_end_us", "lag_us", "spread_us"]
FINISH_COLUMNS = ["step", "host", "device", "end_us", "behind_us"]


def _reasons(gpu_time: dict) -> list[str]:
    return [r for part in gpu_time.values() for r in part.reasons]


def _concat(frames: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else empty


def gpu_utilization(parts: dict, gpu_time: dict) -> pd.DataFrame:
    """Busy and idle time by cause per host, device, stream and step (see module doc)."""
    table = _concat([p.utilization for p in gpu_time.values()], empty_utilization())
    table.attrs["reasons"] = _reasons(gpu_time) if len(table) else \
        ["no GPU or TPU activity in this profile"]
    return table


def gpu_overlap(parts: dict, gpu_time: dict) -> pd.DataFrame:
    """Compute/communication overlap per host, device and step (see module doc)."""
    table = _concat([p.overlap for p in gpu_time.values()], empty_overlap())
    if len(table) and not (table.collective_us > 0).any():
        table.attrs["reasons"] = ["no collectives (NCCL/RCCL kernels, XLA collectives, peer "
                                  "copies) on any device"]
    return table


@dataclass
class LaunchLatency:
    """Kernel launch latency (launch call start to kernel start), from correlation ids.

    ``per_kernel``: one row per host and kernel name (latency statistics in us);
    ``histogram``: launches per latency bin and device; ``outliers``: the slowest launches
    far above the rest (Q3 + 3 IQR); ``queue``: kernels launched and not started, per device
    over time; ``reasons`` says what is missing."""

    per_kernel: pd.DataFrame
    histogram: pd.DataFrame
    outliers: pd.DataFrame
    queue: pd.DataFrame
    reasons: list = field(default_factory=list)

    def __repr__(self) -> str:
        n = int(self.per_kernel.launches.sum()) if len(self.per_kernel) else 0
        return f"<LaunchLatency: {n:,} linked launches, {len(self.outliers)} outliers>"


def launch_latency(parts: dict, gpu_time: dict, launch_links: pd.DataFrame) -> LaunchLatency:
    """Every host's launch tables together (the reasons say which launches repeat an
    earlier launch's correlation id)."""
    tables = {k: _concat([p.launch[k] for p in gpu_time.values()], v)
              for k, v in empty_launch_tables().items()}
    reasons = [] if len(tables["per_kernel"]) else [
        "no kernel launches linked to device activity (no correlation ids recorded)"]
    return LaunchLatency(**tables, reasons=reasons + launch_links.attrs.get("reasons", []))


def duty_cycle(parts: dict, gpu_time: dict) -> pd.DataFrame:
    """Per device: busy time over its active span, in %; ``attrs["device_duty_cycle_pct"]``
    is the devices' busy time over their spans summed (xprof's overview definition)."""
    dev = _concat([p.devices for p in gpu_time.values()],
                  pd.DataFrame(columns=["host", "device", "busy_us", "span_us"]))
    dev = dev[["host", "device", "kernels", "kernels_under_10us", "copies", "launches_linked",
               "busy_us", "span_us"]] if len(dev) else dev
    dev = dev.assign(duty_cycle_pct=np.divide(
        100 * dev.busy_us.astype(float), dev.span_us.astype(float),
        out=np.zeros(len(dev)), where=dev.span_us.astype(float) > 0))
    span = float(dev.span_us.sum()) if len(dev) else 0.0
    dev.attrs["device_duty_cycle_pct"] = 100 * float(dev.busy_us.sum()) / span if span else None
    return dev


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


ANALYSES = (
    Analysis("gpu_utilization", combine=gpu_utilization, needs=("gpu_time",)),
    Analysis("gpu_overlap", combine=gpu_overlap, needs=("gpu_time",)),
    Analysis("launch_latency", combine=launch_latency, needs=("gpu_time", "launch_links")),
    Analysis("duty_cycle", combine=duty_cycle, needs=("gpu_time",)),
    Analysis("stragglers", combine=stragglers, needs=("steps", "gpu_utilization")),
)
