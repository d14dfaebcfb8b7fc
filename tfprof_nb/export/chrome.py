"""Every event of a profile as Chrome's Trace Event Format JSON (chrome://tracing, Perfetto).

The file is ``{"displayTimeUnit": "ns", "otherData": {...}, "traceEvents": [...]}``. Each
(host, plane) is a process and each line a thread, named by metadata events; each event is a
complete event (``"ph": "X"``) with its arguments as ``args`` (its own stats, then its event
metadata's as ``metadata.<name>``: ``analysis.trace.event_arguments``); each host's steps are a
thread ``Steps`` of its ``/host:CPU`` process; each link the trace viewer draws (a launch and
its kernel, a producer and its consumer: ``_flows``) is a flow, a ``"ph":"s"`` event at its
source's start and a ``"ph":"f"`` (``"bp":"e"``) at its end's. ``ts`` and ``dur`` are
microseconds relative to the profile start written as the exact decimal of the picoseconds
(``12.345678``, trailing zeros dropped), so reading them back as floats gives exactly
``prof.events.start_us`` and ``duration_us``. Stat values keep their type: integers are JSON
integers (written as strings when beyond +-2**53, where JavaScript viewers would round them),
doubles are Python's shortest round-trip text (``"inf"``/``"nan"`` as strings), strings are
strings and bytes their hex digits (``<n bytes>`` past ``event_arguments.BYTES_SHOWN``).

The events are written in ``prof.events`` order, a chunk of events at a time built by numpy
from byte pieces (see ``_bytes``), never one Python object per event; the flows, one per
link, after them, built the same way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .._version import __version__
from ._bytes import (BytePool, ChunkPool, Gatherer, decimal_text, fixed_point_text,
                     record_pieces)
from ._content import DOUBLE, INT, STRING, UINT, trace_content
from ._flows import FLOW_NAMES, trace_flows
from ._output import output_file, target_path
from ._tracks import track_layout

__all__ = ["json_string", "write_chrome_trace"]

_UNSAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                         "\u2028": "\\u2028", "\u2029": "\\u2029"})
_SAFE_INT = 2**53
_PIECES_PER_CHUNK = 1 << 18  # smaller chunks were no faster, larger ones slower


def json_string(text: str) -> bytes:
    """``text`` as a JSON string literal in UTF-8, safe to embed in HTML (``<``, ``>``, ``&``
    and the JavaScript line separators escaped); lone surrogates as ``\\u`` escapes."""
    out = json.dumps(text, ensure_ascii=False).translate(_UNSAFE)
    try:
        return out.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(text).translate(_UNSAFE).encode("ascii")


def _double_text(value: float) -> bytes:
    return repr(value).encode() if math.isfinite(value) else json_string(repr(value))


class _Pieces:
    """The static part of the byte pool: constants and string tables, by piece."""

    def __init__(self, content, layout):
        pool = BytePool()
        self.const = {k: (pool.add(v), len(v)) for k, v in {
            "first": b'\n{"ph":"X",', "open": b',\n{"ph":"X",', "ts": b',"ts":',
            "dur": b',"dur":', "name": b',"name":', "args": b',"args":{', "comma": b",",
            "close": b"}", "close_args": b"}}", "null": b"null"}.items()}
        # a flow's opening (start, end) and its kind's category, name and closing brace
        self.flow_open = pool.add_table([b',\n{"ph":"s","id":', b',\n{"ph":"f","bp":"e","id":'])
        self.flow_kind = pool.add_table([b',"cat":"%s","name":"%s"}' % (k.encode(), k.encode())
                                         for k in FLOW_NAMES])
        self.track = pool.add_table([b'"pid":%d,"tid":%d' % (p, t) for p, t in
                                     zip(layout.thread_pid.tolist(),
                                         layout.thread_tid.tolist())])
        self.name = pool.add_table([json_string(s) for s in content.names])
        ann = content.annotations
        self.key = pool.add_table([json_string(s) + b":" for s in ann.keys])
        self.string = pool.add_table([json_string(s) for s in ann.strings])
        doubles = ann.raw[ann.kind == DOUBLE]
        self.double_bits = np.unique(doubles)
        self.double = pool.add_table([_double_text(v) for v in
                                      self.double_bits.view(np.float64).tolist()])
        self.static = pool.build()

    def c(self, name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
        start, length = self.const[name]
        return np.full(n, start, np.int64), np.full(n, length, np.int64)


def _value_pieces(pieces: _Pieces, kind: np.ndarray, raw: np.ndarray) -> tuple:
    """(starts, lengths) of the values of annotation rows, the text of their integers and
    the rows of those (whose starts are relative to that text)."""
    starts, lengths = pieces.c("null", len(kind))
    rows = np.flatnonzero(kind == STRING)
    starts[rows] = pieces.string[0][raw[rows]]
    lengths[rows] = pieces.string[1][raw[rows]]
    rows = np.flatnonzero(kind == DOUBLE)
    if len(rows):
        code = np.searchsorted(pieces.double_bits, raw[rows])
        starts[rows] = pieces.double[0][code]
        lengths[rows] = pieces.double[1][code]
    rows = np.flatnonzero((kind == INT) | (kind == UINT))
    v = raw[rows]
    negative = (v < 0) & (kind[rows] == INT)
    mag = v.view(np.uint64).copy()
    mag[negative] = ~mag[negative] + np.uint64(1)
    text, s, n = decimal_text(mag, negative, mag > np.uint64(_SAFE_INT))
    starts[rows] = s
    lengths[rows] = n
    return starts, lengths, text, rows


def _chunk_bounds(bounds: np.ndarray, n: int, head: int, per_row: int) -> list[tuple]:
    """Slice ranges of about _PIECES_PER_CHUNK pieces each."""
    if not n:
        return []
    cost = np.arange(1, n + 1) * head + bounds[1:] * per_row
    cuts = np.searchsorted(cost, np.arange(_PIECES_PER_CHUNK, int(cost[-1]),
                                           _PIECES_PER_CHUNK), side="right")
    edges = np.unique(np.concatenate([[0], cuts, [n]]))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def _event_heads(content, layout, pieces: _Pieces, lo: int, hi: int, numbers: tuple,
                 first: bool) -> list[tuple]:
    """(starts, lengths) of each head piece of slices lo..hi: opening and track, time,
    duration, name.  ``numbers``: the start and duration texts' pieces, placed in the pool."""
    c = hi - lo
    opening = pieces.c("open", c)
    if first:
        opening[0][0], opening[1][0] = pieces.const["first"]
    track, name = layout.track[lo:hi], content.name[lo:hi]
    ts, dur = numbers
    return [opening, (pieces.track[0][track], pieces.track[1][track]), pieces.c("ts", c), ts,
            pieces.c("dur", c), dur, pieces.c("name", c),
            (pieces.name[0][name], pieces.name[1][name])]


