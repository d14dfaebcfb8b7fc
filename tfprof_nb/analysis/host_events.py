"""One host's events as flat numpy arrays with the stats the analyses need."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["HostEvents", "host_events", "INT_STATS"]

# Integer stats the grouping and step analyses read.
INT_STATS = ("_r", "_p", "_pt", "_c", "_ct", "_a", "id", "iter_num", "step_num",
             "correlation_id", "group_id", "parent_id", "element_id")
THREADPOOL_REGION = "ThreadpoolListener::Region"


@dataclass
class HostEvents:
    """Events of one host (real ones first, then synthetic ones) in flat arrays.

    ``event_id`` is the global event id of real events and -1 for synthetic ones (threadpool
    regions).  Integer stats are in ``ints[name]`` with ``has[name]`` saying where present.
    """

    host: str
    event_id: np.ndarray
    name: np.ndarray  # object array of str
    plane: np.ndarray  # object array of str
    line: np.ndarray  # int64, unique per (plane, line) within the host
    line_name: np.ndarray  # object array of str
    begin: np.ndarray  # int64 ps
    end: np.ndarray  # int64 ps
    ints: dict = field(default_factory=dict)
    has: dict = field(default_factory=dict)
    strs: dict = field(default_factory=dict)  # name -> object array (None where absent)

    def __len__(self) -> int:
        return len(self.begin)

    def int_stat(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return self.ints[name], self.has[name]


def _aligned(series: pd.Series, ids: np.ndarray) -> pd.Series:
    series = series[~series.index.duplicated(keep="last")]
    return series.reindex(ids)


def _aligned_ints(series: pd.Series, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values, present) of an integer stat at event ``ids``, without a float detour
    (64-bit ids must stay exact); the last value wins for repeated stats."""
    values = np.zeros(len(ids), dtype=np.int64)
    present = np.zeros(len(ids), dtype=bool)
    if series.empty or not len(ids):
        return values, present
    raw = series.to_numpy()
    if raw.dtype == object:
        ok = np.array([isinstance(v, (int, np.integer)) for v in raw], dtype=bool)
        ints = np.array([int(v) & 0xFFFFFFFFFFFFFFFF if ok_ else 0 for v, ok_ in zip(raw, ok)],
                        dtype=np.uint64).view(np.int64)
    elif raw.dtype.kind == "f":
        ok = np.isfinite(raw) & (np.abs(raw) < 2.0**63)
        ints = np.where(ok, raw, 0).astype(np.int64)
    else:
        ok = np.ones(len(raw), dtype=bool)
        ints = raw.astype(np.uint64).view(np.int64) if raw.dtype.kind == "u" else \
            raw.astype(np.int64)
    index = series.index.to_numpy()
    order = np.argsort(index, kind="stable")
    index, ints, ok = index[order], ints[order], ok[order]
    last = np.ones(len(index), dtype=bool)
    last[:-1] = index[1:] != index[:-1]
    index, ints, ok = index[last], ints[last], ok[last]
    pos = np.minimum(np.searchsorted(index, ids), len(index) - 1)
    present = (index[pos] == ids) & ok[pos]
    values[present] = ints[pos[present]]
    return values, present


def host_events(prof, host: str, str_stats=("graph_type", "step_name", "tf_op", "shape",
                                            "_ipl_stage_name")) -> HostEvents:
    """Collect ``host``'s events and the stats the analyses need; add threadpool regions."""
    ev = prof.events
    if len(prof.hosts) > 1:
        ev = ev[ev["host"] == host]
    ids = ev.index.to_numpy()
    begin = ev["start_ps"].to_numpy()
    end = begin + ev["duration_ps"].to_numpy()
    plane = ev["plane"].astype(object).to_numpy()
    line_codes = pd.MultiIndex.from_arrays([ev["plane"].cat.codes, ev["line_id"]]) \
        .factorize()[0].astype(np.int64) if len(ev) else np.empty(0, np.int64)
    ints, has = {}, {}
    for name in INT_STATS:
        ints[name], has[name] = _aligned_ints(prof.stat(name), ids)
    strs = {}
    for name in str_stats:
        s = _aligned(prof.stat(name), ids)
        strs[name] = s.astype(object).where(s.notna(), None).to_numpy()
    hev = HostEvents(host, ids, ev["name"].astype(object).to_numpy(), plane, line_codes,
                     ev["line"].astype(object).to_numpy(), begin, end, ints, has, strs)
    return _with_threadpool_regions(hev)


def _with_threadpool_regions(hev: HostEvents) -> HostEvents:
    """Add a ``ThreadpoolListener::Region`` event from each StartRegion (with ``_c``) to each
    later StopRegion on the same line, carrying the region's ``_c`` and ``_ct=15``: it makes
    the work a thread-pool thread runs a consumer of the caller's Record event."""
    name = hev.name
    is_start = (name == "ThreadpoolListener::StartRegion") & hev.has["_c"]
    is_stop = name == "ThreadpoolListener::StopRegion"
    if not is_start.any() or not is_stop.any():
        return hev
    df = pd.DataFrame({"line": hev.line, "t": hev.begin, "start": is_start, "stop": is_stop,
                       "c": hev.ints["_c"]})
    df = df[df.start | df.stop].sort_values(["line", "t"], kind="stable")
    last_start_t = df["t"].where(df.start).groupby(df["line"]).ffill()
    last_c = df["c"].where(df.start).groupby(df["line"]).ffill()
    regions = df[df.stop & last_start_t.notna()]
    if regions.empty:
        return hev
    k = len(regions)
    first_real = np.flatnonzero(np.isin(hev.line, regions["line"].to_numpy()))
    line_name_of = dict(zip(hev.line[first_real], hev.line_name[first_real]))
    plane_of = dict(zip(hev.line[first_real], hev.plane[first_real]))
    new_line = regions["line"].to_numpy()

    def extend(a, fill):
        return np.concatenate([a, np.full(k, fill, dtype=a.dtype)])

    ints = {n: extend(v, 0) for n, v in hev.ints.items()}
    has = {n: extend(v, False) for n, v in hev.has.items()}
    n0 = len(hev)
    ints["_c"][n0:] = last_c[regions.index].to_numpy().astype(np.int64)
    has["_c"][n0:] = True
    ints["_ct"][n0:] = 15
    has["_ct"][n0:] = True
    strs = {n: extend(v, None) for n, v in hev.strs.items()}
    return HostEvents(
        hev.host, extend(hev.event_id, -1), extend(hev.name, THREADPOOL_REGION),
        np.concatenate([hev.plane, np.array([plane_of[x] for x in new_line], dtype=object)]),
        np.concatenate([hev.line, new_line]),
        np.concatenate([hev.line_name,
                        np.array([line_name_of[x] for x in new_line], dtype=object)]),
        np.concatenate([hev.begin, last_start_t[regions.index].to_numpy().astype(np.int64)]),
        np.concatenate([hev.end, regions["t"].to_numpy()]), ints, has, strs)
