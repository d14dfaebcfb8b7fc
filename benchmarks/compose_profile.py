"""Compose large, realistic benchmark profiles from one real capture.

Two shapes, both built from a real ``*.xplane.pb`` (an XSpace protobuf):

* ``long``: ONE host file of at least ``--gb`` gigabytes. Every line of every plane keeps its
  id, names and display fields; its events are the source line's events repeated K times,
  copy k shifted later by k * span (span: the source profile's time span plus a small gap, so
  copies never overlap and each line stays sorted by start). Metadata, metadata stats and plane
  stats are kept byte for byte; the Task Environment plane's ``profile_stop_time`` is moved to
  ``profile_start_time + K * span`` so the profile window covers every copy. Event stats are
  kept byte for byte too, except the ones that identify a step's work, so that a copy never
  shares an id with another (as in a real long capture, where every step has its own; repeated
  ids would also link each producer to K consumers, K**2 edges per id):

  - in copy k (copy 0 is the source), every event stat (``XEvent.stats``; not metadata or plane
    stats) named ``_p``, ``_c``, ``correlation_id``, ``step_num``, ``iter_num``, ``element_id``
    or ``group_id`` (names resolved through its plane's ``stat_metadata``) whose value is an
    integer (``uint64_value`` or ``int64_value``) gets ``value + k * stride[name]``, in the same
    field;
  - ``stride[name]`` is the largest value of that stat in the whole source (every plane's event
    stats; uint64 values read unsigned, int64 ones signed) plus one, except that ``_p`` and
    ``_c`` share one stride (the largest of both, plus one): a producer's ``_p`` is its
    consumers' ``_c`` in every copy;
  - the sum is taken modulo 2**64, as uint64/int64 arithmetic does: random 64-bit context ids
    and nanosecond-sized ``element_id`` s do not fit K strides, so they wrap (an int64 may turn
    negative). ``compose_long_host`` reports, per stride group, how often a value of one copy
    reappears in another (``id_collisions``; 0 means the copies are disjoint);
  - everything else (``_pt``, ``_ct``, ``_r``, ``id``, ``parent_id``: tf.data iterators stay
    the same, the same pipeline keeps running; stats holding strings or references) is copied
    byte for byte.
* ``pod``: a run directory of ``--hosts`` host files ``worker-<i>.xplane.pb``, byte copies of
  the source (hard links where the file system allows).

    python benchmarks/compose_profile.py long SRC.xplane.pb OUT.xplane.pb --gb 1.1
    python benchmarks/compose_profile.py pod SRC.xplane.pb RUN_DIR --hosts 8

or, from Python (``sys.path.insert(0, "benchmarks")``)::

    from compose_profile import compose_long_host, compose_pod
    compose_long_host(src, out, target_bytes=int(1.1e9))  # {"k": ..., "events": ..., ...}

The long composition works on the protobuf wire format and never builds the output as a
protobuf object tree: the source is read once into memory, its events are split into the bytes
that stay (metadata id, duration, most stats) and the varints that change from copy to copy
(``XEvent.offset_ps``; the value and the length prefix of each ID stat above), and each copy is
encoded with numpy, a block of events at a time, straight into the output file. Varints grow
with the copies, so every event's length (and every line's) is computed per copy, before
anything is written.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple, Sequence

import numpy as np

# varints and field keys as tfprof_nb's Perfetto writer encodes them (negative int64s as
# 10-byte two's complement)
from tfprof_nb.export._protowire import key
from tfprof_nb.export._protowire import varint as encode_varint

GAP_PS = 1_000_000  # 1 us between consecutive copies
CHUNK_EVENTS = 1 << 19  # events encoded per numpy block (bounds the working memory)
TASK_ENV = "Task Environment"

# Wire types and the field numbers used below (xplane.proto).
VARINT, I64, LEN, I32 = 0, 1, 2, 5
SPACE_PLANES = 1
PLANE_NAME, PLANE_LINES, PLANE_STAT_METADATA, PLANE_STATS = 2, 3, 5, 6
LINE_TIMESTAMP_NS, LINE_EVENTS, LINE_DURATION_PS = 3, 4, 9
EVENT_OFFSET_PS, EVENT_DURATION_PS, EVENT_STATS, EVENT_NUM_OCCURRENCES = 2, 3, 4, 5
STAT_METADATA_ID = 1  # in XStat (its metadata id) and in XStatMetadata (its id)
STAT_METADATA_NAME = 2
STAT_VALUE_FIRST, STAT_UINT64, STAT_INT64, STAT_VALUE_LAST = 2, 3, 4, 7  # XStat's value oneof
MAP_KEY, MAP_VALUE = 1, 2  # a map entry's key, and its value (an XStatMetadata)

# Event stats that identify one step's work (producer/consumer contexts, launches, steps,
# iterations, tf.data elements, groups): copy k moves them on by k strides, so copies never share
# a value. Stats in the same tuple of STRIDE_GROUPS are linked by value (a producer's ``_p`` is
# its consumers' ``_c``) and share one stride.
ID_STATS = ("_p", "_c", "correlation_id", "step_num", "iter_num", "element_id", "group_id")
STRIDE_GROUPS = (("_p", "_c"), ("correlation_id",), ("step_num",), ("iter_num",),
                 ("element_id",), ("group_id",))

EVENT_TAG = (LINE_EVENTS << 3) | LEN  # 0x22
OFFSET_TAG = (EVENT_OFFSET_PS << 3) | VARINT  # 0x10
_2_64 = 1 << 64


# ----------------------------------------------------------------------------- scalar wire


class Field(NamedTuple):
    """One field of a serialised message: its number, wire type and byte span.

    ``start`` is where its key begins, ``data`` where its value begins (after the length prefix
    for length-delimited fields), ``end`` where it ends.
    """

    number: int
    wire: int
    start: int
    data: int
    end: int


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode the varint at ``buf[pos]``; return (unsigned value, position after it)."""
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def as_int64(value: int) -> int:
    """Reinterpret an unsigned 64-bit varint value as a signed int64."""
    return value - (1 << 64) if value >= 1 << 63 else value