def _arg_rows(ann, pieces: _Pieces, r0: int, r1: int, values: tuple) -> tuple:
    """(starts, lengths) of the args rows r0..r1: separator, key, value; and their owners."""
    owner = ann.owner[r0:r1]
    first_row = np.ones(r1 - r0, bool)
    first_row[1:] = owner[1:] != owner[:-1]
    args, comma = pieces.c("args", r1 - r0), pieces.c("comma", r1 - r0)
    key = ann.key[r0:r1]
    starts = np.stack([np.where(first_row, args[0], comma[0]), pieces.key[0][key], values[0]], 1)
    lengths = np.stack([np.where(first_row, args[1], comma[1]), pieces.key[1][key],
                        values[1]], 1)
    return starts, lengths, owner


def _chunks(content, layout, pieces: _Pieces, first: bool):
    """The X events of every slice, as uint8 arrays of a chunk of slices each, each event
    after a comma unless ``first`` (the first event opens the list)."""
    ann = content.annotations
    bounds = ann.bounds(len(content))
    pool = ChunkPool(pieces.static)
    gather = Gatherer()
    for lo, hi in _chunk_bounds(bounds, len(content), 8, 3):
        r0, r1 = int(bounds[lo]), int(bounds[hi])
        ts_text, ts_s, ts_l = fixed_point_text(content.start_ps[lo:hi])
        dur_text, dur_s, dur_l = fixed_point_text(content.duration_ps[lo:hi])
        val_s, val_l, int_text, ints = _value_pieces(pieces, ann.kind[r0:r1], ann.raw[r0:r1])
        array, (ts_at, dur_at, int_at) = pool.with_dynamic([ts_text, dur_text, int_text])
        val_s[ints] += int_at
        head = _event_heads(content, layout, pieces, lo, hi,
                            ((ts_s + ts_at, ts_l), (dur_s + dur_at, dur_l)), first and lo == 0)
        row_s, row_l, owner = _arg_rows(ann, pieces, r0, r1, (val_s, val_l))
        has_args = (bounds[lo + 1:hi + 1] - bounds[lo:hi]) > 0
        close, close_args = pieces.c("close", hi - lo), pieces.c("close_args", hi - lo)
        tail = (np.where(has_args, close_args[0], close[0])[:, None],
                np.where(has_args, close_args[1], close[1])[:, None])
        starts, lengths = record_pieces(
            (np.stack([h[0] for h in head], 1), np.stack([h[1] for h in head], 1)),
            (row_s, row_l), owner - lo, tail)
        yield gather(array, starts, lengths)


