"""The events table and event stats of every host, built from the hosts' decoded columns.

These are not analyses (no partial result): they need each host's events, brought over from
where the host lives when first asked for.  Times are on the profile's time axis (each host
shifted), event ids are global (each host's rows after the hosts before it).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .xspace import stat_value

__all__ = ["categorical_from_tables", "stat_series", "events_table", "host_stat_series",
           "with_stats", "EVENT_COLUMNS"]

EVENT_COLUMNS = ["host", "plane", "line", "name", "start_us", "duration_us", "line_id",
                 "start_ps", "duration_ps", "num_occurrences"]

# pandas 3 copies a column before writing into it while another pandas object shares its
# memory (copy on write), so a frame can hold a decoded column itself (see _decoded_column)
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3
_HOLDERS: dict[int, dict] = {}  # id(decoded space): {column: (its array, a Series over it)}


def _code_dtype(n_categories: int) -> np.dtype:
    """The dtype pandas keeps the codes of a categorical of ``n_categories`` in (the
    narrowest signed integer whose maximum exceeds it), so that codes made in it are kept
    without a conversion."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_categories < np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def categorical_from_tables(codes: list[np.ndarray], tables: list[list]) -> pd.Categorical:
    """One categorical from per-host ``codes`` into per-host ``tables`` of strings.

    Tables may overlap and repeat values; the result's categories are the distinct values in
    first-seen order.  Only the small tables are touched in Python; the codes are remapped
    into the codes' final dtype with one gather per host, or one cast where the host's table
    keeps its codes (its values distinct and first seen in it: one host, or hosts alike).
    """
    merged, mappings = _merged(tables)
    dtype = _code_dtype(len(merged))
    kept = [np.array_equal(m, np.arange(len(m))) for m in mappings]
    if len(codes) == 1 and kept[0]:
        return _categorical(codes[0].astype(dtype), merged)  # (a copy: never the caller's)
    all_codes = np.empty(sum(len(c) for c in codes), dtype)
    start = 0
    for c, mapping, same in zip(codes, mappings, kept):
        out = all_codes[start:start + len(c)]
        if same:
            out[:] = c
        else:
            _gather(mapping.astype(dtype), c, out)
        start += len(c)
    return _categorical(all_codes, merged)


def _gather(table: np.ndarray, codes: np.ndarray, out: np.ndarray, chunk: int = 1 << 16) -> None:
    """``out[:] = table[codes]`` a chunk at a time: numpy widens the codes to intp first, here
    a chunk's worth that stays in cache rather than 8 bytes a row of new memory."""
    for i in range(0, len(codes), chunk):
        np.take(table, codes[i:i + chunk], out=out[i:i + chunk], mode="clip")


def _merged(tables: list[list]) -> tuple[dict, list[np.ndarray]]:
    """({value: code} over every table in first-seen order, each table's codes in it)."""
    merged: dict = {}
    mappings = [np.fromiter((merged.setdefault(v, len(merged)) for v in table),
                            dtype=np.int64, count=len(table)) for table in tables]
    return merged, mappings


def _categorical(codes: np.ndarray, merged: dict) -> pd.Categorical:
    return pd.Categorical.from_codes(codes, categories=pd.Index(list(merged), dtype=object),
                                     validate=False)


def _line_categorical(decoded: list, tables: list[list], of_line: list[np.ndarray]
                      ) -> pd.Categorical:
    """A categorical of every event from a value per line: line ``k`` of host ``i`` has
    ``tables[i][of_line[i][k]]``.  The codes are made per line, then spread over the events
    (see :func:`_per_event`)."""
    merged, mappings = _merged(tables)
    dtype = _code_dtype(len(merged))
    return _categorical(_per_event(decoded, [m[o].astype(dtype) for m, o in
                                             zip(mappings, of_line)], dtype), merged)


