"""The events table and event stats of every host, built from the hosts' decoded columns.

These are not analyses (no partial result): they need each host's events, brought over from
where the host lives when first asked for.  Times are on the profile's time axis (each host
shifted), event ids are global (each host's rows after the hosts before it).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .xspace import stat_value

__all__ = ["categorical_from_tables", "stat_series", "events_table", "host_stat_series",
           "with_stats", "EVENT_COLUMNS"]

EVENT_COLUMNS = ["host", "plane", "line", "name", "start_us", "duration_us", "line_id",
                 "start_ps", "duration_ps", "num_occurrences"]


def categorical_from_tables(codes: list[np.ndarray], tables: list[list]) -> pd.Categorical:
    """One categorical from per-host ``codes`` into per-host ``tables`` of strings.

    Tables may overlap and repeat values; the result's categories are the distinct values in
    first-seen order.  Only the small tables are touched in Python, the codes are remapped with
    one gather per host.
    """
    merged: dict = {}
    remapped = []
    for c, table in zip(codes, tables):
        mapping = np.fromiter((merged.setdefault(v, len(merged)) for v in table),
                              dtype=np.int32, count=len(table))
        remapped.append(mapping[c] if len(c) else np.empty(0, np.int32))
    all_codes = np.concatenate(remapped) if remapped else np.empty(0, np.int32)
    return pd.Categorical.from_codes(all_codes, categories=pd.Index(list(merged), dtype=object),
                                     validate=False)


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
    start)."""
    hosts = list(spaces)
    decoded = [spaces[h] for h in hosts]
    n = [len(s.events) for s in decoded]
    host_codes = np.repeat(np.arange(len(decoded), dtype=np.int32), n)
    start_ps = np.concatenate([s.event_start_ps() + shifts[h] for h, s in zip(hosts, decoded)]) \
        if decoded else np.empty(0, np.int64)
    duration_ps = np.concatenate([s.events.duration_ps for s in decoded]) if decoded else \
        np.empty(0, np.int64)
    df = pd.DataFrame({
        "host": pd.Categorical.from_codes(host_codes, categories=hosts),
        "plane": categorical_from_tables([s.events.plane for s in decoded],
                                         [s.plane_names for s in decoded]),
        "line": categorical_from_tables([s.events.line for s in decoded],
                                        [s.line_names for s in decoded]),
        "name": categorical_from_tables([s.events.name_code for s in decoded],
                                        [s.events.names for s in decoded]),
        "start_us": start_ps / 1e6,
        "duration_us": duration_ps / 1e6,
        "line_id": np.concatenate([s.line_ids[s.events.line] for s in decoded]),
        "start_ps": start_ps,
        "duration_ps": duration_ps,
        "num_occurrences": np.concatenate([s.events.num_occurrences for s in decoded]),
    }, copy=False)
    df.index.name = "event"
    return df


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

