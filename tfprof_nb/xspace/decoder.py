"""Decode a serialized XSpace into numpy columns (see :class:`XSpaceData`)."""

from __future__ import annotations

import mmap
import os

import numpy as np

from .. import _native as native
from .._native.layout import COLUMNS, KINDS, SMALL_TABLES, TABLES
from ..errors import ProfileFormatError
from ._sniff import describe_known_format, describe_non_xspace
from .model import EventTable, StatTable, XSpaceData
from .strings import decode_spans

__all__ = ["decode_xspace", "read_local_xspace"]

# Stat names whose kind numbers are public: StatTable.kind uses these codes.
KIND_NAMES = dict(enumerate(KINDS))


def read_local_xspace(path) -> XSpaceData:
    """Read and decode one local ``.xplane.pb`` file (mapped, not copied)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ProfileFormatError(path, "is a directory, expected an .xplane.pb file")
    try:
        with open(path, "rb") as f:
            try:  # map the file: the page cache is read in place, nothing is copied
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):  # empty files and special files cannot be mapped
                data = f.read()
    except OSError as exc:
        raise ProfileFormatError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        return decode_xspace(data, path=path)
    finally:
        if isinstance(data, mmap.mmap):
            try:
                data.close()
            except BufferError:  # an error's traceback still holds a view: closed when freed
                pass


# record tables of the walker (tfprof_nb/_native/wire.c; layout in _native/layout.py): index,
# columns, bytes per row guess
(T_P, T_L, T_M, T_SM, T_CH, T_X, T_EV, T_EX, T_ST, T_TX) = range(len(TABLES))
_SMALL = {TABLES.index(t): len(cols) for t, cols in SMALL_TABLES.items()}
Pc, Lc, Mc, SMc, Xc, EXc = (COLUMNS[t] for t in ("P", "L", "M", "SM", "X", "EX"))
_BYTES_PER_ROW = {T_P: 256, T_L: 64, T_M: 16, T_SM: 16, T_CH: 16, T_X: 64, T_EV: 8, T_EX: 512,
                  T_ST: 5, T_TX: 8}
KIND_NONE, KIND_DOUBLE, KIND_UINT64, KIND_INT64, KIND_STR, KIND_BYTES, KIND_REF = \
    range(len(KINDS))
ERR_CAPACITY = -7
ERROR_MESSAGES = {
    -1: "a varint runs past the end of its message (truncated or corrupt data)",
    -2: "a varint is longer than 10 bytes (corrupt data)",
    -3: "a length-delimited field runs past the end of its message (truncated or corrupt data)",
    -4: "a fixed-width field runs past the end of its message (truncated or corrupt data)",
    -5: "a field has an invalid or unsupported wire type (corrupt data)",
    -6: "a field number is 0 (corrupt data)",
    -8: "a field tag is out of range (corrupt data)",
    -9: "too many records for 32-bit row numbers, or out of memory",
}


class _Tables:
    """The walker's output columns, allocated for given capacities (rows past a table's
    count are never touched, so a generous capacity costs address space, not memory)."""

    def __init__(self, cap: np.ndarray):
        self.cap = cap
        self.small = {t: np.empty((int(cap[t]), cols), dtype=np.int64)
                      for t, cols in _SMALL.items()}
        ne, ns = int(cap[T_EV]), int(cap[T_ST])
        self.ev_line = np.empty(ne, np.int32)
        self.ev_meta = np.empty(ne, np.int32)
        self.ev_off = np.empty(ne, np.int64)
        self.ev_dur = np.empty(ne, np.int64)
        self.st_owner = np.empty(ns, np.int32)
        self.st_okind = np.empty(ns, np.int8)
        self.st_meta = np.empty(ns, np.int32)
        self.st_kind = np.empty(ns, np.int8)
        self.st_value = np.empty(ns, np.int64)
        self.tx_row = np.empty(int(cap[T_TX]), np.int32)
        self.tx_len = np.empty(int(cap[T_TX]), np.int32)

    def addresses(self) -> np.ndarray:
        s = self.small
        arrays = [s[T_P], s[T_L], s[T_M], s[T_SM], s[T_CH], s[T_X], self.ev_line, self.ev_meta,
                  self.ev_off, self.ev_dur, s[T_EX], self.st_owner, self.st_okind, self.st_meta,
                  self.st_kind, self.st_value, self.tx_row, self.tx_len]
        return np.array([a.ctypes.data for a in arrays], dtype=np.int64)

    def trim(self, cnt: np.ndarray) -> None:
        for t in _SMALL:
            self.small[t] = self.small[t][:cnt[t]]
        ne, ns, nt = int(cnt[T_EV]), int(cnt[T_ST]), int(cnt[T_TX])
        for name in ("ev_line", "ev_meta", "ev_off", "ev_dur"):
            setattr(self, name, getattr(self, name)[:ne])
        for name in ("st_owner", "st_okind", "st_meta", "st_kind", "st_value"):
            setattr(self, name, getattr(self, name)[:ns])
        self.tx_row, self.tx_len = self.tx_row[:nt], self.tx_len[:nt]


def _walk(buf: np.ndarray, path) -> _Tables:
    """Run the wire walker: once into tables sized by a guess, again with exact sizes if a
    guess was too small."""
    lib = native.lib()
    cnt = np.zeros(len(_BYTES_PER_ROW) + 2, dtype=np.int64)
    cap = np.array([buf.size // _BYTES_PER_ROW[t] + 64 for t in range(len(_BYTES_PER_ROW))],
                   dtype=np.int64)
    for _ in range(2):
        tables = _Tables(cap)
        addresses = tables.addresses()  # kept alive through the call
        rc = lib.tfp_walk_space(buf.ctypes.data, buf.size, addresses.ctypes.data,
                                cap.ctypes.data, cnt.ctypes.data)
        if rc == 0:
            tables.trim(cnt)
            tables.stats_without_metadata = int(cnt[-1])
            return tables
        if rc != ERR_CAPACITY:
            _raise_wire_error(buf, path, int(rc), int(cnt[-2]))
        cap = np.maximum(cnt[:-2], 1)
        del tables
    _raise_wire_error(buf, path, ERR_CAPACITY, -1)


def _raise_wire_error(buf: np.ndarray, path, code: int, offset: int):
    problem = ERROR_MESSAGES.get(code, f"decoding failed (code {code})")
    guess = describe_non_xspace(buf)
    if guess:
        problem = f"not an XSpace profile ({guess}); {problem}"
    else:
        problem = f"corrupt XSpace protobuf: {problem}"
    raise ProfileFormatError(path, problem, offset=offset if offset >= 0 else None)


def _intern_text(buf: np.ndarray, raw: bytes, t: _Tables) -> list:
    """Replace the buffer offsets of str/bytes stat values by codes into the returned table
    of distinct values (``bytes`` for bytes values, else ``str``)."""
    n = len(t.tx_row)
    if n == 0:
        return []
    rep_off = np.empty(n, np.int64)
    rep_len = np.empty(n, np.int32)
    rep_kind = np.empty(n, np.int8)
    k = native.lib().tfp_intern_text(
        buf.ctypes.data, n, t.tx_row.ctypes.data, t.tx_len.ctypes.data, t.st_kind.ctypes.data,
        t.st_value.ctypes.data, rep_off.ctypes.data, rep_len.ctypes.data, rep_kind.ctypes.data)
    if k < 0:
        raise MemoryError("out of memory while decoding stat values")
    values = []
    for off, length, kind in zip(rep_off[:k].tolist(), rep_len[:k].tolist(),
                                 rep_kind[:k].tolist()):
        chunk = raw[off:off + length]
        values.append(chunk if kind == KIND_BYTES else chunk.decode("utf-8", "replace"))
    return values


def _name_codes(names: list[str], any_missing: bool) -> tuple[np.ndarray, list[str], int]:
    """(int32 code of each metadata row's name into a table of distinct names in first-seen
    order, the table, the code of rows that are missing): missing metadata reads as the name
    "" (added to the table when ``any_missing``)."""
    table: dict[str, int] = {}
    codes = np.fromiter((table.setdefault(s, len(table)) for s in names), dtype=np.int32,
                        count=len(names))
    missing = table.setdefault("", len(table)) if any_missing else 0
    return codes, list(table), missing


def _codes_of(rows: np.ndarray, code_of_row: np.ndarray, missing: int, n_names: int,
              rows_too: bool = False):
    """Name codes of a column of metadata rows (``missing`` where -1), as uint16 when the
    names fit, else int32; with ``rows_too`` also the rows as int16 when they fit."""
    names = np.empty(len(rows), np.uint16 if n_names <= 2**16 else np.int32)
    rows16 = np.empty(len(rows), np.int16) if rows_too and len(code_of_row) < 2**15 else None
    table = code_of_row if len(code_of_row) else np.zeros(1, np.int32)
    if len(rows):
        native.lib().tfp_narrow_codes(rows.ctypes.data, len(rows), table.ctypes.data, missing,
                                      names.ctypes.data, names.itemsize,
                                      0 if rows16 is None else rows16.ctypes.data)
    return names, (rows if rows16 is None else rows16)


def decode_xspace(data, path=None) -> XSpaceData:
    """Decode serialized XSpace bytes (or a read-only ``mmap``).  ``path`` is only used in
    error messages."""
    raw = data if isinstance(data, (bytes, mmap.mmap)) else bytes(data)
    buf = np.frombuffer(raw, dtype=np.uint8)
    if buf.size == 0:
        raise ProfileFormatError(path, "is empty (0 bytes), expected an XSpace profile")
    guess = describe_known_format(buf)
    if guess:
        raise ProfileFormatError(path, f"not an XSpace profile ({guess})")
    t = _walk(buf, path)
    P, L, M, SM, CH, X, EX = (t.small[k] for k in (T_P, T_L, T_M, T_SM, T_CH, T_X, T_EX))
    if P.shape[0] == 0:
        guess = describe_non_xspace(buf)
        raise ProfileFormatError(
            path, "contains no XPlane: not an XSpace profile "
            f"({guess or 'wrong file type or corrupt'})")

    em_names = decode_spans(raw, M[:, Mc.name_off], M[:, Mc.name_len])
    em_codes, event_names, missing_event = _name_codes(em_names,
                                                       bool((EX[:, EXc.what] == 1).any()))
    name_code, metadata_row = _codes_of(t.ev_meta, em_codes, missing_event, len(event_names),
                                        rows_too=True)
    sm_names = decode_spans(raw, SM[:, SMc.name_off], SM[:, SMc.name_len])
    sm_codes, stat_names, missing_stat = _name_codes(sm_names, t.stats_without_metadata > 0)
    values = _intern_text(buf, raw, t)
    is_ref = t.st_kind == KIND_REF
    if is_ref.any():
        # references resolve to stat-metadata names, appended to the value table ("" when
        # the referenced metadata is missing)
        ref_names = sm_names + [""]
        ref_codes, ref_table, _ = _name_codes(ref_names, False)
        native.lib().tfp_resolve_refs(t.st_kind.ctypes.data, len(t.st_kind),
                                      t.st_value.ctypes.data, ref_codes.ctypes.data, len(values),
                                      int(ref_codes[-1]))
        values = values + ref_table
    del is_ref
    stats = StatTable(owner_kind=t.st_okind, owner=t.st_owner,
                      name_code=_codes_of(t.st_meta, sm_codes, missing_stat, len(stat_names))[0],
                      kind=t.st_kind, raw_value=t.st_value, names=stat_names, values=values)
    line_plane = L[:, Lc.plane].astype(np.int32)
    events = EventTable(line=t.ev_line, metadata_row=metadata_row, name_code=name_code,
                        start_ps=t.ev_off, duration_ps=t.ev_dur, names=event_names,
                        line_plane=line_plane, metadata_key=M[:, Mc.key].copy(), extras=EX,
                        line_start_ps=np.zeros(len(L), np.int64))
    space_strings = decode_spans(raw, X[:, Xc.off], X[:, Xc.len])
    field = X[:, Xc.field]
    space = XSpaceData(
        path=None if path is None else str(path),
        n_bytes=int(buf.size),
        hostnames=[s for s, f in zip(space_strings, field) if f == 4],
        errors=[s for s, f in zip(space_strings, field) if f == 2],
        warnings=[s for s, f in zip(space_strings, field) if f == 3],
        plane_ids=P[:, Pc.id].copy(),
        plane_names=decode_spans(raw, P[:, Pc.name_off], P[:, Pc.name_len]),
        line_plane=line_plane,
        line_ids=L[:, Lc.id].copy(),
        line_display_ids=L[:, Lc.display_id].copy(),
        line_names=decode_spans(raw, L[:, Lc.name_off], L[:, Lc.name_len]),
        line_display_names=decode_spans(raw, L[:, Lc.dname_off], L[:, Lc.dname_len]),
        line_timestamp_ns=L[:, Lc.timestamp_ns].copy(),
        line_duration_ps=L[:, Lc.duration_ps].copy(),
        event_metadata_plane=M[:, Mc.plane].astype(np.int32),
        event_metadata_key=events.metadata_key,
        event_metadata_id=M[:, Mc.id].copy(),
        event_metadata_names=em_names,
        event_metadata_display_names=decode_spans(raw, M[:, Mc.dname_off], M[:, Mc.dname_len]),
        event_metadata_bytes=[raw[o:o + n] for o, n in zip(M[:, Mc.meta_off].tolist(),
                                                           M[:, Mc.meta_len].tolist())],
        event_metadata_children=CH.copy(),
        stat_metadata_plane=SM[:, SMc.plane].astype(np.int32),
        stat_metadata_key=SM[:, SMc.key].copy(),
        stat_metadata_id=SM[:, SMc.id].copy(),
        stat_metadata_names=sm_names,
        stat_metadata_descriptions=decode_spans(raw, SM[:, SMc.desc_off], SM[:, SMc.desc_len]),
        events=events,
        stats=stats,
    )
    # offsets become starts relative to the space's origin, in place
    events.line_start_ps = space.line_start_ps()
    if len(events):
        native.lib().tfp_add_gathered_i64(events.start_ps.ctypes.data, events.line.ctypes.data,
                                          len(events), events.line_start_ps.ctypes.data)
    return space
