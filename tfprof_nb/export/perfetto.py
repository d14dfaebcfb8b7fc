"""Every event of a profile as a Perfetto protobuf trace (ui.perfetto.dev, trace_processor).

The file is a ``Trace``: a stream of ``TracePacket`` s on one packet sequence. The first
packets clear the sequence's incremental state and intern every event name, stat name and
string stat value (``InternedData``); then come a ``TrackDescriptor`` per process (a (host,
plane), with a ``ProcessDescriptor``) and per thread (a line, or a host's ``Steps``, with a
``ThreadDescriptor``); then each slice as a ``TrackEvent`` ``TYPE_SLICE_BEGIN`` carrying its
interned name, its arguments as debug annotations (as the Chrome export's) and its flows'
ids (``flow_ids`` on the slice a link leaves, ``terminating_flow_ids`` on the one it ends in:
``_flows``), and a ``TYPE_SLICE_END`` (packets that use interned data say
``SEQ_NEEDS_INCREMENTAL_STATE``).
Timestamps are integer nanoseconds from the profile start (a slice's start and end each rounded
to the nearest ns; if some event starts before the profile start, every time is shifted so the
earliest is 0).

Tracks and processes are those of the Chrome JSON export (see ``_tracks``).  The protobuf wire
format is written here by hand, numpy encoding the varints of a chunk of packets at once; no
Perfetto code or generated protobuf classes are needed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._bytes import BytePool, ChunkPool, Gatherer, record_pieces
from ._content import DOUBLE, INT, STRING, UINT, trace_content
from ._flows import trace_flows
from ._output import output_file, target_path
from ._protowire import I64, VARINT, field, key, utf8, varint, varint_text
from ._sequence import slice_sequence
from ._tracks import track_layout

__all__ = ["write_perfetto"]

# TracePacket fields
_PACKET = 1  # Trace.packet
_TIMESTAMP, _SEQUENCE_ID, _TRACK_EVENT, _INTERNED_DATA, _SEQUENCE_FLAGS = 8, 10, 11, 12, 13
_TRACK_DESCRIPTOR, _FIRST_PACKET_ON_SEQUENCE = 60, 87
_SEQ_INCREMENTAL_STATE_CLEARED, _SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
# TrackEvent fields and types
_TE_ANNOTATIONS, _TE_TYPE, _TE_NAME_IID, _TE_TRACK_UUID = 4, 9, 10, 11
_SLICE_BEGIN, _SLICE_END = 1, 2
# DebugAnnotation fields
_DA_NAME_IID, _DA_UINT, _DA_INT, _DA_DOUBLE, _DA_STRING_IID = 1, 3, 4, 5, 17
# InternedData fields (each entry: iid = 1, name/str = 2)
_EVENT_NAMES, _ANNOTATION_NAMES, _ANNOTATION_STRINGS = 2, 3, 29
# TrackDescriptor, ProcessDescriptor, ThreadDescriptor fields
_TD_UUID, _TD_PROCESS, _TD_THREAD = 1, 3, 4
_PD_PID, _PD_NAME = 1, 6
_THD_PID, _THD_TID, _THD_NAME = 1, 2, 5

_TE_FLOW_IDS, _TE_TERMINATING_FLOW_IDS = 47, 48  # (repeated fixed64)
# a flow id's field key, the two bytes of its varint read as a little-endian uint16
_FLOW_KEY = int.from_bytes(key(_TE_FLOW_IDS, I64), "little")
_END_FLOW_KEY = int.from_bytes(key(_TE_TERMINATING_FLOW_IDS, I64), "little")

_SEQUENCE = 1
_PACKET_KEY = key(_PACKET, 2)[0]
_TS_KEY = key(_TIMESTAMP, VARINT)[0]
_INT_KEY, _UINT_KEY = key(_DA_INT, VARINT)[0], key(_DA_UINT, VARINT)[0]
_INTERNED_PER_PACKET = 1 << 20  # bytes of interned entries per packet, about
_PIECES_PER_CHUNK = 1 << 18  # smaller chunks were no faster, larger ones slower


def _packet(*fields: bytes) -> bytes:
    body = b"".join(fields)
    return key(_PACKET, 2) + varint(len(body)) + body


def _interned_packets(content) -> list[bytes]:
    """Packets interning every event name, annotation name and string value (iid = code + 1),
    the first one clearing the sequence's incremental state."""
    ann = content.annotations
    entries = [(_EVENT_NAMES, i + 1, utf8(s)) for i, s in enumerate(content.names)]
    entries += [(_ANNOTATION_NAMES, i + 1, utf8(s)) for i, s in enumerate(ann.keys)]
    entries += [(_ANNOTATION_STRINGS, i + 1, utf8(s)) for i, s in enumerate(ann.strings)]
    packets, part, size = [], [], 0

    def flush():
        first = not packets
        flags = _SEQ_INCREMENTAL_STATE_CLEARED if first else _SEQ_NEEDS_INCREMENTAL_STATE
        head = [field(_SEQUENCE_ID, _SEQUENCE), field(_SEQUENCE_FLAGS, flags)]
        if first:
            head.append(field(_FIRST_PACKET_ON_SEQUENCE, 1))
        packets.append(_packet(*head, field(_INTERNED_DATA, b"".join(part))))

    for number, iid, text in entries:
        part.append(field(number, field(1, iid) + field(2, text)))
        size += len(text) + 8
        if size >= _INTERNED_PER_PACKET:
            flush()
            part, size = [], 0
    if part or not packets:
        flush()
    return packets