def iter_fields(buf: bytes, start: int, end: int):
    """Yield every top-level :class:`Field` of the message stored in ``buf[start:end]``."""
    pos = start
    while pos < end:
        tag, data = read_varint(buf, pos)
        wire = tag & 7
        if wire == VARINT:
            _, stop = read_varint(buf, data)
        elif wire == LEN:
            size, data = read_varint(buf, data)
            stop = data + size
        elif wire == I64:
            stop = data + 8
        elif wire == I32:
            stop = data + 4
        else:
            raise ValueError(f"unsupported wire type {wire} at byte {pos}")
        if stop > end:
            raise ValueError(f"field at byte {pos} runs past its message")
        yield Field(tag >> 3, wire, pos, data, stop)
        pos = stop


def varint_field(buf: bytes, start: int, end: int, number: int) -> int | None:
    """The (last) value of varint field ``number`` in the message ``buf[start:end]``, if any."""
    value = None
    for f in iter_fields(buf, start, end):
        if f.number == number and f.wire == VARINT:
            value = read_varint(buf, f.data)[0]
    return value


def string_field(buf: bytes, start: int, end: int, number: int) -> str | None:
    """The (last) value of string field ``number`` in the message ``buf[start:end]``, if any."""
    value = None
    for f in iter_fields(buf, start, end):
        if f.number == number and f.wire == LEN:
            value = bytes(buf[f.data:f.end]).decode("utf-8", "replace")
    return value


# ---------------------------------------------------------------------------- numpy varints


def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Encoded varint size of every value (int64 values are taken as their uint64 bits)."""
    v = values.view(np.uint64) if values.dtype == np.int64 else values.astype(np.uint64)
    sizes = np.ones(v.shape, np.int64)
    for j in range(1, 10):
        sizes += v >= np.uint64(1 << (7 * j))
    return sizes


def read_varints(src: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode the varints starting at each of ``pos`` in ``src``; return (uint64 values, sizes)."""
    values = np.zeros(pos.shape, np.uint64)
    sizes = np.zeros(pos.shape, np.int64)
    more = np.ones(pos.shape, bool)
    last = src.size - 1
    for j in range(10):
        b = src[np.minimum(pos + j, last)].astype(np.uint64)
        values |= np.where(more, (b & np.uint64(0x7F)) << np.uint64(7 * j), np.uint64(0))
        sizes += more
        more &= b >= 0x80
        if not more.any():
            return values, sizes
    raise ValueError("varint longer than 10 bytes")


def scatter_varints(buf: np.ndarray, fixed: np.ndarray, pos: np.ndarray, values: np.ndarray,
                    sizes: np.ndarray) -> None:
    """Write each of ``values`` as a varint of ``sizes`` bytes at ``pos`` in ``buf``.

    The bytes written are marked False in ``fixed`` (the mask of bytes still to fill).
    """
    v = values.view(np.uint64) if values.dtype == np.int64 else values.astype(np.uint64)
    j = 0
    while v.size:
        byte = (v & np.uint64(0x7F)).astype(np.uint8)
        more = sizes > j + 1
        byte[more] |= 0x80
        buf[pos] = byte
        fixed[pos] = False
        if not more.any():
            break
        v, sizes, pos = v[more] >> np.uint64(7), sizes[more], pos[more] + 1
        j += 1


# --------------------------------------------------------------------------- source events


@dataclass
class IdLookup:
    """One plane's stat metadata ids that name an :data:`ID_STATS` stat: ``keys`` (sorted
    uint64 map keys) and ``codes`` (each one's index in ID_STATS)."""

    keys: np.ndarray
    codes: np.ndarray

    @classmethod
    def of(cls, ids: dict[int, str]) -> "IdLookup":
        keys = np.array(sorted(ids), np.uint64)
        codes = np.array([ID_STATS.index(ids[int(k)]) for k in keys], np.int64)
        return cls(keys, codes)

    def code(self, metadata_id: np.ndarray) -> np.ndarray:
        """The ID_STATS index of each metadata id (-1: none of them)."""
        if not self.keys.size:
            return np.full(metadata_id.shape, -1, np.int64)
        at = np.minimum(np.searchsorted(self.keys, metadata_id), self.keys.size - 1)
        return np.where(self.keys[at] == metadata_id, self.codes[at], -1)