def _per_event(decoded: list, per_line: list[np.ndarray], dtype) -> np.ndarray:
    """Every event's value of its line, from ``per_line`` (one array per host, a value per
    line), the hosts one after another.  The decoder writes a host's events in file order,
    line after line, and counts each line's events: there the values are repeated, not
    gathered (a gather where the counts are not known)."""
    if len(decoded) == 1:
        return _host_per_event(decoded[0].events, per_line[0].astype(dtype, copy=False))
    out = np.empty(sum(len(s.events) for s in decoded), dtype)
    start = 0
    for s, values in zip(decoded, per_line):
        out[start:start + len(s.events)] = _host_per_event(s.events, values.astype(dtype))
        start += len(s.events)
    return out


def _host_per_event(ev, values: np.ndarray) -> np.ndarray:
    counts = ev.line_counts
    if counts is not None and len(counts) == len(values) and int(counts.sum()) == len(ev):
        return np.repeat(values, counts)
    return np.take(values, ev.line)


def _decoded_column(space, name: str, column: np.ndarray):
    """``column`` (a decoded column of ``space``) for the events frame without a copy, held
    by a Series that lives as long as ``space``: while it does, pandas copies the frame's
    column before a write into it (``prof.events.loc[...] = ...``), so no write reaches the
    columns the analyses read.  A copy before pandas 3 (no copy on write)."""
    if not _COPY_ON_WRITE:
        return column.copy()
    key = id(space)
    if key not in _HOLDERS:
        _HOLDERS[key] = {}
        weakref.finalize(space, _HOLDERS.pop, key, None)
    held = _HOLDERS[key].get(name)
    if held is None or held[0] is not column:
        held = _HOLDERS[key][name] = (column, pd.Series(column, copy=False))
    return held[1]


def _in_frame(decoded: list, name: str, values: np.ndarray):
    """``values`` for the events frame: the decoded column ``name`` of a single host held as
    :func:`_decoded_column` makes it, any other array itself."""
    if len(decoded) == 1 and values is getattr(decoded[0].events, name):
        return _decoded_column(decoded[0], name, values)
    return values


def _joined(parts: list[np.ndarray], shifts: list[int]) -> np.ndarray:
    """int64 ``parts[i] + shifts[i]``, one after another (one unshifted part: itself)."""
    if len(parts) == 1:
        return parts[0] + shifts[0] if shifts[0] else parts[0]
    out = np.empty(sum(len(p) for p in parts), np.int64)
    start = 0
    for part, shift in zip(parts, shifts):
        np.add(part, shift, out=out[start:start + len(part)])
        start += len(part)
    return out


def stat_series(parts, name: str) -> pd.Series:
    """Series of one stat's values from (event id offset, StatTable, stat rows) per host."""
    if not parts:
        return pd.Series([], dtype=object, name=name, index=pd.Index([], name="event",
                                                                      dtype=np.int64))
    index = np.concatenate([off + st.owner[rows] for off, st, rows in parts])
    kinds = np.concatenate([st.kind[rows] for _, st, rows in parts])
    present = set(np.unique(kinds).tolist())
    idx = pd.Index(index, name="event")
    if present <= {2, 3}:  # uint64 / int64
        raw = np.concatenate([st.raw_value[rows] for _, st, rows in parts])
        if present == {2} and (raw < 0).any():
            return pd.Series(raw.view(np.uint64), index=idx, name=name)
        return pd.Series(raw, index=idx, name=name)
    if present <= {1, 2, 3}:  # numeric with doubles
        out = []
        for _, st, rows in parts:
            k = st.kind[rows]
            v = st.raw_value[rows]
            out.append(np.where(k == 1, v.view(np.float64),
                                np.where(k == 2, v.view(np.uint64).astype(np.float64),
                                         v.astype(np.float64))))
        return pd.Series(np.concatenate(out), index=idx, name=name)
    if present <= {4, 6}:  # strings and resolved refs
        codes, tables = [], []
        for _, st, rows in parts:  # keep only the values this stat uses as categories
            used, inverse = np.unique(st.value_code[rows], return_inverse=True)
            codes.append(inverse.reshape(-1))
            tables.append([st.values[u] for u in used.tolist()])
        cat = categorical_from_tables(codes, tables)
        return pd.Series(cat, index=idx, name=name)
    values = []  # bytes or a mix of kinds: Python objects
    for _, st, rows in parts:
        values.extend(stat_value(st, r) for r in rows.tolist())
    return pd.Series(values, index=idx, name=name, dtype=object)


