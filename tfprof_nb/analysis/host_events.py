"""One host's events as flat numpy arrays with the stats the analyses need."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["HostEvents", "host_events", "INT_STATS"]

# Integer stats the grouping and step analyses read.
INT_STATS = ("_r", "_p", "_pt", "_c", "_ct", "_a", "id", "iter_num", "step_num",
             "correlation_id", "group_id", "parent_id", "element_id", "is_eager", "is_func")
STR_STATS = ("graph_type", "step_name", "tf_op", "shape", "_ipl_stage_name")
THREADPOOL_REGION = "ThreadpoolListener::Region"


@dataclass
class HostEvents:
    """Events of one host (real ones first, then synthetic ones) in flat arrays.

    ``event_id`` is the global event id of real events and -1 for synthetic ones (threadpool
    regions).  Names and planes are codes into small tables, so string tests run once per
    distinct name.  Integer stats are in ``ints[name]`` with ``has[name]`` saying where present.
    """

    host: str
    event_id: np.ndarray
    name_code: np.ndarray  # int64 codes into ``names``
    names: np.ndarray  # object array of distinct names
    plane_code: np.ndarray  # int64 codes into ``planes``
    planes: np.ndarray  # object array of distinct plane names
    line: np.ndarray  # int64, unique per (plane, line) within the host
    line_id: np.ndarray  # int64 XLine id as stored
    begin: np.ndarray  # int64 ps
    end: np.ndarray  # int64 ps
    ints: dict = field(default_factory=dict)
    has: dict = field(default_factory=dict)
    strs: dict = field(default_factory=dict)  # name -> object array (None where absent)
    _parent: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.begin)

    def int_stat(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return self.ints[name], self.has[name]

    def name_mask(self, predicate) -> np.ndarray:
        """Events whose name satisfies ``predicate`` (a function of a Series of names that
        returns booleans), evaluated once per distinct name."""
        ok = np.asarray(predicate(pd.Series(self.names, dtype=object)), dtype=bool)
        return ok[self.name_code] if len(ok) else np.zeros(len(self), dtype=bool)

    def name_is(self, *values) -> np.ndarray:
        return self.name_mask(lambda s: s.isin(values).to_numpy())

    def name_of(self, rows) -> np.ndarray:
        return self.names[self.name_code[rows]]

    def plane_mask(self, predicate) -> np.ndarray:
        ok = np.asarray(predicate(pd.Series(self.planes, dtype=object)), dtype=bool)
        return ok[self.plane_code] if len(ok) else np.zeros(len(self), dtype=bool)

    def plane_is(self, value: str) -> np.ndarray:
        return self.plane_mask(lambda s: (s == value).to_numpy())

    def plane_of(self, rows) -> np.ndarray:
        return self.planes[self.plane_code[rows]]

    def nesting_parent(self) -> np.ndarray:
        """Innermost event on the same line that fully contains each event (-1: none);
        async events (``_a``) are left out of the nesting.  Computed once."""
        if self._parent is None:
            from ._group_kernels import nest_strict

            from ._nesting_kernels import is_nesting_order, merge_nesting_order

            is_async = self.has["_a"] & (self.ints["_a"] != 0)
            dur = self.end - self.begin
            n_real = int((self.event_id >= 0).sum())
            if is_nesting_order(self.line[:n_real], self.begin[:n_real], dur[:n_real]):
                # file order is nesting order: only the synthetic rows need sorting in
                extra = n_real + np.lexsort((-dur[n_real:], self.begin[n_real:],
                                             self.line[n_real:]))
                order = merge_nesting_order(n_real, extra.astype(np.int64), self.line,
                                            self.begin, dur)
            else:
                order = np.lexsort((-dur, self.begin, self.line)).astype(np.int64)
            parent = np.empty(len(self), dtype=np.int64)
            nest_strict(order, self.line, self.begin, self.end, is_async, parent)
            self._parent = parent
        return self._parent

    def is_derived_line(self) -> np.ndarray:
        """Lines the profiler derives (ids near 0xdeadbeef: Steps, TensorFlow Ops, ...)."""
        low = self.line_id & 0xFFFFFFFF
        return (low >= 0xDEADBEEF) & (low < 0xDEADBEEF + 290)


def _stat_rows(space, name: str) -> np.ndarray:
    st = space.stats
    try:
        code = st.names.index(name)
    except ValueError:
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero((st.name_code == code) & (st.owner_kind == 0))


def _event_ints(space, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values, present) of an integer stat for every event of one host, scattered
    straight from the stat table (the last value wins for repeated stats)."""
    n = len(space.events)
    values = np.zeros(n, dtype=np.int64)
    present = np.zeros(n, dtype=bool)
    rows = _stat_rows(space, name)
    if not len(rows):
        return values, present
    st = space.stats
    kind = st.kind[rows]
    numeric = (kind == 1) | (kind == 2) | (kind == 3)
    rows, kind = rows[numeric], kind[numeric]
    raw = st.raw_value[rows]
    as_double = st.double_value[rows]
    ok = (kind != 1) | (np.isfinite(as_double) & (np.abs(as_double) < 2.0**63))
    doubles = np.where((kind == 1) & ok, as_double, 0.0).astype(np.int64)
    raw = np.where(kind == 1, doubles, raw)
    owner = st.owner[rows]
    values[owner[ok]] = raw[ok]
    present[owner[ok]] = True
    return values, present


