"""A widget's state packed for pages without a kernel: one deflated, base64-encoded blob.

Layout of a blob before compression: a little-endian uint32 header length, the JSON header
(the JSON traits, or the details' tables, and where each binary buffer sits), then the
buffers, each starting on an 8-byte boundary so the browser can view them as typed arrays
without a copy.  A timeline's event details are a second blob.  ``js/src/offline.ts`` unpacks
them.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["Payload", "widget_payload", "widget_state"]

# Traits of every ipywidget that mean nothing to a page without a kernel.
_SKIP = {"layout", "comm", "keys", "log", "tabbable", "tooltip"}


def widget_state(widget) -> tuple[dict, dict[str, bytes]]:
    """(JSON traits, binary traits) of a widget, as it would sync them to a front-end."""
    plain, binary = {}, {}
    for key, value in widget.get_state().items():
        if key in _SKIP or (key.startswith("_") and key != "_tfprof_view"):
            continue
        if isinstance(value, (bytes, bytearray, memoryview)):
            binary[key] = bytes(value)
        else:
            plain[key] = value
    return plain, binary


def _finite(obj):
    """JSON has no NaN or infinity: they become null (as the views expect for missing)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _plain(value):
    """numpy scalars and arrays as Python values (the comm's serialiser accepts them too)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _dumps(obj) -> bytes:
    try:
        text = json.dumps(obj, allow_nan=False, separators=(",", ":"), default=_plain)
    except ValueError:
        text = json.dumps(_finite(json.loads(json.dumps(obj, default=_plain))),
                          allow_nan=False, separators=(",", ":"))
    return text.encode()


@dataclass
class Payload:
    """A packed widget state: ``data`` (base64 text), the timeline's event details packed
    apart (``details``, None for views without a timeline; pages read them lazily, on the
    first click) and what both hold before packing."""

    data: str
    details: str | None
    raw_bytes: int  # bytes of the state unpacked: JSON and binary traits (as a live widget
    # sends them) plus the blob's small header
    details_bytes: int  # bytes of the event details unpacked

    @property
    def packed_bytes(self) -> int:
        return len(self.data) + len(self.details or "")


def _pack(header: dict, binary: dict[str, bytes], level: int) -> tuple[str, int]:
    """One blob: uint32 header length, JSON header with ``buffers`` {key: [offset, length]},
    the buffers 8-byte aligned; deflated and base64-encoded.  Also its size unpacked."""
    buffers: list[bytes] = []
    places = {}
    offset = 0
    for key, data in binary.items():
        pad = (-offset) % 8
        if pad:
            buffers.append(b"\0" * pad)
            offset += pad
        buffers.append(data)
        places[key] = [offset, len(data)]
        offset += len(data)
    head = _dumps({**header, "buffers": places})
    head += b" " * ((-(4 + len(head))) % 8)  # buffers start 8-byte aligned
    blob = b"".join([len(head).to_bytes(4, "little"), head, *buffers])
    return base64.b64encode(zlib.compress(blob, level)).decode("ascii"), len(blob)


def widget_payload(widget, details: bool = True, level: int = 1,
                   budget: int | None = None) -> Payload:
    """Pack ``widget``'s state (and, for timelines, their events' stats) for offline pages.

    A timeline keeps about ``budget`` packed bytes (default: ``TFPROF_NB_MAX_FALLBACK_MB``):
    every event when they fit, else its overview and every event of one time range (see
    ``TimelineSource.offline_state``); the details cover the events it holds alone.

    zlib level 1: on a 1.2 M-event profile it packs 58 MB in 0.8 s to 15.3 MB, where level 6
    takes 3.4 s for 14.7 MB (displaying a view packs its fallback, so speed matters).
    """
    source = widget._timeline_source()
    if source is None:
        plain, binary = widget_state(widget)
        data, raw = _pack({"state": plain}, binary, level)
        return Payload(data, None, raw, 0)
    from ._offline import _limit

    limit = _limit() if budget is None else budget
    limit = limit if limit > 0 else 2**62
    target = limit
    for _ in range(3):  # the sizes packed are estimated: shrink the timeline if over
        payload = _timeline_payload(widget, source, details, level, target)
        if payload.packed_bytes <= limit or target < 2**20:
            return payload
        target = int(target * 0.9 * limit / payload.packed_bytes)
    return payload


def _timeline_payload(widget, source, details: bool, level: int, budget: int) -> Payload:
    plain, binary = widget_state(widget)
    prefix = widget._timeline_prefix()
    columns, meta, rows = source.offline_state(budget)
    binary.update({prefix + k: v for k, v in columns.items()})
    plain[prefix + "meta"] = meta
    data, raw = _pack({"state": plain}, binary, level)
    if not details:
        return Payload(data, None, raw, 0)
    from ._details import event_details_block

    ids = source.event_ids if rows is None else source.event_ids[rows]
    info, columns = event_details_block(source.prof, ids)
    if rows is not None:  # the rows these details are of, with what the page needs of them
        index = source.index
        columns.update({"rows": rows.astype(np.uint32).tobytes(),
                        "start": index.start[rows].tobytes(),
                        "name": index.name[rows].astype(np.uint32).tobytes()})
    packed, details_raw = _pack(info, columns, level)
    return Payload(data, packed, raw, details_raw)
