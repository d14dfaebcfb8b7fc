"""Kernel launch latency and queue length of one host's devices.

A launch is linked to its kernel (or copy) by ``correlation_id`` (see :mod:`.activity`).
Its latency is the kernel's start minus the start of the host's launch call (the call's own
duration included; clocks of host and device are aligned by the profiler, so a few negative
values can appear).  A call that starts several kernels (``cuGraphLaunch``: a CUDA graph, as
XLA's command buffers run) gives each of them its start: their latency runs from that one call
to each kernel's start, so it grows along the graph (``graph_launches`` counts them).  The
queue of a device at time t counts the kernels launched (call started) but not yet started,
so its integral over time is the sum of the latencies.

Each host's tables (:func:`launch_tables`) travel in its ``gpu_time`` partial; the
``launch_latency`` unit puts every host's together (:class:`LaunchLatency`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..._native.kernels import argsort
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from .activity import NO_LAUNCH, DeviceActivity, stream_names

__all__ = ["ANALYSES", "LaunchLatency", "launch_latency", "launch_tables", "LATENCY_EDGES_US", "PER_KERNEL_COLUMNS", "HISTOGRAM_COLUMNS",
           "OUTLIER_COLUMNS", "QUEUE_COLUMNS", "QUEUE_POINTS", "empty_launch_tables"]

LATENCY_EDGES_US = np.array([-np.inf, 0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000,
                             5_000, 10_000, np.inf])
QUEUE_POINTS = 2000  # per device; longer queues keep each time bucket's maximum
MAX_OUTLIERS = 50
PER_KERNEL_COLUMNS = ["host", "kernel_name", "launches", "graph_launches", "mean_latency_us",
                      "p50_latency_us", "p90_latency_us", "p99_latency_us", "max_latency_us",
                      "mean_launch_call_us", "mean_duration_us"]
HISTOGRAM_COLUMNS = ["host", "device", "bin", "lo_us", "hi_us", "launches"]
OUTLIER_COLUMNS = ["host", "device", "stream", "kernel_name", "launch_us", "start_us",
                   "latency_us", "duration_us"]
QUEUE_COLUMNS = ["host", "device", "time_us", "queued"]


def _bin_labels() -> list[str]:
    e = LATENCY_EDGES_US
    out = ["< 0"]
    for lo, hi in zip(e[1:-2], e[2:-1]):
        out.append(f"{lo:g}-{hi:g}")
    out.append(f">= {e[-2]:g}")
    return out


def _empty(columns, ints=("launches", "graph_launches", "queued")) -> pd.DataFrame:
    text = ("host", "device", "stream", "kernel_name", "bin")
    return pd.DataFrame({c: np.empty(0, object if c in text else
                                     "int64" if c in ints else "float64") for c in columns})


def empty_launch_tables() -> dict:
    """The launch tables without rows."""
    return {"per_kernel": _empty(PER_KERNEL_COLUMNS), "histogram": _empty(HISTOGRAM_COLUMNS),
            "outliers": _empty(OUTLIER_COLUMNS), "queue": _empty(QUEUE_COLUMNS)}


def _quantile(sorted_values: np.ndarray, start: np.ndarray, count: np.ndarray,
              q: float) -> np.ndarray:
    """Linear-interpolated quantile ``q`` of each group of ``sorted_values`` (groups are
    contiguous runs ``start``..``start+count``, each sorted)."""
    pos = start + q * (count - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, start + count - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def _per_kernel(host: str, codes: np.ndarray, names: np.ndarray, latency, call,
                duration, latency_ps: np.ndarray, shared: np.ndarray) -> pd.DataFrame:
    """Latency statistics per kernel name (``codes``: name code per launch; ``names``: the
    name of each code; ``latency_ps``: the latencies in integer ps, ordered as ``latency``;
    ``shared``: whether the launch's call started other kernels too)."""
    # lexsort((latency, codes)), both keys sorted as integers
    order = argsort(np.asarray(codes, np.int32), latency_ps)
    codes, latency = codes[order], latency[order]
    call, duration, shared = call[order], duration[order], shared[order]
    start = np.flatnonzero(np.diff(codes, prepend=codes[0] - 1))
    count = np.diff(np.append(start, len(codes)))
    out = pd.DataFrame({
        "host": host, "kernel_name": names[codes[start]], "launches": count,
        "graph_launches": np.add.reduceat(shared.astype(np.int64), start),
        "mean_latency_us": np.add.reduceat(latency, start) / count,
        "p50_latency_us": _quantile(latency, start, count, 0.5),
        "p90_latency_us": _quantile(latency, start, count, 0.9),
        "p99_latency_us": _quantile(latency, start, count, 0.99),
        "max_latency_us": latency[start + count - 1],
        "mean_launch_call_us": np.add.reduceat(call, start) / count,
        "mean_duration_us": np.add.reduceat(duration, start) / count})
    return out.sort_values(["mean_latency_us", "kernel_name"], ascending=[False, True],
                           kind="stable").reset_index(drop=True)


def _histogram(host: str, plane_names: np.ndarray, device: np.ndarray,
               latency: np.ndarray) -> pd.DataFrame:
    """Launches per latency bin of each device (``device``: plane index per launch; devices
    in order of first launch)."""
    labels = _bin_labels()
    e = LATENCY_EDGES_US
    frames = []
    for dev in pd.unique(device):
        counts = np.histogram(latency[device == dev], bins=e)[0]
        frames.append(pd.DataFrame({"host": host, "device": plane_names[dev], "bin": labels,
                                    "lo_us": e[:-1], "hi_us": e[1:], "launches": counts}))
    return pd.concat(frames, ignore_index=True) if frames else _empty(HISTOGRAM_COLUMNS)


def _outliers(latency: np.ndarray) -> np.ndarray:
    """Positions of the launches far above the rest (above Q3 + 3 IQR), slowest first, at
    most MAX_OUTLIERS."""
    if len(latency) < 4:
        return np.empty(0, np.int64)
    q1, q3 = np.percentile(latency, [25, 75])
    far = np.flatnonzero(latency > q3 + 3 * (q3 - q1))
    return far[np.argsort(-latency[far], kind="stable")][:MAX_OUTLIERS]


def _queue(host: str, device: str, launch: np.ndarray, start: np.ndarray,
           shift_ps: int) -> pd.DataFrame:
    """Kernels launched and not started, as a step function (each time: the count from
    then on), at most QUEUE_POINTS points (each bucket's maximum)."""
    # one sorted int64 key per change: 2 * time, + 1 for a launch (at one instant, starts
    # before launches); times are ps of one profile, far inside int64's range when doubled
    # (millions of kernels: the arrays are changed in place, the count kept in int32)
    key = np.concatenate([start * 2, np.minimum(launch, start) * 2 + 1])
    key.sort()
    step = (key & 1).astype(np.int8)
    step *= 2
    step -= 1
    queued = np.cumsum(step, dtype=np.int32)
    del step
    times = np.right_shift(key, 1, out=key)
    last = np.ones(len(times), bool)
    np.not_equal(times[1:], times[:-1], out=last[:-1])
    times = times[last]
    queued = queued[last]
    del key, last
    if len(times) > QUEUE_POINTS:
        bucket = times - times[0]
        bucket *= QUEUE_POINTS - 1
        bucket //= max(int(times[-1] - times[0]), 1)
        change = np.ones(len(bucket), bool)
        np.not_equal(bucket[1:], bucket[:-1], out=change[1:])
        del bucket
        first = np.flatnonzero(change)
        queued = np.maximum.reduceat(queued, first)
        times = times[first]
    return pd.DataFrame({"host": host, "device": device, "time_us": (times + shift_ps) / 1e6,
                         "queued": queued.astype(np.int64)})


def launch_tables(hd: HostData, act: DeviceActivity, shift_ps: int) -> dict:
    """``per_kernel`` latency statistics, latency ``histogram`` per device (LATENCY_EDGES_US),
    the ``outliers`` and the ``queue`` length per device, of one host."""
    linked = act.launch != NO_LAUNCH
    if not linked.any():
        return empty_launch_tables()
    a = act.take(linked)
    latency_ps = a.begin - a.launch
    latency = latency_ps / 1e6
    call = (a.launch_end - a.launch) / 1e6
    duration = (a.end - a.begin) / 1e6
    plane_names = np.asarray(hd.plane_names, dtype=object)
    far = _outliers(latency)
    outliers = pd.DataFrame({
        "host": hd.name, "device": plane_names[a.device[far]],
        "stream": stream_names(hd)[a.stream[far]],
        "kernel_name": hd.name_of(a.rows[far]), "launch_us": (a.launch[far] + shift_ps) / 1e6,
        "start_us": (a.begin[far] + shift_ps) / 1e6, "latency_us": latency[far],
        "duration_us": duration[far]}, columns=OUTLIER_COLUMNS)
    queues = [_queue(hd.name, hd.plane_names[p], a.launch[a.device == p],
                     a.begin[a.device == p], shift_ps) for p in np.unique(a.device).tolist()]
    # launches whose call started other kernels too (a graph launch): one call start each
    _, call_of, per_call = np.unique(a.launch, return_inverse=True, return_counts=True)
    per_kernel = _per_kernel(hd.name, hd.name_code[a.rows].astype(np.int64), hd.names,
                             latency, call, duration, latency_ps, per_call[call_of] > 1)
    return {"per_kernel": per_kernel,
            "histogram": _histogram(hd.name, plane_names, a.device, latency),
            "outliers": outliers,
            "queue": pd.concat(queues, ignore_index=True)}


@dataclass
class LaunchLatency:
    """Kernel launch latency (launch call start to kernel start), from correlation ids.

    ``per_kernel``: one row per host and kernel name (latency statistics in us;
    ``graph_launches``: its launches by a call that started several kernels, a CUDA graph);
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
    tables = {k: [p.launch[k] for p in gpu_time.values() if len(p.launch[k])]
              for k in empty_launch_tables()}
    tables = {k: pd.concat(f, ignore_index=True) if f else empty_launch_tables()[k]
              for k, f in tables.items()}
    reasons = [] if len(tables["per_kernel"]) else [
        "no kernel launches linked to device activity (no correlation ids recorded)"]
    return LaunchLatency(**tables, reasons=reasons + launch_links.attrs.get("reasons", []))


ANALYSES = (Analysis("launch_latency", combine=launch_latency, needs=("gpu_time", "launch_links")),)
