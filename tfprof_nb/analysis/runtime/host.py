"""One host's decoded profile and what the analyses derive from it (each computed once).

:class:`HostData` is the unit every per-host analysis step receives: it lives where the host
was decoded (this process, a thread, or a Dask worker) and never travels.  Event columns are
the decoder's narrow arrays; derived columns are built on first use and cached.  Stats are
read sparsely (:class:`SparseStat`: the event rows that have a stat and their values), so no
per-event object or per-stat dense array is ever made.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._native.kernels import (code_counts, code_lookup, code_rows, code_rows_multi,
                               int_stats, line_name_rows, nest_query, nest_strict,
                               nesting_order_or_none, select_rows, span, sparse_lookup,
                               stats_at)
from ...constants import HOST_PLANE
from ...xspace import XSpaceData

__all__ = ["HostData", "SparseStat", "HOST_PLANE", "INT_KINDS"]

INT_KINDS = (1, 2, 3)  # double, uint64, int64: stats read as integers
_LOCKS_LOCK = threading.Lock()
_DERIVED_LINE_LOW = 0xDEADBEEF  # the profiler's derived lines (Steps, TensorFlow Ops, ...)


@dataclass
class SparseStat:
    """One stat of one host's events: ``rows`` (int32, increasing, unique) that carry it and
    ``values`` (integers, stored as int32 when they fit; float64 numbers; or int32 codes into
    ``table`` for text stats).  :meth:`dense` and :meth:`lookup` give integers as int64."""

    rows: np.ndarray
    values: np.ndarray
    table: np.ndarray | None = None  # object array of the text values (text stats only)

    def __len__(self) -> int:
        return len(self.rows)

    def present(self, n: int) -> np.ndarray:
        """bool per event: whether it carries the stat."""
        out = np.zeros(n, dtype=bool)
        out[self.rows] = True
        return out

    def _wide(self) -> np.dtype:
        return np.dtype(np.int64) if self.table is None and self.values.dtype == np.int32 \
            else self.values.dtype

    def dense(self, n: int, fill=0) -> np.ndarray:
        """The values scattered over ``n`` events (``fill`` where absent); text stats give
        their codes (-1 where absent when fill is -1)."""
        out = np.full(n, fill, dtype=self._wide())
        out[self.rows] = self.values
        return out

    def lookup(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values, present) of the stat at event ``rows`` (values 0 where absent)."""
        rows = np.asarray(rows)
        if not len(self.rows):
            return np.zeros(len(rows), self._wide()), np.zeros(len(rows), bool)
        if self.values.dtype.kind in "iu":
            values, hit = sparse_lookup(self.rows, self.values, rows)
            return values.astype(self._wide(), copy=False), hit
        pos = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
        hit = self.rows[pos] == rows
        return np.where(hit, self.values[pos], 0), hit

    def text(self, codes: np.ndarray) -> np.ndarray:
        """Object array of the text values of ``codes`` (None for -1)."""
        table = np.concatenate([self.table, np.array([None], dtype=object)])
        return table[np.where(np.asarray(codes) < 0, len(self.table), codes)]