@dataclass
class EventBlock:
    """Up to CHUNK_EVENTS events of one line, split into fixed bytes and the varints that change
    from copy to copy ("slots").

    The slots of an event are its ``offset_ps`` field (key and varint; events that carry
    ``num_occurrences`` have none) and, for each of its stats named in :data:`ID_STATS` with an
    integer value, that stat's length prefix and value varint. ``fixed`` holds the events' other
    bytes, in order; event i keeps ``nfixed[i]`` of them. Slots are sorted by their place in the
    source: slot j belongs to event ``slot_ev[j]`` and goes after ``slot_pos[j]`` of its fixed
    bytes; event i's slots are ``slot_lo[i]:slot_hi[i]``. ``off_slot``, ``len_slot`` and
    ``val_slot`` index the slots of each kind; the ID stats (in ``len_slot``/``val_slot`` order)
    have a source value ``base`` (uint64 bits), an ``ID_STATS`` index ``code``, ``signed`` (an
    int64 value) and ``body_fixed``, their length less the value varint. ``strides`` is shared
    with the :class:`Plan` (filled in once the whole source is read): copy k writes
    ``base + k * strides[code]`` (modulo 2**64).
    """

    nfixed: np.ndarray
    fixed: np.ndarray
    offset: np.ndarray  # offset_ps of the events with an offset slot, in event order
    slot_ev: np.ndarray
    slot_pos: np.ndarray
    slot_lo: np.ndarray
    slot_hi: np.ndarray
    off_slot: np.ndarray
    len_slot: np.ndarray
    val_slot: np.ndarray
    base: np.ndarray
    code: np.ndarray
    signed: np.ndarray
    body_fixed: np.ndarray
    strides: np.ndarray

    @property
    def n(self) -> int:
        """Number of events."""
        return self.nfixed.size

    def layout(self, copy: int, delta: int):
        """Copy ``copy`` of the block, shifted by ``delta`` ps: (slot values, slot varint sizes,
        cumulated slot widths (offset keys included) with a leading 0, payload sizes,
        payload length-prefix sizes)."""
        values = np.empty(self.slot_ev.size, np.uint64)
        sizes = np.empty(self.slot_ev.size, np.int64)
        offset = (self.offset + np.int64(delta)).view(np.uint64)
        values[self.off_slot] = offset
        sizes[self.off_slot] = varint_sizes(offset)
        ids = self.base + np.uint64(copy) * self.strides[self.code] if copy else self.base
        id_sizes = varint_sizes(ids)
        values[self.val_slot] = ids
        sizes[self.val_slot] = id_sizes
        length = self.body_fixed + id_sizes
        values[self.len_slot] = length
        sizes[self.len_slot] = varint_sizes(length)
        width = sizes.copy()
        width[self.off_slot] += 1
        cum = np.zeros(width.size + 1, np.int64)
        np.cumsum(width, out=cum[1:])
        payload = self.nfixed + cum[self.slot_hi] - cum[self.slot_lo]
        return values, sizes, cum, payload, varint_sizes(payload)

    def size(self, copy: int, delta: int) -> int:
        """Encoded size of the block's events in copy ``copy`` (keys and prefixes included)."""
        _, _, _, payload, lsize = self.layout(copy, delta)
        return int(payload.sum() + lsize.sum()) + payload.size

    def encode(self, copy: int, delta: int) -> np.ndarray:
        """The block's ``XLine.events`` entries for copy ``copy`` (offsets shifted by ``delta``
        ps, ID stats moved on by ``copy`` strides), as uint8."""
        values, sizes, cum, payload, lsize = self.layout(copy, delta)
        total = 1 + lsize + payload
        ends = np.cumsum(total)
        base = ends - total
        buf = np.empty(int(ends[-1]), np.uint8)
        todo = np.ones(buf.size, bool)
        buf[base] = EVENT_TAG
        todo[base] = False
        scatter_varints(buf, todo, base + 1, payload, lsize)
        # slot j starts after its event's key, prefix, slot_pos fixed bytes and earlier slots
        first = base + 1 + lsize - cum[self.slot_lo]
        at = first[self.slot_ev] + self.slot_pos + cum[:-1]
        keys = at[self.off_slot]
        buf[keys] = OFFSET_TAG
        todo[keys] = False
        at[self.off_slot] += 1
        scatter_varints(buf, todo, at, values, sizes)
        buf[todo] = self.fixed
        return buf