def _descriptor_packets(layout) -> list[bytes]:
    """A TrackDescriptor per process (uuid = pid) and per thread (uuid = tid)."""
    out = []
    for pid, name in zip(layout.process_pid.tolist(), layout.process_names):
        process = field(_PD_PID, pid) + field(_PD_NAME, name)
        out.append(_packet(field(_SEQUENCE_ID, _SEQUENCE), field(
            _TRACK_DESCRIPTOR, field(_TD_UUID, pid) + field(_TD_PROCESS, process))))
    for pid, tid, name in zip(layout.thread_pid.tolist(), layout.thread_tid.tolist(),
                              layout.thread_names):
        thread = field(_THD_PID, pid) + field(_THD_TID, tid) + field(_THD_NAME, name)
        out.append(_packet(field(_SEQUENCE_ID, _SEQUENCE), field(
            _TRACK_DESCRIPTOR, field(_TD_UUID, tid) + field(_TD_THREAD, thread))))
    return out


def _nanoseconds(content) -> tuple[np.ndarray, np.ndarray]:
    """(begin, end) of each slice in integer ns, rounded, shifted to start at >= 0."""
    begin = (content.start_ps + 500) // 1000
    end = (content.start_ps + content.duration_ps + 500) // 1000
    low = int(begin.min()) if len(begin) else 0
    if low < 0:
        begin, end = begin - low, end - low
    return begin, end


