"""Building pandas columns from per-host code arrays and string tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .xspace import stat_value

__all__ = ["categorical_from_tables", "stat_series"]


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