def _event_strs(space, name: str) -> np.ndarray:
    """A string stat for every event of one host (None where absent)."""
    out = np.full(len(space.events), None, dtype=object)
    rows = _stat_rows(space, name)
    if not len(rows):
        return out
    st = space.stats
    codes = st.value_code[rows]
    rows, codes = rows[codes >= 0], codes[codes >= 0]
    values = np.asarray(st.values, dtype=object)
    out[st.owner[rows]] = values[codes]
    return out


def host_events(prof, host: str) -> HostEvents:
    """``host``'s events with the stats the analyses need, plus threadpool regions (cached on
    the profile: several analyses share it)."""
    cache = prof.__dict__.setdefault("_host_events_cache", {})
    if host not in cache:
        cache[host] = _build_host_events(prof, host)
    return cache[host]


def _build_host_events(prof, host: str) -> HostEvents:
    ev = prof.events
    if len(prof.hosts) > 1:
        ev = ev[ev["host"] == host]
    ids = ev.index.to_numpy()
    begin = ev["start_ps"].to_numpy()
    end = begin + ev["duration_ps"].to_numpy()
    plane_code = ev["plane"].cat.codes.to_numpy().astype(np.int64)
    line_code = pd.factorize(ev["line_id"].to_numpy())[0].astype(np.int64)
    line = pd.factorize(plane_code * (int(line_code.max(initial=0)) + 1) + line_code)[0] \
        .astype(np.int64)
    space = prof.spaces[host]
    ints, has = {}, {}
    for name in INT_STATS:
        ints[name], has[name] = _event_ints(space, name)
    strs = {}
    for name in STR_STATS:
        strs[name] = _event_strs(space, name)
    hev = HostEvents(host, ids, ev["name"].cat.codes.to_numpy().astype(np.int64),
                     np.asarray(ev["name"].cat.categories, dtype=object), plane_code,
                     np.asarray(ev["plane"].cat.categories, dtype=object), line,
                     ev["line_id"].to_numpy().astype(np.int64), begin, end, ints, has, strs)
    return _with_threadpool_regions(hev)


def _with_threadpool_regions(hev: HostEvents) -> HostEvents:
    """Add a ``ThreadpoolListener::Region`` event from each StartRegion (with ``_c``) to each
    later StopRegion on the same line, carrying the region's ``_c`` and ``_ct=15``: it makes
    the work a thread-pool thread runs a consumer of the caller's Record event."""
    is_start = hev.name_is("ThreadpoolListener::StartRegion") & hev.has["_c"]
    is_stop = hev.name_is("ThreadpoolListener::StopRegion")
    if not is_start.any() or not is_stop.any():
        return hev
    df = pd.DataFrame({"line": hev.line, "t": hev.begin, "is_start": is_start,
                       "is_stop": is_stop, "c": hev.ints["_c"]})
    df = df[df["is_start"] | df["is_stop"]].sort_values(["line", "t"], kind="stable")
    last_start_t = df["t"].where(df["is_start"]).groupby(df["line"]).ffill()
    last_c = df["c"].where(df["is_start"]).groupby(df["line"]).ffill()
    regions = df[df["is_stop"] & last_start_t.notna()]
    if regions.empty:
        return hev
    k = len(regions)
    new_line = regions["line"].to_numpy()
    first_of_line = pd.Series(np.arange(len(hev)), index=hev.line)
    first_of_line = first_of_line[~first_of_line.index.duplicated()]
    first_rows = first_of_line.reindex(new_line).to_numpy()
    plane_code = hev.plane_code[first_rows]
    names = hev.names
    hits = np.flatnonzero(names == THREADPOOL_REGION)
    if len(hits):
        region_code = int(hits[0])
    else:
        names = np.concatenate([names, np.array([THREADPOOL_REGION], dtype=object)])
        region_code = len(names) - 1

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
        hev.host, extend(hev.event_id, -1), extend(hev.name_code, region_code), names,
        np.concatenate([hev.plane_code, plane_code]), hev.planes,
        np.concatenate([hev.line, new_line]), np.concatenate([hev.line_id,
                                                              hev.line_id[first_rows]]),
        np.concatenate([hev.begin, last_start_t[regions.index].to_numpy().astype(np.int64)]),
        np.concatenate([hev.end, regions["t"].to_numpy()]), ints, has, strs)