def _flow_fields(flows, n_slices: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    """Each slice's flow fields, one after another: its flows' ids as ``flow_ids`` where it is
    their source, as ``terminating_flow_ids`` where their end (ids from 1, as the Chrome
    export's); (the bytes, each slice's offset into them and length)."""
    ids = np.arange(1, len(flows) + 1, dtype=np.uint64)
    owner = np.concatenate([flows.src, flows.dst])
    keys = np.concatenate([np.full(len(flows), _FLOW_KEY, np.uint16),
                           np.full(len(flows), _END_FLOW_KEY, np.uint16)])
    order = np.argsort(owner, kind="stable")
    record = np.zeros(len(owner), dtype=[("key", "<u2"), ("id", "<u8")])
    record["key"] = keys[order]
    record["id"] = np.concatenate([ids, ids])[order]
    count = np.bincount(owner, minlength=n_slices).astype(np.int64) * record.itemsize
    return record.tobytes(), np.cumsum(count) - count, count


class _Pieces:
    """Constants and per-track, per-name, per-key and per-value encodings in one pool."""

    def __init__(self, content, layout, flows):
        pool = BytePool()
        # each slice's flow ids (its begin carries them)
        data, offset, self.flow_length = _flow_fields(flows, len(content))
        self.flow_start = pool.add(data) + offset
        seq = field(_SEQUENCE_ID, _SEQUENCE)
        self.const = {k: (pool.add(v), len(v)) for k, v in {
            # sequence id, flags, then the TrackEvent's key (its length follows)
            "begin_mid": seq + field(_SEQUENCE_FLAGS, _SEQ_NEEDS_INCREMENTAL_STATE)
            + key(_TRACK_EVENT, 2),
            "end_mid": seq + key(_TRACK_EVENT, 2),
            "empty": b""}.items()}
        # per thread: the TrackEvent's type and track uuid
        uuids = [field(_TE_TRACK_UUID, t) for t in layout.thread_tid.tolist()]
        self.begin_track = pool.add_table([field(_TE_TYPE, _SLICE_BEGIN) + u for u in uuids])
        self.end_track = pool.add_table([field(_TE_TYPE, _SLICE_END) + u for u in uuids])
        self.name = pool.add_table([field(_TE_NAME_IID, i + 1) for i in range(len(content.names))])
        ann = content.annotations
        self.key = pool.add_table([field(_DA_NAME_IID, i + 1) for i in range(len(ann.keys))])
        self.string = pool.add_table([field(_DA_STRING_IID, i + 1)
                                      for i in range(len(ann.strings))])
        self.double_bits = np.unique(ann.raw[ann.kind == DOUBLE])
        self.double = pool.add_table([key(_DA_DOUBLE, I64) + b.tobytes()
                                      for b in self.double_bits.reshape(-1, 1)])
        # an annotation's key and length (< 128: name and value take 23 bytes at most)
        self.annotation = pool.add_table([key(_TE_ANNOTATIONS, 2) + bytes([n])
                                          for n in range(128)])
        self.static = pool.build()

    def c(self, name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
        start, length = self.const[name]
        return np.full(n, start, np.int64), np.full(n, length, np.int64)


def _pick(mask, a, b):
    return np.where(mask, a[0], b[0]), np.where(mask, a[1], b[1])


def _chunk_bounds(row_count: np.ndarray) -> list[tuple]:
    """Record ranges of about _PIECES_PER_CHUNK pieces each."""
    cost = np.cumsum(6 + 3 * row_count)
    if not len(cost):
        return []
    cuts = np.searchsorted(cost, np.arange(_PIECES_PER_CHUNK, int(cost[-1]),
                                           _PIECES_PER_CHUNK), side="right")
    edges = np.unique(np.concatenate([[0], cuts, [len(cost)]]))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def _annotation_pieces(pieces: _Pieces, ann, rows: np.ndarray) -> tuple:
    """The DebugAnnotations of annotation ``rows``: (starts, lengths) of shape (m, 3) (key and
    length, name, value), the varints of their integer values and the rows of those (whose
    value starts are relative to that text)."""
    kind, raw = ann.kind[rows], ann.raw[rows]
    val_s, val_l = pieces.c("empty", len(rows))
    pick = np.flatnonzero(kind == STRING)
    val_s[pick], val_l[pick] = pieces.string[0][raw[pick]], pieces.string[1][raw[pick]]
    pick = np.flatnonzero(kind == DOUBLE)
    code = np.searchsorted(pieces.double_bits, raw[pick])
    val_s[pick], val_l[pick] = pieces.double[0][code], pieces.double[1][code]
    ints = np.flatnonzero((kind == INT) | (kind == UINT))
    tags = np.where(kind[ints] == INT, _INT_KEY, _UINT_KEY).astype(np.uint8)
    int_text, val_s[ints], val_l[ints] = varint_text(raw[ints], prefix=tags)
    key_s, key_l = pieces.key[0][ann.key[rows]], pieces.key[1][ann.key[rows]]
    size = key_l + val_l
    head_s, head_l = pieces.annotation[0][size], pieces.annotation[1][size]
    return (np.stack([head_s, key_s, val_s], 1), np.stack([head_l, key_l, val_l], 1),
            int_text, ints)


def _records(content, layout) -> tuple:
    """The begin and end records in sequence order: (is a begin, slice, annotation rows)."""
    records = slice_sequence(layout.group, content.start_ps, content.duration_ps)
    is_begin = records >= 0
    slices = np.where(is_begin, records, ~records)
    bounds = content.annotations.bounds(len(content))
    rows = np.where(is_begin, bounds[slices + 1] - bounds[slices], 0)
    return is_begin, slices, rows, bounds


def _chunks(content, layout, pieces: _Pieces):
    """The begin and end packets of every slice, in sequence order, a chunk at a time."""
    begin_ns, end_ns = _nanoseconds(content)
    is_begin_all, slice_all, count_all, bounds = _records(content, layout)
    pool = ChunkPool(pieces.static)
    gather = Gatherer()
    for lo, hi in _chunk_bounds(count_all):
        c = hi - lo
        is_begin, sl, count = is_begin_all[lo:hi], slice_all[lo:hi], count_all[lo:hi]
        # the annotation rows of the chunk's begin records, record after record
        total = int(count.sum())
        first = np.cumsum(count) - count
        rows = np.repeat(bounds[sl] - first, count) + np.arange(total)
        owner = np.repeat(np.arange(c), count)
        ann_s, ann_l, int_text, ints = _annotation_pieces(pieces, content.annotations, rows)
        # TrackEvent: type and track, name (begins only), annotations
        track, name = layout.track[sl], content.name[sl]
        type_s, type_l = _pick(is_begin,
                               (pieces.begin_track[0][track], pieces.begin_track[1][track]),
                               (pieces.end_track[0][track], pieces.end_track[1][track]))
        name_s = np.where(is_begin, pieces.name[0][name], 0)
        name_l = np.where(is_begin, pieces.name[1][name], 0)
        flow_s = np.where(is_begin, pieces.flow_start[sl], 0)
        flow_l = np.where(is_begin, pieces.flow_length[sl], 0)
        event_len = type_l + name_l + flow_l + np.bincount(
            owner, weights=ann_l.sum(axis=1), minlength=c).astype(np.int64)
        # TracePacket: timestamp, sequence fields, the TrackEvent's key and length
        ts_text, ts_s, ts_l = varint_text(np.where(is_begin, begin_ns[sl], end_ns[sl]),
                                          prefix=_TS_KEY)
        ev_text, ev_s, ev_l = varint_text(event_len)
        mid_s, mid_l = _pick(is_begin, pieces.c("begin_mid", c), pieces.c("end_mid", c))
        pk_text, pk_s, pk_l = varint_text(ts_l + mid_l + ev_l + event_len, prefix=_PACKET_KEY)
        array, (int_at, ts_at, ev_at, pk_at) = pool.with_dynamic(
            [int_text, ts_text, ev_text, pk_text])
        ann_s[ints, 2] += int_at
        head = [(pk_s + pk_at, pk_l), (ts_s + ts_at, ts_l), (mid_s, mid_l),
                (ev_s + ev_at, ev_l), (type_s, type_l), (name_s, name_l), (flow_s, flow_l)]
        none = np.empty((c, 0), np.int64)
        starts, lengths = record_pieces(
            (np.stack([h[0] for h in head], 1), np.stack([h[1] for h in head], 1)),
            (ann_s, ann_l), owner, (none, none))
        yield gather(array, starts, lengths)


def write_perfetto(prof, path) -> Path:
    """Write every event of ``prof`` (and its steps) as a Perfetto protobuf trace to ``path``
    and return the file's path.

    A directory as ``path`` gets ``trace.perfetto-trace``; missing directories are created.
    The file appears only once completely written.
    """
    target = target_path(path, "trace.perfetto-trace")
    content = trace_content(prof)
    layout = track_layout(content)
    pieces = _Pieces(content, layout, trace_flows(prof))
    with output_file(target, "Perfetto trace") as write:
        write(b"".join(_interned_packets(content)))
        write(b"".join(_descriptor_packets(layout)))
        for chunk in _chunks(content, layout, pieces):
            write(chunk)
    return target
