"""Protocol buffer wire format, written by hand: a few fields in Python, varints by numpy.

Only what the Perfetto writer needs: varint and length-delimited fields of small messages
(:func:`field`, :func:`message`), and many varints at once (:func:`varint_text`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["VARINT", "I64", "LEN", "field", "key", "utf8", "varint", "varint_text"]

VARINT, I64, LEN = 0, 1, 2  # wire types
_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], np.uint64)  # a byte more from each


def varint(value: int) -> bytes:
    """The varint of a non-negative int below 2**64 (negative int64s as their two's
    complement, as protobuf writes int64 fields)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(number: int, wire_type: int) -> bytes:
    """A field's key: its number and wire type."""
    return varint(number << 3 | wire_type)


def utf8(text: str) -> bytes:
    """``text`` in UTF-8 (a lone surrogate becomes U+FFFD: protobuf strings must be valid)."""
    return text.encode("utf-8", "replace")


def field(number: int, value) -> bytes:
    """One field: an int as a varint, bytes as length-delimited, a str as UTF-8 bytes."""
    if isinstance(value, int):
        return key(number, VARINT) + varint(int(value))
    if isinstance(value, str):
        value = utf8(value)
    return key(number, LEN) + varint(len(value)) + bytes(value)


def varint_text(values: np.ndarray, prefix: np.ndarray | None = None,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Varints of uint64 ``values`` (int64 are taken as their bits), each after an optional
    one-byte ``prefix`` (a field key).  Returns (bytes matrix uint8 raveled, start, length)
    with each varint at ``bytes[start:start + length]``."""
    v = np.ascontiguousarray(values).view(np.uint64) if np.asarray(values).dtype.kind == "i" \
        else np.asarray(values, np.uint64)
    n = len(v)
    size = np.searchsorted(_LIMITS, v, side="right").astype(np.int64) + 1
    width = int(size.max()) if n else 1
    lead = 0 if prefix is None else 1
    m = np.zeros((n, lead + width), np.uint8)
    if prefix is not None:
        m[:, 0] = prefix
    for k in range(width):
        byte = ((v >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        byte[size > k + 1] |= 0x80
        m[:, lead + k] = byte
    return m.ravel(), np.arange(n, dtype=np.int64) * (lead + width), size + lead
