"""Protobuf wire-format walker for XSpace, compiled with numba.

The walker knows the shape of ``xplane.proto`` (XSpace > XPlane > XLine > XEvent > XStat and the
two metadata maps) and writes every record it meets into preallocated int64 tables, one row per
record.  It runs twice: a counting pass (``fill=False``) sizes the tables, a filling pass writes
them.  Strings are not copied here; the tables keep (offset, length) spans into the buffer.

Every read is bounds-checked against the end of the enclosing message, so a malformed file gives
an error code and the byte offset where decoding stopped, never an out-of-bounds read.  The
semantics follow protobuf: unknown fields and known fields with an unexpected wire type are
skipped, the last value of a scalar or ``oneof`` wins, and a repeated occurrence of a singular
message field merges into the first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ---- error codes (returned as negative positions) -------------------------------------------
ERR_TRUNCATED_VARINT = -1
ERR_VARINT_TOO_LONG = -2
ERR_LENGTH_OVERRUN = -3
ERR_FIXED_OVERRUN = -4
ERR_BAD_WIRE_TYPE = -5
ERR_FIELD_ZERO = -6
ERR_CAPACITY = -7
ERR_BAD_TAG = -8

ERROR_MESSAGES = {
    ERR_TRUNCATED_VARINT: "a varint runs past the end of its message (truncated or corrupt data)",
    ERR_VARINT_TOO_LONG: "a varint is longer than 10 bytes (corrupt data)",
    ERR_LENGTH_OVERRUN: "a length-delimited field runs past the end of its message "
    "(truncated or corrupt data)",
    ERR_FIXED_OVERRUN: "a fixed-width field runs past the end of its message "
    "(truncated or corrupt data)",
    ERR_BAD_WIRE_TYPE: "a field has an invalid or unsupported wire type (corrupt data)",
    ERR_FIELD_ZERO: "a field number is 0 (corrupt data)",
    ERR_CAPACITY: "the two decoding passes disagree (internal error)",
    ERR_BAD_TAG: "a field tag is out of range (corrupt data)",
}

# ---- counters -------------------------------------------------------------------------------
C_PLANE, C_LINE, C_EVENT, C_STAT, C_EVMETA, C_STATMETA, C_CHILD, C_SPACESTR, C_ERRPOS = range(9)
N_COUNTERS = 9

# ---- table layouts (column indices) ---------------------------------------------------------
# planes
P_ID, P_NAME_OFF, P_NAME_LEN = range(3)
P_COLS = 3
# lines
(L_PLANE, L_ID, L_DISPLAY_ID, L_NAME_OFF, L_NAME_LEN, L_DNAME_OFF, L_DNAME_LEN,
 L_TIMESTAMP_NS, L_DURATION_PS) = range(9)
L_COLS = 9
# events
E_LINE, E_METADATA_ID, E_OFFSET_PS, E_DURATION_PS, E_NUM_OCCURRENCES = range(5)
E_COLS = 5
# stats: S_KINDS packs owner_kind << 4 | value kind; for str/bytes values S_VALUE is the
# offset of the value in the buffer and S_LEN its length.
S_OWNER, S_METADATA_ID, S_KINDS, S_VALUE, S_LEN = range(5)
S_COLS = 5
OWNER_EVENT, OWNER_EVENT_METADATA, OWNER_PLANE = 0, 1, 2
KIND_NONE, KIND_DOUBLE, KIND_UINT64, KIND_INT64, KIND_STR, KIND_BYTES, KIND_REF = range(7)
# event metadata
(M_PLANE, M_KEY, M_ID, M_NAME_OFF, M_NAME_LEN, M_DNAME_OFF, M_DNAME_LEN, M_META_OFF,
 M_META_LEN) = range(9)
M_COLS = 9
# stat metadata
SM_PLANE, SM_KEY, SM_ID, SM_NAME_OFF, SM_NAME_LEN, SM_DESC_OFF, SM_DESC_LEN = range(7)
SM_COLS = 7
# child ids of event metadata
CH_EVMETA, CH_CHILD = range(2)
CH_COLS = 2
# XSpace-level strings: errors (2), warnings (3), hostnames (4)
X_FIELD, X_OFF, X_LEN = range(3)
X_COLS = 3


@njit(cache=True, _nrt=False)
def _varint(buf, pos, end):
    """Read a varint at ``pos``; return (value, new_pos) or (0, negative error code)."""
    if pos < end:
        b = buf[pos]
        if b < 0x80:  # fast path: one-byte varints (most tags and small values)
            return np.int64(b), pos + 1
    result = np.int64(0)
    shift = 0
    while pos < end and shift <= 63:
        b = np.int64(buf[pos])
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    if pos >= end:
        return np.int64(0), np.int64(ERR_TRUNCATED_VARINT)
    return np.int64(0), np.int64(ERR_VARINT_TOO_LONG)


@njit(cache=True, _nrt=False)
def _fixed64(buf, pos, end):
    if pos + 8 > end:
        return np.int64(0), ERR_FIXED_OVERRUN
    v = np.int64(0)
    for i in range(8):
        v |= np.int64(buf[pos + i]) << (8 * i)
    return v, pos + 8


@njit(cache=True, _nrt=False)
def _tag(buf, pos, end):
    """Read a field tag; return (field, wire_type, new_pos) or (0, 0, negative error)."""
    key, pos = _varint(buf, pos, end)
    if pos < 0:
        return 0, 0, pos
    if key < 0 or key > 0xFFFFFFFF:
        return 0, 0, ERR_BAD_TAG
    field = key >> 3
    if field == 0:
        return 0, 0, ERR_FIELD_ZERO
    return field, key & 7, pos


@njit(cache=True, _nrt=False)
def _length(buf, pos, end):
    """Read a length prefix; return (payload_end, payload_start) or (0, negative error)."""
    n, pos = _varint(buf, pos, end)
    if pos < 0:
        return np.int64(0), pos
    if n < 0 or n > end - pos:
        return np.int64(0), ERR_LENGTH_OVERRUN
    return pos + n, pos


@njit(cache=True, _nrt=False)
def _fail(cnt, field_start, code):
    """Record where the innermost failing field started (first failure wins); pass code on."""
    if cnt[C_ERRPOS] < 0:
        cnt[C_ERRPOS] = field_start
    return code


@njit(cache=True, _nrt=False)
def _skip(buf, pos, end, wire_type):
    """Skip one field value of ``wire_type``; return the new position or a negative error."""
    if wire_type == 0:
        _, pos = _varint(buf, pos, end)
        return pos
    if wire_type == 1:
        if pos + 8 > end:
            return ERR_FIXED_OVERRUN
        return pos + 8
    if wire_type == 2:
        stop, pos = _length(buf, pos, end)
        if pos < 0:
            return pos
        return stop
    if wire_type == 5:
        if pos + 4 > end:
            return ERR_FIXED_OVERRUN
        return pos + 4
    return ERR_BAD_WIRE_TYPE


@njit(cache=True, _nrt=False)
def _stat(buf, pos, end, cnt, S, fill, owner_kind, owner):
    """Parse one XStat occupying buf[pos:end] and append it to ``S``.

    For str/bytes values the row keeps the offset of the bytes as value and their length.
    """
    md = np.int64(0)
    kind = KIND_NONE
    value = np.int64(0)
    length = np.int64(0)
    while pos < end:
        fs = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos < 0:
            return _fail(cnt, fs, pos)
        if wt == 0 and (field == 1 or field == 3 or field == 4 or field == 7):
            v, pos = _varint(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if field == 1:
                md = v
            else:
                value = v
                length = 0
                kind = KIND_UINT64 if field == 3 else (KIND_INT64 if field == 4 else KIND_REF)
        elif wt == 1 and field == 2:
            v, pos = _fixed64(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            value = v
            length = 0
            kind = KIND_DOUBLE
        elif wt == 2 and (field == 5 or field == 6):
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            value = pos
            length = stop - pos
            kind = KIND_STR if field == 5 else KIND_BYTES
            pos = stop
        else:
            pos = _skip(buf, pos, end, wt)
            if pos < 0:
                return _fail(cnt, fs, pos)
    row = cnt[C_STAT]
    if fill:
        if row >= S.shape[0]:
            return ERR_CAPACITY
        S[row, S_OWNER] = owner
        S[row, S_METADATA_ID] = md
        S[row, S_KINDS] = (owner_kind << 4) | kind
        S[row, S_VALUE] = value
        S[row, S_LEN] = length
    cnt[C_STAT] = row + 1
    return pos


@njit(cache=True, _nrt=False)
def _event(buf, pos, end, cnt, E, S, fill, line):
    row = cnt[C_EVENT]
    if fill and row >= E.shape[0]:
        return ERR_CAPACITY
    cnt[C_EVENT] = row + 1
    md = np.int64(0)
    offset = np.int64(0)
    duration = np.int64(0)
    occurrences = np.int64(0)
    while pos < end:
        fs = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos < 0:
            return _fail(cnt, fs, pos)
        if wt == 2 and field == 4:
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            pos = _stat(buf, pos, stop, cnt, S, fill, OWNER_EVENT, row)
            if pos < 0:
                return _fail(cnt, fs, pos)
        elif wt == 0 and (field == 1 or field == 2 or field == 3 or field == 5):
            v, pos = _varint(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if field == 1:
                md = v
            elif field == 2:  # oneof data: offset_ps clears num_occurrences
                offset = v
                occurrences = 0
            elif field == 3:
                duration = v
            else:
                occurrences = v
                offset = 0
        else:
            pos = _skip(buf, pos, end, wt)
            if pos < 0:
                return _fail(cnt, fs, pos)
    if fill:
        E[row, E_LINE] = line
        E[row, E_METADATA_ID] = md
        E[row, E_OFFSET_PS] = offset
        E[row, E_DURATION_PS] = duration
        E[row, E_NUM_OCCURRENCES] = occurrences
    return pos


@njit(cache=True, _nrt=False)
def _line(buf, pos, end, cnt, L, E, S, fill, plane):
    row = cnt[C_LINE]
    if fill:
        if row >= L.shape[0]:
            return ERR_CAPACITY
        L[row, L_PLANE] = plane
        for c in range(1, L_COLS):
            L[row, c] = 0
    cnt[C_LINE] = row + 1
    while pos < end:
        fs = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos < 0:
            return _fail(cnt, fs, pos)
        if wt == 2 and field == 4:
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            pos = _event(buf, pos, stop, cnt, E, S, fill, row)
            if pos < 0:
                return _fail(cnt, fs, pos)
        elif wt == 0 and (field == 1 or field == 10 or field == 3 or field == 9):
            v, pos = _varint(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if fill:
                if field == 1:
                    L[row, L_ID] = v
                elif field == 10:
                    L[row, L_DISPLAY_ID] = v
                elif field == 3:
                    L[row, L_TIMESTAMP_NS] = v
                else:
                    L[row, L_DURATION_PS] = v
        elif wt == 2 and (field == 2 or field == 11):
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if fill:
                if field == 2:
                    L[row, L_NAME_OFF] = pos
                    L[row, L_NAME_LEN] = stop - pos
                else:
                    L[row, L_DNAME_OFF] = pos
                    L[row, L_DNAME_LEN] = stop - pos
            pos = stop
        else:
            pos = _skip(buf, pos, end, wt)
            if pos < 0:
                return _fail(cnt, fs, pos)
    return pos


@njit(cache=True, _nrt=False)
def _event_metadata(buf, pos, end, cnt, M, S, CH, fill, row):
    """Parse (or merge into row ``row``) one XEventMetadata."""
    while pos < end:
        fs = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos < 0:
            return _fail(cnt, fs, pos)
        if wt == 0 and (field == 1 or field == 6):
            v, pos = _varint(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if field == 1:
                if fill:
                    M[row, M_ID] = v
            else:
                crow = cnt[C_CHILD]
                if fill:
                    if crow >= CH.shape[0]:
                        return ERR_CAPACITY
                    CH[crow, CH_EVMETA] = row
                    CH[crow, CH_CHILD] = v
                cnt[C_CHILD] = crow + 1
        elif wt == 2 and field == 6:  # packed child ids
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            while pos < stop:
                v, pos = _varint(buf, pos, stop)
                if pos < 0:
                    return _fail(cnt, fs, pos)
                crow = cnt[C_CHILD]
                if fill:
                    if crow >= CH.shape[0]:
                        return ERR_CAPACITY
                    CH[crow, CH_EVMETA] = row
                    CH[crow, CH_CHILD] = v
                cnt[C_CHILD] = crow + 1
        elif wt == 2 and field == 5:
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            pos = _stat(buf, pos, stop, cnt, S, fill, OWNER_EVENT_METADATA, row)
            if pos < 0:
                return _fail(cnt, fs, pos)
        elif wt == 2 and (field == 2 or field == 3 or field == 4):
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if fill:
                col = M_NAME_OFF if field == 2 else (M_META_OFF if field == 3 else M_DNAME_OFF)
                M[row, col] = pos
                M[row, col + 1] = stop - pos
            pos = stop
        else:
            pos = _skip(buf, pos, end, wt)
            if pos < 0:
                return _fail(cnt, fs, pos)
    return pos


@njit(cache=True, _nrt=False)
def _stat_metadata(buf, pos, end, cnt, SM, fill, row):
    """Parse (or merge into row ``row``) one XStatMetadata."""
    while pos < end:
        fs = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos < 0:
            return _fail(cnt, fs, pos)
        if wt == 0 and field == 1:
            v, pos = _varint(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if fill:
                SM[row, SM_ID] = v
        elif wt == 2 and (field == 2 or field == 3):
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if fill:
                col = SM_NAME_OFF if field == 2 else SM_DESC_OFF
                SM[row, col] = pos
                SM[row, col + 1] = stop - pos
            pos = stop
        else:
            pos = _skip(buf, pos, end, wt)
            if pos < 0:
                return _fail(cnt, fs, pos)
    return pos


@njit(cache=True, _nrt=False)
def _map_entry(buf, pos, end, cnt, M, SM, S, CH, fill, plane, is_event_map):
    """Parse one map entry {key: int64, value: XEventMetadata | XStatMetadata}."""
    row = -1
    key = np.int64(0)
    while pos < end:
        fs = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos < 0:
            return _fail(cnt, fs, pos)
        if wt == 0 and field == 1:
            key, pos = _varint(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
        elif wt == 2 and field == 2:
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if row < 0:
                row = _new_metadata_row(cnt, M, SM, fill, plane, is_event_map)
                if row < 0:
                    return row
            if is_event_map:
                pos = _event_metadata(buf, pos, stop, cnt, M, S, CH, fill, row)
            else:
                pos = _stat_metadata(buf, pos, stop, cnt, SM, fill, row)
            if pos < 0:
                return _fail(cnt, fs, pos)
        else:
            pos = _skip(buf, pos, end, wt)
            if pos < 0:
                return _fail(cnt, fs, pos)
    if row < 0:  # an entry without a value still maps its key to an empty message
        row = _new_metadata_row(cnt, M, SM, fill, plane, is_event_map)
        if row < 0:
            return row
    if fill:
        if is_event_map:
            M[row, M_KEY] = key
        else:
            SM[row, SM_KEY] = key
    return pos


@njit(cache=True, _nrt=False)
def _new_metadata_row(cnt, M, SM, fill, plane, is_event_map):
    if is_event_map:
        row = cnt[C_EVMETA]
        if fill:
            if row >= M.shape[0]:
                return ERR_CAPACITY
            M[row, M_PLANE] = plane
            for c in range(1, M_COLS):
                M[row, c] = 0
        cnt[C_EVMETA] = row + 1
    else:
        row = cnt[C_STATMETA]
        if fill:
            if row >= SM.shape[0]:
                return ERR_CAPACITY
            SM[row, SM_PLANE] = plane
            for c in range(1, SM_COLS):
                SM[row, c] = 0
        cnt[C_STATMETA] = row + 1
    return row


@njit(cache=True, _nrt=False)
def _plane(buf, pos, end, cnt, P, L, E, S, M, SM, CH, fill):
    row = cnt[C_PLANE]
    if fill:
        if row >= P.shape[0]:
            return ERR_CAPACITY
        for c in range(P_COLS):
            P[row, c] = 0
    cnt[C_PLANE] = row + 1
    while pos < end:
        fs = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos < 0:
            return _fail(cnt, fs, pos)
        if wt == 2 and field == 3:
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            pos = _line(buf, pos, stop, cnt, L, E, S, fill, row)
        elif wt == 2 and (field == 4 or field == 5):
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            pos = _map_entry(buf, pos, stop, cnt, M, SM, S, CH, fill, row, field == 4)
        elif wt == 2 and field == 6:
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            pos = _stat(buf, pos, stop, cnt, S, fill, OWNER_PLANE, row)
        elif wt == 0 and field == 1:
            v, pos = _varint(buf, pos, end)
            if fill and pos >= 0:
                P[row, P_ID] = v
        elif wt == 2 and field == 2:
            stop, pos = _length(buf, pos, end)
            if pos < 0:
                return _fail(cnt, fs, pos)
            if fill:
                P[row, P_NAME_OFF] = pos
                P[row, P_NAME_LEN] = stop - pos
            pos = stop
        else:
            pos = _skip(buf, pos, end, wt)
        if pos < 0:
            return _fail(cnt, fs, pos)
    return pos


@njit(cache=True, nogil=True, _nrt=False)
def walk_space(buf, cnt, P, L, E, S, M, SM, CH, X, fill):
    """Walk a whole serialized XSpace.  Returns 0 or a negative error code.

    ``cnt`` holds the record counters on return; on error ``cnt[C_ERRPOS]`` is the byte offset of
    the field where decoding failed.
    """
    for i in range(N_COUNTERS):
        cnt[i] = 0
    cnt[C_ERRPOS] = -1
    pos = np.int64(0)
    end = np.int64(buf.shape[0])
    while pos < end:
        field_start = pos
        field, wt, pos = _tag(buf, pos, end)
        if pos >= 0:
            if wt == 2 and field == 1:
                stop, pos = _length(buf, pos, end)
                if pos >= 0:
                    pos = _plane(buf, pos, stop, cnt, P, L, E, S, M, SM, CH, fill)
            elif wt == 2 and (field == 2 or field == 3 or field == 4):
                stop, pos = _length(buf, pos, end)
                if pos >= 0:
                    row = cnt[C_SPACESTR]
                    if fill:
                        if row >= X.shape[0]:
                            pos = ERR_CAPACITY
                        else:
                            X[row, X_FIELD] = field
                            X[row, X_OFF] = pos
                            X[row, X_LEN] = stop - pos
                    cnt[C_SPACESTR] = row + 1
                    if pos >= 0:
                        pos = stop
            else:
                pos = _skip(buf, pos, end, wt)
        if pos < 0:
            return _fail(cnt, field_start, pos)
    return 0


@njit(cache=True, nogil=True)
def hash_spans(buf, offs, lens, salt):
    """FNV-1a 64-bit hash of each byte span, mixed with its length and a per-row salt."""
    n = offs.shape[0]
    out = np.empty(n, dtype=np.uint64)
    prime = np.uint64(1099511628211)
    for i in range(n):
        h = np.uint64(14695981039346656037) ^ np.uint64(salt[i])
        o = offs[i]
        for j in range(lens[i]):
            h = (h ^ np.uint64(buf[o + j])) * prime
        out[i] = h ^ (np.uint64(lens[i]) * np.uint64(0x9E3779B97F4A7C15))
    return out


@njit(cache=True, nogil=True, _nrt=False)
def spans_equal_to_representative(buf, offs, lens, rep_of_row):
    """True when every span equals the span of its representative row (no hash collision)."""
    for i in range(offs.shape[0]):
        r = rep_of_row[i]
        if lens[i] != lens[r]:
            return False
        a = offs[i]
        b = offs[r]
        for j in range(lens[i]):
            if buf[a + j] != buf[b + j]:
                return False
    return True


@njit(cache=True, nogil=True)
def dense_key_lookup(table_plane, table_key, n_planes, query_plane, query_key, out):
    """Fill ``out`` with the row of (query_plane, query_key) in a metadata table, -1 if absent.

    Uses one dense array per plane indexed by key, which fits the small sequential ids the
    profiler assigns; the last row wins for duplicate keys (protobuf map semantics).  Returns
    False, leaving ``out`` unspecified, when keys are negative or too sparse for dense arrays.
    """
    max_key = np.full(n_planes, -1, dtype=np.int64)
    rows_in_plane = np.zeros(n_planes, dtype=np.int64)
    for r in range(table_key.shape[0]):
        p = table_plane[r]
        k = table_key[r]
        if k < 0:
            return False
        rows_in_plane[p] += 1
        if k > max_key[p]:
            max_key[p] = k
    base = np.zeros(n_planes + 1, dtype=np.int64)
    for p in range(n_planes):
        if max_key[p] > 4 * rows_in_plane[p] + 65536:
            return False
        base[p + 1] = base[p] + max_key[p] + 1
    dense = np.full(base[n_planes], -1, dtype=np.int64)
    for r in range(table_key.shape[0]):
        dense[base[table_plane[r]] + table_key[r]] = r
    for i in range(query_key.shape[0]):
        p = query_plane[i]
        k = query_key[i]
        if p < 0 or p >= n_planes or k < 0 or k > max_key[p]:
            out[i] = -1
        else:
            out[i] = dense[base[p] + k]
    return True


@njit(cache=True, nogil=True)
def split_stat_kinds(S, event_plane, metadata_plane, plane_out, kind_out, owner_kind_out):
    """Unpack S_KINDS and find the plane of every stat from its owner."""
    for i in range(S.shape[0]):
        packed = S[i, S_KINDS]
        ok = packed >> 4
        kind_out[i] = packed & 15
        owner_kind_out[i] = ok
        owner = S[i, S_OWNER]
        if ok == OWNER_EVENT:
            plane_out[i] = event_plane[owner]
        elif ok == OWNER_EVENT_METADATA:
            plane_out[i] = metadata_plane[owner]
        else:
            plane_out[i] = owner


@njit(cache=True, nogil=True)
def gather_codes(rows, codes, missing, out):
    """out[i] = codes[rows[i]], or ``missing`` where rows[i] < 0."""
    for i in range(rows.shape[0]):
        r = rows[i]
        out[i] = missing if r < 0 else codes[r]
