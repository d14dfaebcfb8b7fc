"""Event stats for a timeline without a kernel: what the details pane shows on a click.

The live widget asks Python for the details of a clicked event.  A report has no Python, so
every event's stats travel with it, in the timeline's row order: per row the range of its
stat rows, per stat row a stat-name code and a value code into a table of distinct values.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["event_details_block"]


def _value_table(kind: np.ndarray, raw: np.ndarray, value_code: np.ndarray, values: list,
                 table: list, index: dict) -> np.ndarray:
    """Codes into ``table`` (extended in place) of the values of one host's stat rows."""
    out = np.zeros(len(kind), np.uint32)
    for k in (1, 2, 3):
        rows = np.flatnonzero(kind == k)
        if not len(rows):
            continue
        distinct, inverse = np.unique(raw[rows], return_inverse=True)
        if k == 1:
            py = [v if math.isfinite(v) else str(v) for v in distinct.view(np.float64).tolist()]
        elif k == 2:
            py = distinct.view(np.uint64).tolist()
        else:
            py = distinct.tolist()
        codes = np.array([_code(("n", k, v), v, table, index) for v in py], np.uint32)
        out[rows] = codes[inverse]
    rows = np.flatnonzero((kind >= 4) & (kind <= 6))
    if len(rows):
        distinct, inverse = np.unique(value_code[rows], return_inverse=True)
        py = [values[c] for c in distinct.tolist()]
        codes = np.array([_code(("s", v if isinstance(v, str) else repr(v)),
                                v if isinstance(v, str) else repr(v), table, index)
                          for v in py], np.uint32)
        out[rows] = codes[inverse]
    rows = np.flatnonzero(kind == 0)
    if len(rows):  # no value: shown as the live widget shows it
        out[rows] = _code(("none",), repr(None), table, index)
    return out


def _code(key, value, table: list, index: dict) -> int:
    code = index.get(key)
    if code is None:
        code = index[key] = len(table)
        table.append(value)
    return code


def event_details_block(prof, event_ids: np.ndarray) -> tuple[dict, dict[str, bytes]]:
    """(JSON part, binary columns) of the stats of the events at ``event_ids`` (timeline order).

    Binary columns: ``off`` (uint32, n + 1), ``key`` and ``val`` (uint32 per stat row),
    ``id`` (uint32 event id per row) and ``dur`` (float64 exact duration in us per row).
    """
    n = len(event_ids)
    total = len(prof.events)
    if total >= 2**32:
        raise ValueError(f"{total} events: too many to embed event details")
    rank = np.full(total, -1, np.int64)
    rank[event_ids] = np.arange(n)
    keys: list[str] = []
    key_index: dict = {}
    values: list = []
    value_index: dict = {}
    ranks, key_codes, value_codes = [], [], []
    for host, space in prof.spaces.items():
        st = space.stats
        rows = np.flatnonzero(st.owner_kind == 0)
        if not len(rows):
            continue
        global_id = st.owner[rows] + prof.event_offsets[host]
        r = rank[global_id]
        keep = r >= 0
        rows, r = rows[keep], r[keep]
        names = np.array([_code(name, name, keys, key_index) for name in st.names] or [0],
                         np.uint32)
        ranks.append(r)
        key_codes.append(names[st.name_code[rows]])
        value_codes.append(_value_table(st.kind[rows], st.raw_value[rows], st.value_code[rows],
                                        st.values, values, value_index))
    if ranks:
        r = np.concatenate(ranks)
        order = np.argsort(r, kind="stable")
        key_col = np.concatenate(key_codes)[order]
        val_col = np.concatenate(value_codes)[order]
        counts = np.bincount(r, minlength=n)
    else:
        key_col = val_col = np.empty(0, np.uint32)
        counts = np.zeros(n, np.int64)
    off = np.zeros(n + 1, np.uint32)
    np.cumsum(counts, out=off[1:])
    durations = prof.events["duration_us"].to_numpy()[event_ids]
    binary = {"off": off.tobytes(), "key": key_col.astype(np.uint32).tobytes(),
              "val": val_col.astype(np.uint32).tobytes(),
              "id": np.asarray(event_ids, np.uint32).tobytes(),
              "dur": np.ascontiguousarray(durations, np.float64).tobytes()}
    return {"keys": keys, "values": values}, binary
