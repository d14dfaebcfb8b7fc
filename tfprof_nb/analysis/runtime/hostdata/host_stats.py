"""Event stats: the part of :class:`~.host.HostData` that reads the stat table sparsely
(integer, float and text stats as :class:`~.sparse_stat.SparseStat`, several in one pass,
or only at chosen event rows), caching integer and text stats until a step releases them."""

from __future__ import annotations

import numpy as np

from ...._native.kernels import int_stats, select_rows, stats_at
from .host_core import HostCore
from .sparse_stat import SparseStat

__all__ = ["HostStats", "INT_KINDS"]

INT_KINDS = (1, 2, 3)  # double, uint64, int64: stats read as integers


class HostStats(HostCore):
    """Stats by name: ``int_stat(s)``, ``float_stat``, ``str_stat``, ``stats_at`` (at rows),
    ``stat_rows``, ``has_stat``, ``drop_stats``."""

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