def scan_event_spans(buf: bytes, start: int, end: int, fields: list[Field]
                     ) -> tuple[list[int], list[int], int | None]:
    """Walk an XLine ``buf[start:end]``: return its event payload starts and ends, and the
    index in ``fields`` (filled here with every non-event field) where the events stood."""
    starts: list[int] = []
    ends: list[int] = []
    at = None
    pos = start
    while pos < end:
        if buf[pos] == EVENT_TAG and buf[pos + 1] < 0x80:  # fast path: short event
            data = pos + 2
            pos = data + buf[pos + 1]
        else:
            f = next(iter_fields(buf, pos, end))
            pos = f.end
            if f.number != LINE_EVENTS:
                fields.append(f)
                continue
            if f.wire != LEN:
                raise ValueError(f"XLine.events with wire type {f.wire}")
            data = f.data
        if at is None:
            at = len(fields)
        starts.append(data)
        ends.append(pos)
    if pos != end:
        raise ValueError("XLine runs past its message")
    return starts, ends, at


def read_fields(src: np.ndarray, cur: np.ndarray):
    """Decode the field starting at each of ``cur``: (number, wire type, value start, varint
    value (for varint fields), varint size, end)."""
    tag, tsize = read_varints(src, cur)
    number, wire = (tag >> np.uint64(3)).astype(np.int64), (tag & np.uint64(7)).astype(np.int64)
    data = cur + tsize
    value, vsize = read_varints(src, np.where(wire == VARINT, data, cur))
    return number, wire, data, value, vsize, data + field_data_sizes(src, data, wire, vsize)


def field_data_sizes(src: np.ndarray, data: np.ndarray, wire: np.ndarray,
                     vsize: np.ndarray) -> np.ndarray:
    """Bytes from each field's value start to its end, given its wire type."""
    size = np.select([wire == VARINT, wire == I64, wire == I32], [vsize, 8, 4], -1)
    delimited = np.flatnonzero(wire == LEN)
    if delimited.size:
        length, lsize = read_varints(src, data[delimited])
        size[delimited] = lsize + length.astype(np.int64)
    if (size < 0).any():
        raise ValueError("unsupported wire type inside an XEvent or XStat")
    return size