class HostData:
    """One host: its decoded :class:`XSpaceData` and derived, cached per-event arrays.

    Times (``begin``) are picoseconds relative to the host's own origin (``space.origin_ns``);
    analyses add the profile's shift for the host to what they return.
    """

    def __init__(self, name: str, space: XSpaceData):
        self.name = name
        self.space = space
        self._cache: dict = {}
        self._locks: dict = {}

    def __len__(self) -> int:
        return len(self.space.events)

    def __repr__(self) -> str:
        return f"<HostData {self.name!r}: {len(self):,} events>"

    def __getstate__(self):  # (Dask may move a host between workers: locks stay behind)
        return {"name": self.name, "space": self.space, "_cache": dict(self._cache)}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._locks = {}

    def _cached(self, key, build):
        value = self._cache.get(key)
        if value is None:  # (another thread's release may drop keys at any time)
            with self._build_lock(key):  # one build when steps on threads need it at once
                value = self._cache.get(key)
                if value is None:
                    value = self._cache[key] = build()
        return value

    def _build_lock(self, key) -> threading.Lock:
        with _LOCKS_LOCK:
            return self._locks.setdefault(key, threading.Lock())

    # kept between the steps of a batch: small per-line and per-name tables
    _CORE = frozenset({"names", "line_key", "line", "name_counts", "line_counts",
                       "in_nesting_order"})

    def release(self, keep_core: bool = False) -> None:
        """Drop the derived arrays (they are rebuilt when needed); ``keep_core`` keeps the
        tables several steps use (see _CORE)."""
        for key in list(self._cache):  # steps of one host may release side by side
            if not (keep_core and key in self._CORE):
                self._cache.pop(key, None)

    # ---- names and planes ------------------------------------------------------------------
    @property
    def names(self) -> np.ndarray:
        """Object array of the distinct event names (index: ``name_code``)."""
        return self._cached("names", lambda: np.asarray(self.space.events.names, dtype=object))

    @property
    def name_code(self) -> np.ndarray:
        return self.space.events.name_code

    def name_table(self, predicate) -> np.ndarray:
        """bool per distinct name: ``predicate`` (a function of a Series of names returning
        booleans) evaluated once per name."""
        names = pd.Series(self.names, dtype=object)
        return np.asarray(predicate(names), dtype=bool) if len(names) else np.zeros(0, bool)

    def name_mask(self, predicate) -> np.ndarray:
        """bool per event whose name satisfies ``predicate`` (see :meth:`name_table`)."""
        return _mask(self.name_code, self.name_table(predicate), len(self))

    def name_rows(self, predicate, also: np.ndarray | None = None) -> np.ndarray:
        """int32 rows (increasing) of the events whose name satisfies ``predicate`` (and
        ``also``, a bool per event, when given), in one pass without a per-event mask."""
        ok = self.name_table(predicate)
        if not ok.any():
            return np.empty(0, np.int32)
        return code_rows(self.name_code, ok, int(self.name_counts[ok].sum()), also)

    def name_rows_many(self, predicates: dict) -> dict:
        """{key: int32 rows (increasing) of the events whose name satisfies the predicate}
        for several predicates ({key: predicate}, see :meth:`name_table`) in one pass over
        the events; names two predicates share are read in a pass of their own."""
        tables = {key: self.name_table(pred) for key, pred in predicates.items()}
        taken = np.zeros(len(self.names), bool)
        together, apart = {}, {}
        for key, ok in tables.items():
            (apart if (ok & taken).any() else together)[key] = ok
            if key in together:
                taken |= ok
        keys = [k for k, ok in together.items() if ok.any()]
        found = code_rows_multi(self.name_code, [together[k] for k in keys],
                                [int(self.name_counts[together[k]].sum()) for k in keys]) \
            if keys else []
        out = {key: np.empty(0, np.int32) for key in tables}
        out.update(zip(keys, found))
        out.update({key: code_rows(self.name_code, ok, int(self.name_counts[ok].sum()))
                    for key, ok in apart.items() if ok.any()})
        return {key: out[key] for key in tables}

    @property
    def name_counts(self) -> np.ndarray:
        """int64 number of events of each name code."""
        known = self.space.events.name_counts  # (counted by the decoder)
        if known is not None and len(known) == len(self.names):
            return known
        return self._cached("name_counts", lambda: code_counts(self.name_code,
                                                               len(self.names)))

    def name_is(self, *values) -> np.ndarray:
        return self.name_mask(lambda s: s.isin(values).to_numpy())

    def name_of(self, rows) -> np.ndarray:
        return self.names[self.name_code[rows]]

    @property
    def plane_names(self) -> list[str]:
        return self.space.plane_names

    def plane_mask(self, predicate) -> np.ndarray:
        """bool per event whose plane name satisfies ``predicate`` (a function of a Series)."""
        return self.line_mask(self.plane_lines(predicate))

    def plane_lines(self, predicate) -> np.ndarray:
        """bool per decoded line whose plane name satisfies ``predicate``."""
        planes = pd.Series(self.plane_names, dtype=object)
        ok = np.asarray(predicate(planes), dtype=bool)
        return ok[self.space.line_plane] if len(ok) else np.zeros(0, bool)

    def rows_on_lines(self, line_ok: np.ndarray, name_ok: np.ndarray | None = None) -> np.ndarray:
        """int32 rows (increasing) of the events on the decoded lines ``line_ok`` (bool per
        line) whose name code is in ``name_ok`` (bool per name; None: any)."""
        if name_ok is None:
            name_ok = np.ones(len(self.names), bool)
        if not len(line_ok) or not line_ok.any() or not name_ok.any():
            return np.empty(0, np.int32)
        cap = min(int(self.line_counts[line_ok].sum()), int(self.name_counts[name_ok].sum()))
        return line_name_rows(self.space.events.line, self.name_code, line_ok, name_ok, cap)

    @property
    def line_counts(self) -> np.ndarray:
        """int64 number of events on each decoded line."""
        known = self.space.events.line_counts  # (counted by the decoder)
        if known is not None and len(known) == len(self.space.line_ids):
            return known
        return self._cached("line_counts", lambda: code_counts(self.space.events.line,
                                                               len(self.space.line_ids)))

    def plane_is(self, name: str) -> np.ndarray:
        return self.plane_mask(lambda s: (s == name).to_numpy())

    def line_mask(self, line_ok: np.ndarray) -> np.ndarray:
        """bool per event from a bool per decoded line."""
        return _mask(self.space.events.line, line_ok, len(self))

    def plane_of(self, rows) -> np.ndarray:
        """Plane names of event ``rows``."""
        planes = np.asarray(self.plane_names, dtype=object)
        return planes[self.space.line_plane[self.space.events.line[rows]]]

    # ---- lines and times ---------------------------------------------------------------------
    @property
    def line_key(self) -> np.ndarray:
        """int32 per decoded line: lines of one plane with the same id share a key."""
        def build():
            sp = self.space
            key = sp.line_plane.astype(np.int64) * (2**32) + (sp.line_ids & 0xFFFFFFFF)
            return pd.factorize(key)[0].astype(np.int32)
        return self._cached("line_key", build)

    @property
    def line(self) -> np.ndarray:
        """int32 line key of every event (see :attr:`line_key`; the decoded line index itself
        when no two lines share a key)."""
        def build():
            key = self.line_key
            if np.array_equal(key, np.arange(len(key))):
                return self.space.events.line
            return key[self.space.events.line]
        return self._cached("line", build)

    @property
    def n_lines(self) -> int:
        return int(self.line_key.max()) + 1 if len(self.line_key) else 0

    @property
    def begin(self) -> np.ndarray:
        """int64 start of every event in ps relative to the host's origin."""
        return self.space.events.start_ps

    @property
    def duration(self) -> np.ndarray:
        return self.space.events.duration_ps

    def span(self) -> tuple[int, int]:
        """(earliest start, latest end) of the host's events in ps ((0, 0) without events);
        the decoder's when it found it."""
        ev = self.space.events
        if not len(ev):
            return 0, 0
        if ev.span_ps is None:
            ev.span_ps = span(self.begin, self.duration)
        return ev.span_ps

    def end_of(self, rows) -> np.ndarray:
        return self.begin[rows] + self.duration[rows]

    def derived_line_mask(self) -> np.ndarray:
        """bool per event on a line the profiler derives (Steps, TensorFlow Ops, ...)."""
        return self.line_mask(self.derived_lines())

    def derived_lines(self) -> np.ndarray:
        """bool per decoded line the profiler derives (Steps, TensorFlow Ops, ...)."""
        low = self.space.line_ids & 0xFFFFFFFF
        return (low >= _DERIVED_LINE_LOW) & (low < _DERIVED_LINE_LOW + 290)

    # ---- stats --------------------------------------------------------------------------------
    def stat_rows(self, name: str) -> np.ndarray:
        """Rows of the stat table holding event stat ``name``, increasing."""
        st = self.space.stats
        try:
            code = st.names.index(name)
        except ValueError:
            return np.empty(0, dtype=np.int32)
        if not st.counts_by_name()[code]:  # (no pass for a stat no event carries)
            return np.empty(0, dtype=np.int32)
        return select_rows(st.name_code, code, st.owner_kind, 0)

    def has_stat(self, name: str) -> bool:
        return len(self.stat_rows(name)) > 0

    def int_stat(self, name: str, cache: bool = True) -> SparseStat:
        """Integer stat ``name`` (doubles truncated; the last value wins when an event carries
        the stat twice).  Cached unless ``cache`` is false."""
        if not cache and ("int", name) not in self._cache:
            return self._int_stat(name)
        return self._cached(("int", name), lambda: self._int_stat(name))

    def int_stats(self, names, cache: bool = True) -> dict[str, SparseStat]:
        """Several integer stats read in one pass over the stat table ({name: stat});
        cached ones are reused, the others cached unless ``cache`` is false."""
        out = {n: self._cache[("int", n)] for n in names if ("int", n) in self._cache}
        st = self.space.stats
        todo = [n for n in names if n not in out]
        counts = st.counts_by_name()
        codes = {n: c for n in todo if n in st.names
                 and counts[c := st.names.index(n)] > 0}  # (no event carries the others)
        caps = [int(counts[c]) for c in codes.values()]
        read = int_stats(st.name_code, st.owner_kind, st.kind, st.raw_value, st.owner,
                         list(codes.values()), caps) if codes else []
        for i, n in enumerate(codes):  # narrowed one by one: the wide copies go right away
            rows, values = read[i]
            read[i] = None
            out[n] = SparseStat(rows, _narrow(values))
            del values
        for n in todo:
            out.setdefault(n, SparseStat(np.empty(0, np.int32), np.empty(0, np.int32)))
            if cache:
                self._cache[("int", n)] = out[n]
        return out

    def stats_at(self, queries: dict) -> dict:
        """Integer stats at event rows without reading the whole stats: ``queries``
        {key: (stat name, rows)} -> {key: (values int64, present bool)}: queries of few rows
        sought row by row, the others in one pass over the stat table (cached stats are
        looked up instead)."""
        st = self.space.stats
        out, todo = {}, []
        as_int32 = {}  # queries on one array keep sharing one (the kernel seeks them together)
        for key, (name, rows) in queries.items():
            if id(rows) not in as_int32:
                as_int32[id(rows)] = (rows, np.asarray(rows, np.int32))
            rows = as_int32[id(rows)][1]
            if ("int", name) in self._cache:
                out[key] = self._cache[("int", name)].lookup(rows)
            elif name not in st.names or not len(rows) or \
                    not st.counts_by_name()[st.names.index(name)]:
                out[key] = (np.zeros(len(rows), np.int64), np.zeros(len(rows), bool))
            else:
                todo.append((key, st.names.index(name), rows))
        if todo:
            read = stats_at(st.name_code, st.owner_kind, st.kind, st.raw_value, st.owner,
                            [(c, r) for _, c, r in todo], runs=st.other_owner_runs())
            out.update({key: value for (key, _, _), value in zip(todo, read)})
        return {key: out[key] for key in queries}

    def drop_stats(self, names) -> None:
        """Forget the cached integer stats ``names`` (their memory goes back)."""
        for n in names:
            self._cache.pop(("int", n), None)

    def _int_stat(self, name: str) -> SparseStat:
        return self.int_stats([name], cache=False)[name]

    def float_stat(self, name: str) -> SparseStat:
        """Numeric stat ``name`` as float64 (the last value wins).  Not cached."""
        st = self.space.stats
        rows = self.stat_rows(name)
        kind = st.kind[rows]
        rows = rows[(kind == 1) | (kind == 2) | (kind == 3)]
        kind = st.kind[rows]
        raw = st.raw_value[rows]
        values = np.where(kind == 1, raw.view(np.float64),
                          np.where(kind == 2, raw.view(np.uint64).astype(np.float64),
                                   raw.astype(np.float64)))
        return _last_per_owner(st.owner[rows], values)

    def str_stat(self, name: str) -> SparseStat:
        """Text stat ``name`` (str, bytes or ref values; the last one wins): codes into the
        stat table's values, ``table`` holding them.  Cached."""
        return self._cached(("str", name), lambda: self._str_stat(name))

    def _str_stat(self, name: str) -> SparseStat:
        st = self.space.stats
        rows = self.stat_rows(name)
        rows = rows[st.kind[rows] >= 4]
        sparse = _last_per_owner(st.owner[rows], st.raw_value[rows].astype(np.int32))
        used, inverse = _distinct_codes(sparse.values, len(st.values))
        table = np.empty(len(used), dtype=object)
        table[:] = [st.values[c] for c in used.tolist()]
        return SparseStat(sparse.rows, inverse, table)

    # ---- nesting ------------------------------------------------------------------------------
    def _async_skip(self) -> np.ndarray | None:
        """uint8 per event: async (``_a`` set; never nested), None when no event is."""
        a = self.int_stat("_a")
        async_rows = a.rows[a.values != 0]
        if not len(async_rows):
            return None
        skip = np.zeros(len(self), np.uint8)
        skip[async_rows] = 1
        return skip

    def nesting_parent_at(self, rows: np.ndarray, ancestor_name: np.ndarray | None = None,
                          ancestor_flag: np.ndarray | None = None, levels: int = 64,
                          parents: bool = True):
        """:meth:`nesting_parent` at event ``rows`` only (increasing, repeats allowed), in one
        walk without a parent per event: (parents int32 or None unless ``parents``, found)
        where, with ``ancestor_name`` (bool per name code) given, found is ``ancestor_flag``
        (bool per event) of each row's first ancestor within ``levels`` whose name has the
        flag (False when none), else None."""
        line, begin, dur = self.line, self.begin, self.duration
        return nest_query(self.nesting_order(), line, begin, dur, self._async_skip(), rows,
                          self.name_code, ancestor_name, ancestor_flag, levels, parents)

    def nesting_order(self) -> np.ndarray | None:
        """int32 rows by (line, begin, longest first), the order nesting walks visit events
        in; None when the rows are in it already (as files usually are: found once per host,
        the order itself while steps need it)."""
        if self._cache.get("in_nesting_order") is True:
            return None

        def build():
            known = self.space.events.in_nesting_order
            if known and self.line is self.space.events.line:  # (found by the decoder)
                order = None
            else:
                order = nesting_order_or_none(self.line, self.begin, self.duration)
            self._cache["in_nesting_order"] = order is None
            return (order,)
        return self._cached("nesting_order", build)[0]

    def nesting_parent(self) -> np.ndarray:
        """int32 innermost event on the same line that fully contains each event (-1: none);
        async events (``_a`` set) are left out.  Computed once."""
        def build():
            n = len(self)
            line, begin, dur = self.line, self.begin, self.duration
            empty = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
            return nest_strict(self.nesting_order(), n, (line, begin, dur), empty,
                               self._async_skip())
        return self._cached("parent", build)


