"""A widget's state packed for pages without a kernel: one deflated, base64-encoded blob.

A state is what the widget syncs: JSON with binary buffers anywhere inside (a typed table's
columns, a timeline's tile).  :func:`split_buffers` takes the buffers out and notes where they
were, as the notebook's comm does.  Layout of a blob before compression: a little-endian
uint32 header length, the JSON header (``data``: the JSON part; ``paths``: where each buffer
goes back; ``places``: each buffer's [offset, length] after the header), then the buffers,
each starting on an 8-byte boundary so the browser can view them as typed arrays without a
copy.  A timeline's event details are a second blob.  ``js/src/offline.ts`` unpacks them.

A notebook's loader outputs split a payload (``split=True``): each trait packed larger than
:data:`PART_BYTES` becomes a part of its own, ``{"value": ...}`` packed alone and named by its
digest, which the state names instead (``{"$tfprof_part": digest}``).  Two views showing the
same data (the trace viewer and the dashboard's trace tab, the overview and the dashboard's
overview tab) make the same parts, which the notebook stores once (``loader.py``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import zlib
from dataclasses import dataclass, field

__all__ = ["PART_BYTES", "PART_KEY", "Payload", "pack", "split_buffers", "text_digest",
           "widget_payload", "widget_state"]

PART_BYTES = 2048  # a trait packed larger than this is a part of its own when split
PART_KEY = "$tfprof_part"  # {PART_KEY: digest}: the trait's value is the part of that digest

# Traits of every ipywidget that mean nothing to a page without a kernel.
_SKIP = {"layout", "comm", "keys", "log", "tabbable", "tooltip"}
_KEEP_PRIVATE = {"_tfprof_view", "_tfprof_timelines"}
_BINARY = (bytes, bytearray, memoryview)


def split_buffers(obj, path: tuple = ()) -> tuple[object, list[list], list[memoryview]]:
    """(``obj`` with every binary buffer replaced by None, the path of each buffer, the
    buffers), as ipywidgets sends a state: the browser puts each buffer back at its path."""
    paths: list[list] = []
    buffers: list[memoryview] = []

    def walk(value, here):
        if isinstance(value, _BINARY):
            paths.append(list(here))
            buffers.append(memoryview(value).cast("B"))
            return None
        if isinstance(value, dict):
            return {k: walk(v, here + (k,)) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v, here + (i,)) for i, v in enumerate(value)]
        return value

    return walk(obj, tuple(path)), paths, buffers


def widget_state(widget, live: bool = False) -> dict:
    """The traits of ``widget`` a page needs, as it would sync them to a front-end (binary
    buffers inside, see :func:`split_buffers`), with the parts a live widget builds when its
    page asks built too (``_offline_state``), or (``live``) as they are now."""
    offline = hasattr(widget, "_offline_state") and not live
    state = widget._offline_state() if offline else widget.get_state()
    return {key: value for key, value in state.items()
            if key not in _SKIP and (not key.startswith("_") or key in _KEEP_PRIVATE)}


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


def pack(obj, level: int = 1) -> tuple[str, int]:
    """One blob of ``obj`` (JSON with binary buffers inside), deflated and base64-encoded;
    also its size unpacked."""
    data, paths, buffers = split_buffers(obj)
    pieces: list = []
    places = []
    offset = 0
    for buf in buffers:
        pad = (-offset) % 8
        if pad:
            pieces.append(b"\0" * pad)
            offset += pad
        pieces.append(buf)
        places.append([offset, buf.nbytes])
        offset += buf.nbytes
    head = _dumps({"data": data, "paths": paths, "places": places})
    head += b" " * ((-(4 + len(head))) % 8)  # buffers start 8-byte aligned
    blob = b"".join([len(head).to_bytes(4, "little"), head, *pieces])
    return base64.b64encode(zlib.compress(blob, level)).decode("ascii"), len(blob)


def text_digest(text: str) -> str:
    """The name of a packed blob (its SHA-256, shortened): equal data, equal names."""
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:20]


@dataclass
class Payload:
    """A packed widget state: ``data`` (base64 text), the timeline's event details packed
    apart (``details``, None for views without a timeline; pages read them lazily, on the
    first click), the parts ``data`` names (``{digest: packed value}``, split payloads only)
    and what the state and details hold before packing."""

    data: str
    details: str | None
    raw_bytes: int  # bytes of the state unpacked: JSON and binary traits (as a live widget
    # sends them) plus the blob's small header
    details_bytes: int  # bytes of the event details unpacked
    parts: dict[str, str] = field(default_factory=dict)
    timeline_bytes: int = 0  # packed bytes of the timeline's parts and details (split only)

    @property
    def packed_bytes(self) -> int:
        return len(self.data) + len(self.details or "") + sum(map(len, self.parts.values()))

    @property
    def details_name(self) -> str:
        """The digest naming the details ("" without details)."""
        return text_digest(self.details) if self.details else ""


# the traits of a timeline's offline copy (TimelineSource.offline_state)
_TIMELINE = {"tile", "meta", "detail", "critical_paths"}


def _split(state: dict, level: int) -> tuple[dict, dict[str, str], dict[str, str]]:
    """(``state`` with each trait packed larger than PART_BYTES named by its part, the parts
    by digest, {trait: digest} of those traits)."""
    small: dict = {}
    parts: dict[str, str] = {}
    names: dict[str, str] = {}
    for key, value in state.items():
        data, _ = pack({"value": value}, level)
        if len(data) <= PART_BYTES:
            small[key] = value
            continue
        names[key] = text_digest(data)
        parts[names[key]] = data
        small[key] = {PART_KEY: names[key]}
    return small, parts, names


def _payload(state: dict, level: int, split: bool, prefix: str | None = None) -> Payload:
    """``state`` packed (split in parts); ``prefix``: that of a timeline's traits, whose parts
    the payload counts in ``timeline_bytes``."""
    if not split:
        data, raw = pack({"state": state}, level)
        return Payload(data, None, raw, 0)
    small, parts, names = _split(state, level)
    data, raw = pack({"state": small}, level)
    mine = 0 if prefix is None else sum(
        len(parts[n]) for k, n in names.items()
        if k.startswith(prefix) and k[len(prefix):] in _TIMELINE)
    return Payload(data, None, raw, 0, parts, mine)


def widget_payload(widget, details: bool = True, level: int = 1,
                   budget: int | None = None, split: bool = False,
                   timeline_budget: int | None = None) -> Payload:
    """Pack ``widget``'s state (and, for timelines, their events' stats) for offline pages.

    A timeline keeps about ``budget`` packed bytes (default: a notebook output's limit, see
    :mod:`.limits`): every event when they fit, else its overview and every event of one time
    range (see ``TimelineSource.offline_state``); the details cover the events it holds
    alone.  Given ``timeline_budget`` (split payloads), the timeline's own parts and details
    keep to it, whatever else the view holds: a trace viewer and a dashboard's trace tab
    then make the same copy, which a notebook stores once.

    zlib level 1: on a 1.2 M-event profile it packs 58 MB in 0.8 s to 15.3 MB, where level 6
    takes 3.4 s for 14.7 MB (displaying a view packs its fallback, so speed matters).
    """
    source = widget._timeline_source()
    if source is None:
        return _payload(widget_state(widget), level, split)
    from .limits import fallback_limit

    limit = fallback_limit() if budget is None else budget
    limit = limit if limit > 0 else 2**62
    own = split and timeline_budget is not None
    cap = min(limit, timeline_budget) if own else limit
    target = cap
    for _ in range(3):  # the sizes packed are estimated: shrink the timeline if over
        payload = _timeline_payload(widget, source, details, level, target, split)
        size = payload.timeline_bytes if own else payload.packed_bytes
        if size <= cap or target < (cap // 4 if own else 2**20):
            return payload
        target = int(target * 0.9 * cap / size)
    return payload


def _timeline_payload(widget, source, details: bool, level: int, budget: int,
                      split: bool = False) -> Payload:
    """The state with the trace viewer of ``source`` replaced by its offline copy in about
    ``budget`` bytes, and the event details of what that copy holds."""
    prefix = widget._timeline_prefix()
    state = widget_state(widget)
    traits, rows = source.offline_state(budget)
    state.update({prefix + k: v for k, v in traits.items()})
    payload = _payload(state, level, split, prefix)
    if not details:
        return payload
    from .details import event_details_block

    payload.details, payload.details_bytes = pack(event_details_block(source, rows), level)
    payload.timeline_bytes += len(payload.details) if split else 0
    return payload