def _flow_events(content, layout, pieces: _Pieces, flows, per_chunk: int = 1 << 16):
    """Each flow as a start event (``"ph":"s"``) at its source slice's start and an end
    event (``"ph":"f"``, bound to the enclosing slice) at its end slice's start, both on
    those slices' threads, its kind as category and name; uint8 chunks, each event after a
    comma, built from byte pieces as the slices are."""
    pool, gather = ChunkPool(pieces.static), Gatherer()
    for lo in range(0, len(flows), per_chunk):
        hi = min(lo + per_chunk, len(flows))
        c = hi - lo
        at = np.concatenate([flows.src[lo:hi], flows.dst[lo:hi]])  # (starts, then ends)
        ids = np.tile(np.arange(lo + 1, hi + 1, dtype=np.uint64), 2)
        id_text, id_s, id_l = decimal_text(ids)
        ts_text, ts_s, ts_l = fixed_point_text(content.start_ps[at])
        array, (id_at, ts_at) = pool.with_dynamic([id_text, ts_text])
        track = layout.track[at]
        kind = np.tile(flows.kind[lo:hi].astype(np.int64), 2)
        opening = (np.repeat(pieces.flow_open[0], c), np.repeat(pieces.flow_open[1], c))
        head = [opening, (id_s + id_at, id_l), pieces.c("comma", 2 * c),
                (pieces.track[0][track], pieces.track[1][track]), pieces.c("ts", 2 * c),
                (ts_s + ts_at, ts_l), (pieces.flow_kind[0][kind], pieces.flow_kind[1][kind])]
        order = np.stack([np.arange(c), np.arange(c) + c], 1).ravel()  # (each s, then its f)
        starts = np.stack([h[0] for h in head], 1)[order]
        lengths = np.stack([h[1] for h in head], 1)[order]
        yield gather(array, starts.ravel(), lengths.ravel())


def _metadata_events(layout) -> list[dict]:
    out = []
    for pid, name in zip(layout.process_pid.tolist(), layout.process_names):
        out.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}})
        out.append({"ph": "M", "pid": pid, "name": "process_sort_index",
                    "args": {"sort_index": pid}})
    for pid, tid, name in zip(layout.thread_pid.tolist(), layout.thread_tid.tolist(),
                              layout.thread_names):
        out.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                    "args": {"name": name}})
        out.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                    "args": {"sort_index": tid}})
    return out


def _dumps(obj) -> bytes:
    """Compact JSON of ``obj``, escaped like :func:`json_string`."""
    out = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).translate(_UNSAFE)
    try:
        return out.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).translate(_UNSAFE).encode("ascii")


def _header(prof) -> bytes:
    other = {"generator": f"tfprof_nb {__version__}", "hosts": prof.hosts,
             "files": [Path(f).name for f in prof.source], "time_origin": "profile start",
             "profile_start": None if prof.start_time is None else prof.start_time.isoformat()}
    return b'{"displayTimeUnit":"ns","otherData":' + _dumps(other) + b',"traceEvents":['


def write_chrome_trace(prof, path, compress: bool | None = None) -> Path:
    """Write every event of ``prof`` (and its steps) as Trace Event Format JSON to ``path``
    and return the file's path.

    ``compress``: gzip the file; None means when ``path`` ends with ``.gz``.  A directory as
    ``path`` gets ``trace.json`` (``trace.json.gz`` when compressing); missing directories
    are created.  The file appears only once completely written.
    """
    if compress is None:
        compress = Path(path).suffix == ".gz" and not Path(path).is_dir()
    target = target_path(path, "trace.json.gz" if compress else "trace.json")
    content = trace_content(prof)
    layout = track_layout(content)
    pieces = _Pieces(content, layout)
    meta = _metadata_events(layout)
    head = _header(prof)
    if meta:
        head += b"\n" + b",\n".join(_dumps(m) for m in meta)
    with output_file(target, "Chrome trace", compress=compress) as write:
        write(head)
        for chunk in _chunks(content, layout, pieces, first=not meta):
            write(chunk)
        if len(content):  # (the arrows: after a slice, always after a comma)
            for chunk in _flow_events(content, layout, pieces, trace_flows(prof)):
                write(chunk)
        write(b"\n]}\n")
    return target