def events_table(spaces: Mapping, shifts: dict[str, int]) -> pd.DataFrame:
    """Every event of every host in ``spaces`` ({host: XSpaceData}, in host order), one row
    each, indexed by global event id; columns EVENT_COLUMNS (times relative to the profile
    start).

    Made with no Python work per event and one pass or less per column: categorical codes in
    the dtype pandas keeps them in, a line's plane, name and id repeated over its events.
    One host's unshifted start_ps and its duration_ps are its decoded columns themselves
    (pandas 3), which no write into the frame reaches (:func:`_decoded_column`).
    """
    hosts = list(spaces)
    decoded = [spaces[h] for h in hosts]
    start_ps = _joined([s.event_start_ps() for s in decoded], [shifts[h] for h in hosts])
    duration_ps = _joined([s.events.duration_ps for s in decoded], [0] * len(decoded))
    df = pd.DataFrame({
        "host": pd.Categorical.from_codes(_host_codes(decoded), categories=hosts,
                                          validate=False),
        "plane": _line_categorical(decoded, [s.plane_names for s in decoded],
                                   [s.events.line_plane for s in decoded]),
        "line": _line_categorical(decoded, [s.line_names for s in decoded],
                                  [np.arange(len(s.line_names)) for s in decoded]),
        "name": categorical_from_tables([s.events.name_code for s in decoded],
                                        [s.events.names for s in decoded]),
        "start_us": start_ps / 1e6,
        "duration_us": duration_ps / 1e6,
        "line_id": _per_event(decoded, [s.line_ids for s in decoded], np.int64),
        "start_ps": _in_frame(decoded, "start_ps", start_ps),
        "duration_ps": _in_frame(decoded, "duration_ps", duration_ps),
        "num_occurrences": _num_occurrences(decoded),
    }, copy=False)
    df.index.name = "event"
    return df


def _host_codes(decoded: list) -> np.ndarray:
    """Every event's host code (one host: untouched zero pages)."""
    n, dtype = [len(s.events) for s in decoded], _code_dtype(len(decoded))
    if len(n) == 1:
        return np.zeros(n[0], dtype)
    return np.repeat(np.arange(len(n), dtype=dtype), n)


def _num_occurrences(decoded: list) -> np.ndarray:
    """int64 occurrences of every event (0 but for aggregated events: only hosts with
    per-event extras are written, the rest stays untouched zero pages)."""
    if len(decoded) == 1:
        return decoded[0].events.num_occurrences
    out = np.zeros(sum(len(s.events) for s in decoded), np.int64)
    start = 0
    for s in decoded:
        ev = s.events
        if len(ev.extras):
            out[start:start + len(ev)] = ev.num_occurrences
        start += len(ev)
    return out


def host_stat_series(spaces: Mapping, offsets: dict[str, int], name: str) -> pd.Series:
    """Values of the event stat ``name`` over every host, indexed by global event id (see
    ``Profile.stat``)."""
    parts = []
    for host in spaces:
        st = spaces[host].stats
        rows = st.rows_named(name)
        if len(rows):
            parts.append((offsets[host], st, rows))
    return stat_series(parts, name)


def with_stats(base: pd.DataFrame, stat) -> pd.DataFrame:
    """``base`` with one more column per stat: ``stat`` maps each name to its series (the
    last value wins for an event carrying a stat twice; NaN where absent)."""
    out = base.copy()
    for name, values in stat.items():
        values = values[~values.index.duplicated(keep="last")]
        out[name] = values.reindex(base.index)
    return out

