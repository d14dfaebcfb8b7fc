"""Where a truncated ``.xplane.pb`` file ends: the records its last bytes were inside.

The walker (``_native/walk.c``) reports a field that runs past its message as "truncated or
corrupt" at the byte where that field starts, which for a file cut short is the outermost
record (byte 0: the first plane holds most of a file).  :func:`describe_truncation` follows
the records that run past the end of the data down from the space (plane, line, event, stat,
metadata) and says where the data stopped: "ends at byte 307,200 inside the 5th line ('Stream
#14') of the 2nd plane ('/device:GPU:0') (needs at least 1,024 more bytes)".  Data whose
records are malformed before its end is corrupt, not truncated: None then.

Reads go through a caller's ``read(offset, n)`` (the decoder's guarded copy of a file mapping),
a block at a time; a walk stops descending after :data:`MAX_FIELDS` fields (a line of
millions of events on an error path), naming the records found so far.
"""

from __future__ import annotations

__all__ = ["MAX_FIELDS", "Truncation", "describe_truncation"]

MAX_FIELDS = 5_000_000
_BLOCK = 1 << 20
_UNBOUNDED = 1 << 62  # the space is not length-delimited: its fields run to the data's end

# message: {field number: (what a record of that field is, its message or None)}; a message's
# name field (to quote) is _NAMED[message]
_CHILDREN = {
    "space": {1: ("plane", "plane"), 2: ("error string", None), 3: ("warning string", None),
              4: ("hostname", None)},
    "plane": {2: ("plane name", None), 3: ("line", "line"),
              4: ("event metadata", "event_entry"), 5: ("stat metadata", "stat_entry"),
              6: ("plane stat", "stat")},
    "line": {2: ("line name", None), 11: ("line display name", None), 4: ("event", "event")},
    "event": {4: ("stat", "stat")},
    "event_entry": {2: ("", "event_metadata")},  # (an entry's value: the entry's record)
    "event_metadata": {2: ("name", None), 4: ("display name", None),
                       3: ("metadata bytes", None), 5: ("stat", "stat")},
    "stat_entry": {2: ("", "stat_metadata")},
    "stat_metadata": {2: ("name", None), 3: ("description", None)},
    "stat": {5: ("string value", None), 6: ("bytes value", None)},
}
_NAMED = {"plane": 2, "line": 2, "event_metadata": 2, "stat_metadata": 2}


class Truncation:
    """Where data ``size`` bytes long stops: ``inside`` (outermost first) the records the end
    falls in, each (what, ordinal among its message's records of that field or None for a
    value read once, quoted name or None); ``missing`` the bytes the outermost one lacks
    (the least the data is short of)."""

    def __init__(self, size: int, inside: list, missing: int):
        self.size, self.inside, self.missing = size, inside, missing

    def where(self) -> str:
        """``inside the 5th line ('Stream #14') of the 2nd plane ('/host:CPU')``."""
        parts = [f"the {'' if n is None else _ordinal(n) + ' '}{what}"
                 + (f" ({name!r})" if name else "") for what, n, name in reversed(self.inside)]
        return "inside " + " of ".join(parts) if parts else "between two records"

    def problem(self) -> str:
        """The sentence a ProfileFormatError says after the file's name."""
        plural = "s" if self.missing != 1 else ""
        return (f"ends at byte {self.size:,} {self.where()} (needs at least "
                f"{self.missing:,} more byte{plural}): the file is truncated (an interrupted "
                "copy or capture?)")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


class _Malformed(Exception):
    """The data is not well-formed protobuf before its end: corrupt, not truncated."""


class _Ends(Exception):
    """The data ends inside a tag, a varint or a fixed-width value."""


class _Reader:
    """Bytes of the data a block at a time through ``read(offset, n)``."""

    def __init__(self, read, size: int):
        self.read, self.size = read, size
        self.start, self.block = 0, b""
        self.fields = 0

    def byte(self, pos: int) -> int:
        if pos >= self.size:
            raise _Ends
        if not self.start <= pos < self.start + len(self.block):
            self.start = pos
            self.block = self.read(pos, min(_BLOCK, self.size - pos))
        return self.block[pos - self.start]

    def varint(self, pos: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            if shift > 63:
                raise _Malformed
            b = self.byte(pos)
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value, pos
            shift += 7

    def text(self, pos: int, n: int) -> str:
        return self.read(pos, min(n, 200)).decode("utf-8", "replace")


def describe_truncation(read, size: int) -> Truncation | None:
    """Where data of ``size`` bytes, read through ``read(offset, n) -> bytes``, ends inside
    its records, when it is an XSpace cut short; None when it is not (it ends between planes,
    or it is malformed before its end)."""
    reader = _Reader(read, size)
    inside: list = []
    try:
        record_end = _descend(reader, "space", 0, _UNBOUNDED, inside)
    except _Malformed:
        return None
    if not inside:
        return None
    return Truncation(size, inside, max(1, (record_end or 0) - size))


def _descend(r: _Reader, message: str, pos: int, end: int, inside: list) -> int | None:
    """Walk ``message``'s fields in [pos, end) (``end`` may lie past the data): append each
    record the data ends in to ``inside``, outermost first, naming this message's own record
    (the last one in ``inside`` on entry) when its name field comes first.  Returns where the
    record the data ends in would end (None: not known, the data ends inside a tag or varint,
    or it ends in no record of this message)."""
    own, name, counts = len(inside) - 1, None, {}
    children = _CHILDREN.get(message, {})
    try:
        while pos < min(end, r.size + 1) and r.fields < MAX_FIELDS:
            r.fields += 1
            key, pos = r.varint(pos)
            number, wire = key >> 3, key & 7
            if number == 0:
                raise _Malformed
            counts[number] = counts.get(number, 0) + 1
            # (a message field of another wire type is skipped, as protobuf does)
            what, child = children.get(number, (None, None)) if wire == 2 else (None, None)
            record = _record(message, what, child, counts[number])
            try:
                pos, body = _skip(r, pos, wire)
            except _Ends:
                _append(inside, record)
                raise
            if pos > end:
                raise _Malformed  # a field overruns its own message, not just the data
            if pos <= r.size:
                if body is not None and number == _NAMED.get(message):
                    name = r.text(body, pos - body)
                continue
            _append(inside, record)
            _name(inside, own, name)
            if child is not None:
                _descend(r, child, body, pos, inside)
            return pos
    except _Ends:
        pass
    _name(inside, own, name)
    return None


def _record(message: str, what: str | None, child: str | None, n: int):
    """The row of a field the data ends in (None: not one to name): a record of its kind
    counted, a value said once (the repeated strings of the space counted too)."""
    if not what:
        return None
    return (what, n if child is not None or message == "space" else None, None)


def _append(inside: list, record) -> None:
    if record is not None:
        inside.append(record)


def _name(inside: list, row: int, name: str | None) -> None:
    if name is not None and row >= 0:
        what, n, _ = inside[row]
        inside[row] = (what, n, name)


def _skip(r: _Reader, pos: int, wire: int) -> tuple[int, int | None]:
    """The end of a field's value starting at ``pos`` and, for a length-delimited one, where
    its bytes start (may lie past the data: raises _Ends only inside a tag or varint)."""
    if wire == 0:
        return r.varint(pos)[1], None
    if wire == 1 or wire == 5:
        return pos + (8 if wire == 1 else 4), None
    if wire == 2:
        n, body = r.varint(pos)
        return body + n, body
    raise _Malformed