def locate_fields(src: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """Find, in every event ``src[starts[i]:ends[i]]``, its offset_ps, duration_ps and stats.

    Returns (offset field start, offset field end, offset, duration, shift, stats): an event
    without an offset field gets an empty span where the field belongs (before the first field
    numbered above 2), offset 0, and shift False if it counts ``num_occurrences`` instead.
    ``stats`` is (event index, length prefix start, body start, body end) of every XEvent.stats
    entry.
    """
    n = starts.size
    fstart, fend = ends.copy(), ends.copy()
    offset = np.zeros(n, np.int64)
    duration = np.zeros(n, np.int64)
    shift = np.ones(n, bool)
    placed = np.zeros(n, bool)
    has_offset = np.zeros(n, bool)
    stats: list[tuple] = []
    cur = starts.copy()
    active = np.flatnonzero(cur < ends)
    while active.size:
        c = cur[active]
        number, wire, data, value, vsize, stop = read_fields(src, c)
        is_off = (number == EVENT_OFFSET_PS) & (wire == VARINT)
        idx = active[is_off]
        fstart[idx], fend[idx] = c[is_off], stop[is_off]
        offset[idx] = value[is_off].view(np.int64)
        has_offset[idx] = placed[idx] = True
        is_dur = (number == EVENT_DURATION_PS) & (wire == VARINT)
        duration[active[is_dur]] = value[is_dur].view(np.int64)
        shift[active[number == EVENT_NUM_OCCURRENCES]] = False
        first_after = (number > EVENT_OFFSET_PS) & ~placed[active]
        idx = active[first_after]
        fstart[idx] = fend[idx] = c[first_after]
        placed[idx] = True
        is_stat = (number == EVENT_STATS) & (wire == LEN)
        if is_stat.any():
            lpos = data[is_stat]
            _, lsize = read_varints(src, lpos)
            stats.append((active[is_stat], lpos, lpos + lsize, stop[is_stat]))
        cur[active] = stop
        active = active[cur[active] < ends[active]]
    if (cur > ends).any():
        raise ValueError("XEvent field runs past its message")
    stats_t = tuple(np.concatenate([s[i] for s in stats]) if stats else np.zeros(0, np.int64)
                    for i in range(4))
    return fstart, fend, offset, duration, shift | has_offset, stats_t


def locate_id_stats(src: np.ndarray, body: np.ndarray, body_end: np.ndarray, lookup: IdLookup):
    """For every XStat ``src[body[i]:body_end[i]]``: (ID_STATS index, -1 unless the stat is
    named in ID_STATS and holds a uint64 or int64 value; value varint start; its size; the
    value as uint64 bits; whether it is an int64)."""
    m = body.size
    metadata_id = np.zeros(m, np.uint64)
    kind = np.zeros(m, np.int64)  # the value field's number if a varint, else -1; 0: none
    vpos = np.zeros(m, np.int64)
    vsize = np.zeros(m, np.int64)
    value = np.zeros(m, np.uint64)
    cur = body.copy()
    active = np.flatnonzero(cur < body_end)
    while active.size:
        number, wire, data, val, vsz, stop = read_fields(src, cur[active])
        is_mid = (number == STAT_METADATA_ID) & (wire == VARINT)
        metadata_id[active[is_mid]] = val[is_mid]
        is_val = (number >= STAT_VALUE_FIRST) & (number <= STAT_VALUE_LAST)  # the value oneof
        idx = active[is_val]
        kind[idx] = np.where(wire[is_val] == VARINT, number[is_val], -1)
        vpos[idx], vsize[idx], value[idx] = data[is_val], vsz[is_val], val[is_val]
        cur[active] = stop
        active = active[cur[active] < body_end[active]]
    if (cur > body_end).any():
        raise ValueError("XStat field runs past its message")
    code = lookup.code(metadata_id)
    code[(kind != STAT_UINT64) & (kind != STAT_INT64)] = -1
    return code, vpos, vsize, value, kind == STAT_INT64


def kept_bytes(src: np.ndarray, starts, ends, cut_start, cut_end) -> np.ndarray:
    """The bytes of events ``[starts, ends)`` with the (disjoint) spans ``[cut_start, cut_end)``
    cut out, concatenated."""
    lo, hi = int(starts[0]), int(ends[-1])
    mark = np.zeros(hi - lo + 1, np.int8)
    np.add.at(mark, starts - lo, 1)
    np.add.at(mark, ends - lo, -1)
    np.add.at(mark, cut_start - lo, -1)
    np.add.at(mark, cut_end - lo, 1)
    keep = np.cumsum(mark[:-1], dtype=np.int8).view(bool)
    return src[lo:hi][keep]


def make_block(src: np.ndarray, s: np.ndarray, e: np.ndarray, lookup: IdLookup,
               strides: np.ndarray):
    """The :class:`EventBlock` of events ``[s, e)``, with their offsets and durations."""
    fstart, fend, offset, duration, shift, stats = locate_fields(src, s, e)
    st_ev, st_len, st_body, st_end = stats
    code, vpos, vsize, value, signed = locate_id_stats(src, st_body, st_end, lookup)
    keep = code >= 0
    st_ev, st_len, st_body, st_end = st_ev[keep], st_len[keep], st_body[keep], st_end[keep]
    code, vpos, vsize, value, signed = code[keep], vpos[keep], vsize[keep], value[keep], \
        signed[keep]
    moved = np.flatnonzero(shift)
    n_off, n_id = moved.size, code.size
    # every slot: its event, source position, bytes cut from the source, kind (for ties: an
    # offset inserted where a stat begins goes first)
    ev = np.concatenate([moved, st_ev, st_ev])
    pos = np.concatenate([fstart[moved], st_len, vpos])
    cut = np.concatenate([fend[moved] - fstart[moved], st_body - st_len, vsize])
    kind = np.repeat(np.arange(3, dtype=np.int64), [n_off, n_id, n_id])
    order = np.argsort(pos * 4 + kind, kind="stable")
    ev, pos, cut = ev[order], pos[order], cut[order]
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    events = np.arange(s.size)
    slot_lo = np.searchsorted(ev, events, "left")
    slot_hi = np.searchsorted(ev, events, "right")
    cum = np.zeros(cut.size + 1, np.int64)
    np.cumsum(cut, out=cum[1:])
    slot_pos = (pos - s[ev]) - (cum[:-1] - cum[slot_lo][ev])
    block = EventBlock(
        nfixed=(e - s) - (cum[slot_hi] - cum[slot_lo]),
        fixed=kept_bytes(src, s, e, pos, pos + cut), offset=offset[moved],
        slot_ev=ev, slot_pos=slot_pos, slot_lo=slot_lo, slot_hi=slot_hi,
        off_slot=rank[:n_off], len_slot=rank[n_off:n_off + n_id], val_slot=rank[n_off + n_id:],
        base=value, code=code, signed=signed, body_fixed=(st_end - st_body) - vsize,
        strides=strides)
    return block, offset, duration, shift


def event_blocks(src: np.ndarray, starts: np.ndarray, ends: np.ndarray, line_ps: int,
                 plan: "Plan", lookup: IdLookup) -> list[EventBlock]:
    """Split one line's events into :class:`EventBlock` s; widen ``plan.extent`` ([lo, hi] ps)
    to cover their (shifted) start and end times."""
    blocks = []
    extent = plan.extent
    for i in range(0, starts.size, CHUNK_EVENTS):
        s, e = starts[i:i + CHUNK_EVENTS], ends[i:i + CHUNK_EVENTS]
        block, offset, duration, shift = make_block(src, s, e, lookup, plan.strides)
        if shift.any():
            begin = line_ps + offset[shift]
            extent[0] = min(extent[0], int(begin.min()))
            extent[1] = max(extent[1], int((begin + duration[shift]).max()))
        blocks.append(block)
    return blocks


# ------------------------------------------------------------------------------ output parts


class Part:
    """A piece of the output: knows its encoded size and writes itself."""

    def size(self) -> int:
        raise NotImplementedError

    def write(self, out: BinaryIO) -> None:
        raise NotImplementedError


@dataclass
class Raw(Part):
    """Bytes copied as they are."""

    data: bytes | memoryview

    def size(self) -> int:
        return len(self.data)

    def write(self, out: BinaryIO) -> None:
        out.write(self.data)


@dataclass
class Entry(Part):
    """A length-delimited field (key, length prefix, then its parts)."""

    number: int
    parts: list[Part]
    _body: int | None = None

    def body(self) -> int:
        """Size of the field's value (cached: sizes are computed before writing)."""
        if self._body is None:
            self._body = sum(p.size() for p in self.parts)
        return self._body

    def size(self) -> int:
        return len(key(self.number, LEN)) + len(encode_varint(self.body())) + self.body()

    def write(self, out: BinaryIO) -> None:
        out.write(key(self.number, LEN) + encode_varint(self.body()))
        for p in self.parts:
            p.write(out)


@dataclass
class EventCopies(Part):
    """K copies of one line's events, copy k shifted by k * span ps (its ID stats moved on by
    k strides)."""

    blocks: list[EventBlock]
    span: int
    k: int = 1
    _sizes: list[int] = field(default_factory=list)

    def copy_size(self, copy: int) -> int:
        """Encoded size of copy ``copy`` (cached)."""
        while len(self._sizes) <= copy:
            c = len(self._sizes)
            self._sizes.append(sum(b.size(c, c * self.span) for b in self.blocks))
        return self._sizes[copy]

    def size(self) -> int:
        return sum(self.copy_size(c) for c in range(self.k))

    def write(self, out: BinaryIO) -> None:
        for c in range(self.k):
            for b in self.blocks:
                out.write(memoryview(b.encode(c, c * self.span)))

    def events(self) -> int:
        """Number of events written."""
        return self.k * sum(b.n for b in self.blocks)


@dataclass
class LineDuration(Part):
    """``XLine.duration_ps``, grown by (K - 1) * span to cover the copies."""

    duration: int
    copies: EventCopies

    def data(self) -> bytes:
        grown = self.duration + (self.copies.k - 1) * self.copies.span
        return key(LINE_DURATION_PS, VARINT) + encode_varint(grown)

    def size(self) -> int:
        return len(self.data())

    def write(self, out: BinaryIO) -> None:
        out.write(self.data())


@dataclass(repr=False)
class StopTime(Part):
    """The Task Environment ``profile_stop_time`` stat, moved to start + K * span (or, with no
    start time, to stop + (K - 1) * span)."""

    stat: bytes
    value_field: Field
    plan: "Plan"

    def data(self) -> bytes:
        start, stop = self.plan.window_ns
        span_ns = self.plan.span // 1000
        k = self.plan.k
        stop = stop + (k - 1) * span_ns if start is None else start + k * span_ns
        f = self.value_field
        value = key(f.number, VARINT) + encode_varint(stop)
        body = self.stat[:f.start] + value + self.stat[f.end:]
        return key(PLANE_STATS, LEN) + encode_varint(len(body)) + body

    def size(self) -> int:
        return len(self.data())

    def write(self, out: BinaryIO) -> None:
        out.write(self.data())


# ------------------------------------------------------------------------------- the plan


@dataclass
class Plan:
    """The composed XSpace as parts, plus the knobs that size it."""

    parts: list[Part]
    copies: list[EventCopies]
    span: int = 0
    k: int = 1
    extent: list = field(default_factory=lambda: [1 << 62, -(1 << 62)])
    window_ns: list = field(default_factory=list)  # (start, stop) of the Task Environment
    # per ID_STATS entry, the stride copy k adds k times (uint64, filled once the source is read)
    strides: np.ndarray = field(default_factory=lambda: np.zeros(len(ID_STATS), np.uint64))

    def set_k(self, k: int) -> None:
        """Use ``k`` copies everywhere (clears cached entry sizes)."""
        self.k = k
        for c in self.copies:
            c.k = k
        clear_sizes(self.parts)

    def size(self) -> int:
        """Total encoded size of the composed XSpace."""
        return sum(p.size() for p in self.parts)


def clear_sizes(parts: Sequence[Part]) -> None:
    """Forget the cached sizes of every :class:`Entry` in ``parts``, recursively."""
    for p in parts:
        if isinstance(p, Entry):
            p._body = None
            clear_sizes(p.parts)


def plan_line(buf: bytes, src: np.ndarray, f: Field, plan: Plan, lookup: IdLookup) -> Entry:
    """Parts of one XLine: its own fields as they are, its events as K shifted copies."""
    fields: list[Field] = []
    starts, ends, at = scan_event_spans(buf, f.data, f.end, fields)
    ts = varint_field(buf, f.data, f.end, LINE_TIMESTAMP_NS)
    line_ps = as_int64(ts or 0) * 1000
    copies = EventCopies(event_blocks(src, np.array(starts, np.int64), np.array(ends, np.int64),
                                      line_ps, plan, lookup) if starts else [], span=0)
    plan.copies.append(copies)
    parts: list[Part] = []
    for i, g in enumerate(fields):
        if i == at:
            parts.append(copies)
        if g.number == LINE_DURATION_PS and g.wire == VARINT:
            parts.append(LineDuration(as_int64(read_varint(buf, g.data)[0]), copies))
        else:
            parts.append(Raw(memoryview(buf)[g.start:g.end]))
    if at is not None and at == len(fields):
        parts.append(copies)
    return Entry(PLANE_LINES, parts)


def stat_ids(buf: bytes, fields: list[Field], names: set[str]) -> dict[int, str]:
    """Map stat metadata id (the ``stat_metadata`` map key, which XStat.metadata_id refers to)
    -> name for the plane stat metadata named in ``names``."""
    ids = {}
    for f in fields:
        if f.number != PLANE_STAT_METADATA or f.wire != LEN:
            continue
        name = None
        for g in iter_fields(buf, f.data, f.end):
            if g.number == MAP_VALUE and g.wire == LEN:
                name = string_field(buf, g.data, g.end, STAT_METADATA_NAME)
        if name in names:
            ids[varint_field(buf, f.data, f.end, MAP_KEY) or 0] = name
    return ids


def window_stats(buf: bytes, fields: list[Field]) -> dict[str, tuple[Field, Field]]:
    """The Task Environment plane's profile start/stop stats: name -> (stat, value field)."""
    ids = stat_ids(buf, fields, {"profile_start_time", "profile_stop_time"})
    found = {}
    for f in fields:
        if f.number != PLANE_STATS or f.wire != LEN:
            continue
        inner = list(iter_fields(buf, f.data, f.end))
        mid = [g for g in inner if g.number == STAT_METADATA_ID and g.wire == VARINT]
        values = [g for g in inner if g.number in (3, 4) and g.wire == VARINT]
        if mid and values and read_varint(buf, mid[-1].data)[0] in ids:
            found[ids[read_varint(buf, mid[-1].data)[0]]] = (f, values[-1])
    return found


def plan_plane(buf: bytes, src: np.ndarray, f: Field, plan: Plan) -> Entry:
    """Parts of one XPlane: lines composed, the Task Environment stop time moved."""
    fields = list(iter_fields(buf, f.data, f.end))
    name = string_field(buf, f.data, f.end, PLANE_NAME)
    window = window_stats(buf, fields) if name == TASK_ENV else {}
    value = {k: read_varint(buf, v.data)[0] for k, (_, v) in window.items()}
    if "profile_stop_time" in window:
        plan.window_ns = [value.get("profile_start_time"), value["profile_stop_time"]]
    stop = window.get("profile_stop_time", (None,))[0]
    lookup = IdLookup.of(stat_ids(buf, fields, set(ID_STATS)))
    parts: list[Part] = []
    for g in fields:
        if g.number == PLANE_LINES and g.wire == LEN:
            parts.append(plan_line(buf, src, g, plan, lookup))
        elif g is stop:
            stat, v = window["profile_stop_time"]
            rel = Field(v.number, v.wire, v.start - stat.data, v.data - stat.data,
                        v.end - stat.data)
            parts.append(StopTime(bytes(buf[stat.data:stat.end]), rel, plan))
        else:
            parts.append(Raw(memoryview(buf)[g.start:g.end]))
    return Entry(SPACE_PLANES, parts)


def plan_space(buf: bytes) -> Plan:
    """Read the source XSpace into a :class:`Plan` (K = 1) and fix the span between copies."""
    src = np.frombuffer(buf, np.uint8)
    plan = Plan(parts=[], copies=[])
    for f in iter_fields(buf, 0, len(buf)):
        if f.number == SPACE_PLANES and f.wire == LEN:
            plan.parts.append(plan_plane(buf, src, f, plan))
        else:
            plan.parts.append(Raw(memoryview(buf)[f.start:f.end]))
    strides = id_strides(plan)
    lo, hi = plan.extent
    covered = max(hi - lo, 0)
    if plan.window_ns and plan.window_ns[0] is not None:
        covered = max(covered, (plan.window_ns[1] - plan.window_ns[0]) * 1000)
    plan.span = -(-covered // 1000) * 1000 + GAP_PS
    for c in plan.copies:
        c.span = plan.span
    plan.strides[:] = [strides[name] for name in ID_STATS]
    return plan


def id_values(plan: Plan, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The source values of the event stats named in ``names``: (uint64 bits, int64 or not)."""
    codes = [ID_STATS.index(n) for n in names]
    blocks = [b for c in plan.copies for b in c.blocks]
    picked = [np.isin(b.code, codes) for b in blocks]
    bits = np.concatenate([np.zeros(0, np.uint64)] + [b.base[m] for b, m in zip(blocks, picked)])
    signed = np.concatenate([np.zeros(0, bool)] + [b.signed[m] for b, m in zip(blocks, picked)])
    return bits, signed


def id_strides(plan: Plan) -> dict[str, int]:
    """Stride of every ID stat: the largest value its stride group takes in the source (uint64
    values read unsigned, int64 ones signed) plus one, taken modulo 2**64 (0 becomes 1); 0 for a
    group the source lacks."""
    strides = {}
    for group in STRIDE_GROUPS:
        bits, signed = id_values(plan, group)
        top = None
        if (~signed).any():
            top = int(bits[~signed].max())
        if signed.any():
            top = max(int(bits[signed].view(np.int64).max()), top if top is not None else -_2_64)
        stride = 0 if top is None else ((top + 1) % _2_64 or 1)
        strides.update(dict.fromkeys(group, stride))
    return strides


def id_collisions(plan: Plan) -> dict[str, int]:
    """Per stride group the source has: how many (distinct value, copy distance d) pairs put a
    value of one copy on a value of the copy d later (0: copies never share an id)."""
    found = {}
    for group in STRIDE_GROUPS:
        bits, _ = id_values(plan, group)
        if not bits.size:
            continue
        distinct = np.unique(bits)
        stride = plan.strides[ID_STATS.index(group[0])]
        hits = 0
        for d in range(1, plan.k):
            later = distinct + np.uint64(d * int(stride) % _2_64)
            at = np.minimum(np.searchsorted(distinct, later), distinct.size - 1)
            hits += int(np.count_nonzero(distinct[at] == later))
        found["/".join(group)] = hits
    return found


def choose_k(plan: Plan, target_bytes: int) -> int:
    """The smallest K whose composed file has at least ``target_bytes``."""
    fixed = plan.size()  # at K = 1
    per_copy = max(sum(c.copy_size(0) for c in plan.copies), 1)
    k = max(1, -(-(target_bytes - fixed) // per_copy) + 1)
    plan.set_k(k)
    while k > 1:  # later copies can be a little larger (longer offset varints)
        plan.set_k(k - 1)
        if plan.size() < target_bytes:
            break
        k -= 1
    plan.set_k(k)
    while plan.size() < target_bytes:
        k += 1
        plan.set_k(k)
    return k


# ---------------------------------------------------------------------------------- API


def compose_long_host(src: Path, out: Path, target_bytes: int) -> dict:
    """Write ONE host profile of at least ``target_bytes`` at ``out`` by repeating ``src``'s
    events in time (see the module docstring).

    Copy k (0 .. K-1) of every line's events is shifted by k * span ps, and its event stats
    ``_p``, ``_c``, ``correlation_id``, ``step_num``, ``iter_num``, ``element_id`` and
    ``group_id`` with an integer value hold ``value + k * stride[name]`` (modulo 2**64, in the
    same uint64/int64 field), where ``stride[name]`` is the largest source value of that stat,
    over every plane's event stats, plus one (``_p`` and ``_c`` share the largest of both, so
    producers and consumers stay linked within each copy). Other stats, metadata and plane stats
    are copied byte for byte.

    Returns k, events, bytes, source_events, span_ps, strides (name -> stride, for the ID stats
    the source has), id_collisions (per stride group, how often a source value moved into one
    copy equals one moved into another: 0 means the copies share no id) and seconds.
    """
    t0 = time.perf_counter()
    buf = Path(src).read_bytes()
    plan = plan_space(buf)
    k = choose_k(plan, int(target_bytes))
    size = plan.size()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb", buffering=1 << 22) as f:
        for p in plan.parts:
            p.write(f)
    written = out.stat().st_size
    if written != size:
        raise RuntimeError(f"wrote {written} bytes, planned {size}")
    return {"k": k, "events": sum(c.events() for c in plan.copies), "bytes": written,
            "source_events": sum(c.events() for c in plan.copies) // k, "span_ps": plan.span,
            "strides": {n: int(s) for n, s in zip(ID_STATS, plan.strides) if s},
            "id_collisions": id_collisions(plan), "seconds": round(time.perf_counter() - t0, 2)}


def compose_pod(src: Path, run_dir: Path, hosts: int = 8) -> list[Path]:
    """Fill ``run_dir`` with ``hosts`` byte copies of ``src`` named ``worker-<i>.xplane.pb``
    (hard links where possible); return their paths."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(hosts):
        dst = run_dir / f"worker-{i}.xplane.pb"
        dst.unlink(missing_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copyfile(src, dst)
        paths.append(dst)
    return paths


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    long_ = sub.add_parser("long", help="one host, the source's events repeated in time")
    long_.add_argument("src", type=Path)
    long_.add_argument("out", type=Path)
    long_.add_argument("--gb", type=float, default=1.1, help="target size, in 1e9 bytes")
    pod = sub.add_parser("pod", help="a run directory of host copies")
    pod.add_argument("src", type=Path)
    pod.add_argument("run_dir", type=Path)
    pod.add_argument("--hosts", type=int, default=8)
    args = ap.parse_args(argv)
    if args.cmd == "long":
        res = compose_long_host(args.src, args.out, int(args.gb * 1e9))
        res["out"] = str(args.out)
    else:
        paths = compose_pod(args.src, args.run_dir, args.hosts)
        res = {"hosts": len(paths), "run_dir": str(args.run_dir),
               "bytes_each": args.src.stat().st_size, "files": [str(p) for p in paths]}
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
