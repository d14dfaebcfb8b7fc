"""Decode a serialized XSpace into numpy columns (see :class:`XSpaceData`)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import ProfileFormatError
from . import _wire as w
from ._sniff import describe_known_format, describe_non_xspace
from .model import EventTable, StatTable, XSpaceData
from .strings import decode_spans, intern_spans

__all__ = ["decode_xspace", "read_xspace"]

# Stat names whose kind numbers are public: StatTable.kind uses these codes.
KIND_NAMES = {
    w.KIND_NONE: "none",
    w.KIND_DOUBLE: "double",
    w.KIND_UINT64: "uint64",
    w.KIND_INT64: "int64",
    w.KIND_STR: "str",
    w.KIND_BYTES: "bytes",
    w.KIND_REF: "ref",
}


def read_xspace(path) -> XSpaceData:
    """Read and decode one ``.xplane.pb`` file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ProfileFormatError(path, "is a directory, expected an .xplane.pb file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ProfileFormatError(path, f"cannot be read ({exc.strerror or exc})") from exc
    return decode_xspace(data, path=path)


_TABLES = ((w.C_PLANE, w.P_COLS, 64), (w.C_LINE, w.L_COLS, 32), (w.C_EVENT, w.E_COLS, 8),
           (w.C_STAT, w.S_COLS, 6), (w.C_EVMETA, w.M_COLS, 16), (w.C_STATMETA, w.SM_COLS, 16),
           (w.C_CHILD, w.CH_COLS, 16), (w.C_SPACESTR, w.X_COLS, 32))
# Above this size the decoder counts records first instead of reserving address space for a
# generous guess (which the OS only backs with memory where rows are written).
_SINGLE_PASS_MAX_BYTES = 512 * 2**20


def _table(rows: int, cols: int) -> np.ndarray:
    return np.empty((rows, cols), dtype=np.int64, order="F")


def _walk(buf: np.ndarray, path):
    """Run the wire walker; return the eight record tables trimmed to their row counts."""
    cnt = np.zeros(w.N_COUNTERS, dtype=np.int64)
    if buf.size <= _SINGLE_PASS_MAX_BYTES:
        # one pass into tables sized by a bound on typical record sizes
        tables = [_table(buf.size // per_row + 64, cols) for _, cols, per_row in _TABLES]
        rc = w.walk_space(buf, cnt, *tables, True)
        if rc == 0:
            return [t[:cnt[k]] for t, (k, _, _) in zip(tables, _TABLES)]
        if rc != w.ERR_CAPACITY:
            _raise_wire_error(buf, path, rc, int(cnt[w.C_ERRPOS]))
        del tables
    rc = w.walk_space(buf, cnt, *(_table(0, cols) for _, cols, _ in _TABLES), False)
    if rc < 0:
        _raise_wire_error(buf, path, rc, int(cnt[w.C_ERRPOS]))
    tables = [_table(int(cnt[k]), cols) for k, cols, _ in _TABLES]
    rc = w.walk_space(buf, cnt, *tables, True)
    if rc < 0:
        _raise_wire_error(buf, path, rc, int(cnt[w.C_ERRPOS]))
    return tables


def _raise_wire_error(buf: np.ndarray, path, code: int, offset: int):
    problem = w.ERROR_MESSAGES.get(code, f"decoding failed (code {code})")
    guess = describe_non_xspace(buf)
    if guess:
        problem = f"not an XSpace profile ({guess}); {problem}"
    else:
        problem = f"corrupt XSpace protobuf: {problem}"
    raise ProfileFormatError(path, problem, offset=offset if offset >= 0 else None)


def _lookup(plane_of_row: np.ndarray, key_of_row: np.ndarray, plane_q: np.ndarray,
            key_q: np.ndarray) -> np.ndarray:
    """Row index of (plane, key) in a metadata table, -1 where absent.

    Duplicate keys keep the last row, as protobuf maps do.
    """
    if len(plane_of_row) == 0 or len(plane_q) == 0:
        return np.full(len(plane_q), -1, dtype=np.int64)
    out = np.empty(len(plane_q), dtype=np.int64)
    n_planes = int(max(plane_of_row.max(), plane_q.max())) + 1
    i64 = np.int64
    if w.dense_key_lookup(np.ascontiguousarray(plane_of_row, i64),
                          np.ascontiguousarray(key_of_row, i64), n_planes,
                          np.ascontiguousarray(plane_q, i64), np.ascontiguousarray(key_q, i64),
                          out):
        return out
    order = np.lexsort((np.arange(len(key_of_row)), key_of_row, plane_of_row))
    p_sorted = plane_of_row[order]
    k_sorted = key_of_row[order]
    # keep the last row of every (plane, key) run
    last = np.ones(len(order), dtype=bool)
    last[:-1] = (p_sorted[1:] != p_sorted[:-1]) | (k_sorted[1:] != k_sorted[:-1])
    order, p_sorted, k_sorted = order[last], p_sorted[last], k_sorted[last]
    # binary search on the (plane, key) pair: planes are few, so search per plane block
    out = np.full(len(plane_q), -1, dtype=np.int64)
    bounds = np.searchsorted(p_sorted, np.arange(int(p_sorted[-1]) + 2))
    q_order = np.argsort(plane_q, kind="stable")
    q_planes = plane_q[q_order]
    q_bounds = np.searchsorted(q_planes, np.arange(int(p_sorted[-1]) + 2))
    for p in range(int(p_sorted[-1]) + 1):
        lo, hi = bounds[p], bounds[p + 1]
        qlo, qhi = q_bounds[p], q_bounds[p + 1]
        if lo == hi or qlo == qhi:
            continue
        sel = q_order[qlo:qhi]
        keys = k_sorted[lo:hi]
        pos = np.searchsorted(keys, key_q[sel])
        pos_c = np.minimum(pos, hi - lo - 1)
        hit = keys[pos_c] == key_q[sel]
        out[sel[hit]] = order[lo + pos_c[hit]]
    return out


def decode_xspace(data, path=None) -> XSpaceData:
    """Decode serialized XSpace bytes.  ``path`` is only used in error messages."""
    raw = bytes(data) if not isinstance(data, bytes) else data
    buf = np.frombuffer(raw, dtype=np.uint8)
    if buf.size == 0:
        raise ProfileFormatError(path, "is empty (0 bytes), expected an XSpace profile")
    guess = describe_known_format(buf)
    if guess:
        raise ProfileFormatError(path, f"not an XSpace profile ({guess})")
    P, L, E, S, M, SM, CH, X = _walk(buf, path)
    if P.shape[0] == 0:
        guess = describe_non_xspace(buf)
        raise ProfileFormatError(
            path, "contains no XPlane: not an XSpace profile "
            f"({guess or 'wrong file type or corrupt'})")

    line_plane = L[:, w.L_PLANE].astype(np.int32)
    n_stats = S.shape[0]

    # --- events: plane, metadata row, name ------------------------------------------------
    ev_plane = line_plane[E[:, w.E_LINE]]
    ev_meta_row = _lookup(M[:, w.M_PLANE], M[:, w.M_KEY], ev_plane, E[:, w.E_METADATA_ID])
    em_names = decode_spans(raw, M[:, w.M_NAME_OFF], M[:, w.M_NAME_LEN])
    ev_name, em_name_table = _codes_with_empty(em_names, ev_meta_row)

    # --- stats: owner, plane, name, value ---------------------------------------------------
    stat_plane = np.empty(n_stats, dtype=np.int32)
    kind = np.empty(n_stats, dtype=np.int8)
    owner_kind = np.empty(n_stats, dtype=np.int8)
    w.split_stat_kinds(S, ev_plane, M[:, w.M_PLANE].astype(np.int32), stat_plane, kind,
                       owner_kind)
    value = S[:, w.S_VALUE]
    sm_names = decode_spans(raw, SM[:, w.SM_NAME_OFF], SM[:, w.SM_NAME_LEN])
    stat_meta_row = _lookup(SM[:, w.SM_PLANE], SM[:, w.SM_KEY], stat_plane,
                            S[:, w.S_METADATA_ID])
    stat_name, stat_name_table = _codes_with_empty(sm_names, stat_meta_row)

    # str/bytes values are interned by content; refs resolve to stat-metadata names
    text_rows = np.flatnonzero((kind == w.KIND_STR) | (kind == w.KIND_BYTES))
    values, text_codes = intern_spans(buf, raw, value[text_rows], S[text_rows, w.S_LEN],
                                      kind[text_rows] == w.KIND_BYTES)
    value_code = np.full(n_stats, -1, dtype=np.int32)
    value_code[text_rows] = text_codes
    value[text_rows] = 0  # was the buffer offset of the text (S is ours to change)
    ref_rows = np.flatnonzero(kind == w.KIND_REF)
    if len(ref_rows):
        ref_meta = _lookup(SM[:, w.SM_PLANE], SM[:, w.SM_KEY], stat_plane[ref_rows],
                           value[ref_rows])
        # stat-metadata names become extra entries of the value table (missing ones read "")
        ref_codes, ref_table = _codes_with_empty(sm_names, ref_meta)
        value_code[ref_rows] = len(values) + ref_codes
        values = values + ref_table

    stats = StatTable(
        owner_kind=owner_kind,
        owner=S[:, w.S_OWNER],
        plane=stat_plane,
        metadata_id=S[:, w.S_METADATA_ID],
        name_code=stat_name,
        kind=kind,
        raw_value=value,
        value_code=value_code,
        names=stat_name_table,
        values=values,
    )
    events = EventTable(
        plane=ev_plane,
        line=E[:, w.E_LINE].astype(np.int32),
        metadata_id=E[:, w.E_METADATA_ID],
        metadata_row=ev_meta_row,
        name_code=ev_name,
        offset_ps=E[:, w.E_OFFSET_PS],
        duration_ps=E[:, w.E_DURATION_PS],
        num_occurrences=E[:, w.E_NUM_OCCURRENCES],
        names=em_name_table,
    )

    space_strings = decode_spans(raw, X[:, w.X_OFF], X[:, w.X_LEN])
    field = X[:, w.X_FIELD]
    return XSpaceData(
        path=None if path is None else str(path),
        n_bytes=int(buf.size),
        hostnames=[s for s, f in zip(space_strings, field) if f == 4],
        errors=[s for s, f in zip(space_strings, field) if f == 2],
        warnings=[s for s, f in zip(space_strings, field) if f == 3],
        plane_ids=P[:, w.P_ID],
        plane_names=decode_spans(raw, P[:, w.P_NAME_OFF], P[:, w.P_NAME_LEN]),
        line_plane=line_plane,
        line_ids=L[:, w.L_ID],
        line_display_ids=L[:, w.L_DISPLAY_ID],
        line_names=decode_spans(raw, L[:, w.L_NAME_OFF], L[:, w.L_NAME_LEN]),
        line_display_names=decode_spans(raw, L[:, w.L_DNAME_OFF], L[:, w.L_DNAME_LEN]),
        line_timestamp_ns=L[:, w.L_TIMESTAMP_NS],
        line_duration_ps=L[:, w.L_DURATION_PS],
        event_metadata_plane=M[:, w.M_PLANE].astype(np.int32),
        event_metadata_key=M[:, w.M_KEY],
        event_metadata_id=M[:, w.M_ID],
        event_metadata_names=em_names,
        event_metadata_display_names=decode_spans(raw, M[:, w.M_DNAME_OFF], M[:, w.M_DNAME_LEN]),
        event_metadata_bytes=[raw[o:o + n] for o, n in
                              zip(M[:, w.M_META_OFF].tolist(), M[:, w.M_META_LEN].tolist())],
        event_metadata_children=CH,
        stat_metadata_plane=SM[:, w.SM_PLANE].astype(np.int32),
        stat_metadata_key=SM[:, w.SM_KEY],
        stat_metadata_id=SM[:, w.SM_ID],
        stat_metadata_names=sm_names,
        stat_metadata_descriptions=decode_spans(raw, SM[:, w.SM_DESC_OFF], SM[:, w.SM_DESC_LEN]),
        events=events,
        stats=stats,
    )


def _factorize_strings(strings: list[str]) -> tuple[np.ndarray, list[str]]:
    """Codes into a table of unique strings (first-seen order)."""
    table: dict[str, int] = {}
    codes = np.fromiter((table.setdefault(s, len(table)) for s in strings), dtype=np.int64,
                        count=len(strings))
    return codes, list(table)


def _codes_with_empty(names: list[str], rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """int32 name codes of metadata ``rows``; rows of -1 (missing metadata) get the name ""."""
    codes, table = _factorize_strings(names)
    out = np.empty(len(rows), dtype=np.int32)
    if len(rows) == 0:
        return out, table
    if (rows < 0).any():
        if "" not in table:
            table.append("")
        missing = table.index("")
    else:
        missing = 0
    w.gather_codes(np.ascontiguousarray(rows, np.int64), codes.astype(np.int32), missing, out)
    return out, table