def _mask(code: np.ndarray, table: np.ndarray, n: int) -> np.ndarray:
    """bool per event: ``table`` (bool per code) at each event's ``code``, without a pass
    when the table is all false or all true."""
    table = np.asarray(table, dtype=bool)
    if not table.any():
        return np.zeros(n, bool)
    if table.all() and len(code) and int(code.max()) < len(table):
        return np.ones(n, bool)
    return code_lookup(code, table)


def _narrow(values: np.ndarray) -> np.ndarray:
    """int64 values as int32 when they all fit (they are stored per stat-carrying event)."""
    if len(values) and values.min() >= -2**31 and values.max() < 2**31:
        return values.astype(np.int32)
    return values


def _distinct_codes(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(codes, return_inverse=True) of codes in 0 .. n_codes - 1 (inverse as int32):
    marked in a table of the codes when it is not much longer than ``codes`` (no sort)."""
    if not len(codes) or n_codes > 8 * len(codes):
        used, inverse = np.unique(codes, return_inverse=True)
        return used, inverse.astype(np.int32).reshape(-1)
    mark = np.zeros(n_codes, bool)
    mark[codes] = True
    position = np.cumsum(mark, dtype=np.int32) - 1
    return np.flatnonzero(mark), position[codes]


def _last_per_owner(owner: np.ndarray, values: np.ndarray) -> SparseStat:
    """Keep the last value of each owner (owners are non-decreasing)."""
    if len(owner) > 1:
        last = np.empty(len(owner), dtype=bool)
        last[:-1] = owner[1:] != owner[:-1]
        last[-1] = True
        owner, values = owner[last], values[last]
    return SparseStat(np.ascontiguousarray(owner, np.int32), values)
