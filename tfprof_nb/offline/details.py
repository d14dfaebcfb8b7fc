"""Event stats for a timeline without a kernel: what the details pane shows on a click.

The live widget asks Python for the details of a clicked event.  A report has no Python, so
every event's stats travel with it, in the timeline's row order: per row the range of its
stat rows, per stat row a stat-name code and a value code into a table of distinct values
(typed columns, see ``columns``).
"""

from __future__ import annotations

import math

import numpy as np

from .columns import encode_columns

__all__ = ["event_details_block"]

_EXACT = 2**53  # the largest integer a JavaScript number holds exactly


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
        else:  # integers JavaScript numbers cannot hold exactly go as their decimal text
            py = [v if abs(v) <= _EXACT else str(v)
                  for v in (distinct.view(np.uint64) if k == 2 else distinct).tolist()]
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


def _stat_rows(prof, event_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Per stat row of the events at ``event_ids`` (in that order): its event's rank, a code
    into the stat names, a code into the values; and the names and values tables."""
    n = len(event_ids)
    rank = np.full(len(prof.events), -1, np.int64)
    rank[event_ids] = np.arange(n)
    tables = {"keys": [], "key_index": {}, "values": [], "value_index": {}}
    ranks, key_codes, value_codes = [], [], []
    for host, space in prof.spaces.items():
        st = space.stats
        rows = np.flatnonzero(st.owner_kind == 0)
        r = rank[st.owner[rows] + prof.event_offsets[host]] if len(rows) else rows
        keep = r >= 0
        rows, r = rows[keep], r[keep]
        if not len(rows):
            continue
        names = np.array([_code(name, name, tables["keys"], tables["key_index"])
                          for name in st.names], np.uint32)
        ranks.append(r)
        key_codes.append(names[st.name_code[rows]])
        value_codes.append(_value_table(st.kind[rows], st.raw_value[rows], st.value_code[rows],
                                        st.values, tables["values"], tables["value_index"]))
    if not ranks:
        empty = np.empty(0, np.uint32)
        return np.empty(0, np.int64), empty, empty, tables
    r = np.concatenate(ranks)
    order = np.argsort(r, kind="stable")
    return (r[order], np.concatenate(key_codes)[order], np.concatenate(value_codes)[order],
            tables)


def _links(source, rows: np.ndarray | None) -> dict:
    """The links of the timeline whose ends are both among ``rows`` (None: all)."""
    src, dst, kind = source.link_rows()
    if rows is not None:
        keep = np.isin(src, rows) & np.isin(dst, rows)
        src, dst, kind = src[keep], dst[keep], kind[keep]
    return {"link_src": src.astype(np.uint32), "link_dst": dst.astype(np.uint32),
            "link_kind": kind.astype(np.uint8)}


def event_details_block(source, rows: np.ndarray | None = None) -> dict:
    """The stats of the timeline rows ``rows`` (None: every row) of a trace viewer's
    ``source`` (its profile, event ids and index), as typed columns with two tables.

    ``keys`` (stat names) and ``values`` (distinct stat values) are JSON; the columns are
    ``off`` (uint32, n + 1: the stat rows of the i-th row are off[i]..off[i+1]), ``key`` and
    ``val`` (uint32 per stat row: codes into keys and values), ``id`` (uint32 event id per
    row) and ``dur`` (float64 exact duration in us per row).  For some rows only, also
    ``rows`` (the timeline rows covered, ascending), ``start`` (float64) and ``name`` (uint32
    name code) of each.  ``link_src``, ``link_dst`` (uint32 timeline rows) and ``link_kind``
    (uint8, into ``link_labels``: [end's label, start's label] per kind) are the links whose
    two events are covered: a host launch and its device event, a producer and its consumer.
    """
    prof = source.prof
    event_ids = source.event_ids if rows is None else source.event_ids[rows]
    if len(prof.events) >= 2**32:
        raise ValueError(f"{len(prof.events)} events: too many to embed event details")
    n = len(event_ids)
    ranks, key_col, val_col, tables = _stat_rows(prof, event_ids)
    off = np.zeros(n + 1, np.uint32)
    np.cumsum(np.bincount(ranks, minlength=n), out=off[1:])
    columns = {"off": off, "key": key_col.astype(np.uint32), "val": val_col.astype(np.uint32),
               "id": np.asarray(event_ids, np.uint32),
               "dur": np.ascontiguousarray(prof.events["duration_us"].to_numpy()[event_ids],
                                           np.float64)}
    if rows is not None:
        index = source.index
        columns.update({"rows": np.asarray(rows, np.uint32),
                        "start": np.ascontiguousarray(index.start[rows], np.float64),
                        "name": np.asarray(index.name[rows], np.uint32)})
    columns.update(_links(source, rows))
    return {"keys": tables["keys"], "values": tables["values"],
            "link_labels": source.link_labels(),
            "columns": encode_columns(columns)}
