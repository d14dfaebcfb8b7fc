"""The trace viewer's counter tracks: values over time drawn as filled steps under their
track's peak (``js/src/timeline/counters.ts``).

- memory in use per allocator (``prof.memory_timeline``: its ``in_use_bytes`` after each
  allocation and deallocation);
- each GPU's launch queue (``prof.launch_latency.queue``: kernels launched and not
  started yet);
- every counter of ``prof.counters`` (the hardware sampler's file beside the profile: GPU
  clocks, power, utilisation, host CPU and memory; the profile's own ``_counters_`` lines: PM
  sampling, TPU unit utilisation), one track per (host, device, counter), in a section per
  host and device (``<host> GPU:0 counters``, ``<host> host counters``) drawn right after
  that device's plane (``after``: the event section it follows; "" for the place between the
  devices and the host's threads).  Their ``_counters_`` lines leave the event tracks
  (:func:`counter_lines`).

The first two sit in one section per host, ``<host> Counters``.  A counter with more than
``MAX_POINTS`` points keeps, per time bucket, its highest point and its last one (the level
it leaves): peaks stay, and the steps between buckets keep their levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hardware_tables import counters_of

__all__ = ["COUNTERS_LINE", "MAX_POINTS", "counter_lines", "counter_tables",
           "counter_tables_empty"]

COUNTERS_LINE = "_counters_"  # a device plane's line of counter samples (PM sampling, TPUs)
PROFILE_SOURCE = "profile:_counters_"  # prof.counters' source of that line's samples
_DEVICE_PLANE = "/device:"
# the counters a device's section shows first (the sampler's names), the others after them
# by name
_FIRST = ("sm_clock_mhz", "memory_clock_mhz", "power_w", "temperature_c", "throttle_reasons",
          "gpu_util_pct", "memory_util_pct", "memory_used_bytes", "cpu_util_pct",
          "process_cpu_pct", "process_rss_bytes", "memory_available_bytes")

MAX_POINTS = 20_000  # points sent per counter (a bucket's peak and its last point)

_TRACKS = {"section": object, "name": object, "unit": object, "max": np.float64,
           "after": object}
_POINTS = {"counter": np.uint32, "t": np.float64, "v": np.float64}


def _empty(columns: dict) -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series([], dtype=d) for k, d in columns.items()})


def counter_tables_empty() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The counter tables of a profile without counters."""
    return _empty(_TRACKS), _empty(_POINTS)


def _thin(t: np.ndarray, v: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` points: per bucket of time, its highest point and its last."""
    if len(t) <= limit:
        return t, v
    buckets = limit // 2
    edges = np.linspace(t[0], t[-1], buckets + 1)
    which = np.clip(np.searchsorted(edges, t, "right") - 1, 0, buckets - 1)
    starts = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
    ends = np.r_[starts[1:], len(t)] - 1
    peak = np.array([s + int(np.argmax(v[s:e + 1])) for s, e in zip(starts, ends)])
    keep = np.unique(np.concatenate([peak, ends]))
    return t[keep], v[keep]


def _plane_of(device: str) -> str:
    """The device plane of a device of ``prof.counters`` ("GPU:0": "/device:GPU:0"; "" for
    the host)."""
    return "" if device == "host" else _DEVICE_PLANE + device


def counter_lines(counters: pd.DataFrame) -> set[tuple[str, str]]:
    """(host, plane) of every ``_counters_`` line whose samples ``counters`` holds (drawn as
    counter tracks, not as events)."""
    rows = counters[counters["source"].astype(str) == PROFILE_SOURCE]
    pairs = rows[["host", "device"]].astype(str).drop_duplicates()
    return {(h, _plane_of(d)) for h, d in pairs.itertuples(index=False)}


def _hardware_series(counters: pd.DataFrame, planes: set[tuple[str, str]]) -> list[tuple]:
    """The tracks of ``prof.counters``: one per (host, device, counter), the device's after
    its plane's events when the viewer shows that plane (``planes``: (host, plane))."""
    out = []
    keys = ["host", "device", "counter"]
    for (host, device, name), rows in counters.groupby(keys, sort=True, observed=True):
        host, device, plane = str(host), str(device), _plane_of(str(device))
        after = f"{host} {plane}" if (host, plane) in planes else ""
        out.append((f"{host} {device} counters", str(name), str(rows["unit"].iloc[0]),
                    rows["time_us"].to_numpy(np.float64), rows["value"].to_numpy(np.float64),
                    after))
    rank = {name: k for k, name in enumerate(_FIRST)}
    return sorted(out, key=lambda s: (s[0], rank.get(s[1], len(rank)), s[1]))


def _series(prof, planes: set[tuple[str, str]] = frozenset()) -> list[tuple]:
    """(section, name, unit, times, values, after) of every counter: memory, the launch
    queue, then ``prof.counters``' by host, device and counter."""
    out = []
    mem = prof.memory_timeline
    for (host, allocator), rows in mem.groupby(["host", "allocator"], sort=True, observed=True):
        out.append((f"{host} Counters", f"memory in use ({allocator})", "bytes",
                    rows["time_us"].to_numpy(np.float64), rows["in_use_bytes"].to_numpy(np.float64),
                    ""))
    queue = prof.launch_latency.queue if prof.n_events else None
    if queue is not None and len(queue):
        for (host, device), rows in queue.groupby(["host", "device"], sort=True, observed=True):
            out.append((f"{host} Counters", f"launch queue ({device})", "kernels",
                        rows["time_us"].to_numpy(np.float64), rows["queued"].to_numpy(np.float64),
                        ""))
    return out + _hardware_series(counters_of(prof), planes)


def counter_tables(prof, limit: int = MAX_POINTS, planes: set[tuple[str, str]] = frozenset()
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per counter: section, name, unit, max, after (the event section it follows,
    "" none); its points: counter, t, v, by counter then time).  ``planes``: the (host,
    plane) pairs the viewer shows."""
    tracks, points = [], []
    for k, (section, name, unit, t, v, after) in enumerate(_series(prof, planes)):
        order = np.argsort(t, kind="stable")
        order = order[np.isfinite(v[order])]  # a sample without a value draws nothing
        t, v = _thin(t[order], v[order], limit)
        tracks.append({"section": section, "name": name, "unit": unit,
                       "max": float(v.max()) if len(v) else 0.0, "after": after})
        points.append(pd.DataFrame({"counter": np.full(len(t), k, np.uint32), "t": t, "v": v}))
    if not tracks:
        return counter_tables_empty()
    return pd.DataFrame(tracks), pd.concat(points, ignore_index=True)
