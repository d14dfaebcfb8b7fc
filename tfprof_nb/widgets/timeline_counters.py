"""The trace viewer's counter tracks: values over time drawn as filled steps under their
track's peak (``js/src/timeline/counters.ts``).

- memory in use per allocator (``prof.memory_timeline``: its ``in_use_bytes`` after each
  allocation and deallocation);
- each GPU's launch queue (``prof.result("launch_latency").queue``: kernels launched and not
  started yet).

They sit in one section per host, ``<host> Counters``, above its planes.  A counter with more
than ``MAX_POINTS`` points keeps, per time bucket, its highest point and its last one (the
level it leaves): peaks stay, and the steps between buckets keep their levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["MAX_POINTS", "counter_tables", "counter_tables_empty"]

MAX_POINTS = 20_000  # points sent per counter (a bucket's peak and its last point)

_TRACKS = {"section": object, "name": object, "unit": object, "max": np.float64}
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


def _series(prof) -> list[tuple[str, str, str, np.ndarray, np.ndarray]]:
    """(section, name, unit, times, values) of every counter, memory first."""
    out = []
    mem = prof.memory_timeline
    for (host, allocator), rows in mem.groupby(["host", "allocator"], sort=True, observed=True):
        out.append((f"{host} Counters", f"memory in use ({allocator})", "bytes",
                    rows["time_us"].to_numpy(np.float64), rows["in_use_bytes"].to_numpy(np.float64)))
    queue = prof.result("launch_latency").queue if prof.n_events else None
    if queue is not None and len(queue):
        for (host, device), rows in queue.groupby(["host", "device"], sort=True, observed=True):
            out.append((f"{host} Counters", f"launch queue ({device})", "kernels",
                        rows["time_us"].to_numpy(np.float64), rows["queued"].to_numpy(np.float64)))
    return out


def counter_tables(prof, limit: int = MAX_POINTS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per counter: section, name, unit, max; its points: counter, t, v, by counter
    then time)."""
    tracks, points = [], []
    for k, (section, name, unit, t, v) in enumerate(_series(prof)):
        order = np.argsort(t, kind="stable")
        t, v = _thin(t[order], v[order], limit)
        tracks.append({"section": section, "name": name, "unit": unit,
                       "max": float(v.max()) if len(v) else 0.0})
        points.append(pd.DataFrame({"counter": np.full(len(t), k, np.uint32), "t": t, "v": v}))
    if not tracks:
        return counter_tables_empty()
    return pd.DataFrame(tracks), pd.concat(points, ignore_index=True)
