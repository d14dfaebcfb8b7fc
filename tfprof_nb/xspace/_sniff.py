"""Recognise common non-XSpace files so errors can say what a file looks like instead."""

from __future__ import annotations

import numpy as np

_MAGIC = (
    (b"\x1f\x8b", "a gzip-compressed file; decompress it first"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x89PNG", "a PNG image"),
    (b"%PDF", "a PDF document"),
    (b"\x93NUMPY", "a NumPy .npy file"),
    (b"\x7fELF", "an executable (ELF) file"),
    (b"SQLite format", "a SQLite database"),
)


def describe_known_format(buf: np.ndarray) -> str | None:
    """A short description when the leading bytes are the magic number of a known format."""
    head = bytes(buf[:16])
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return f"it looks like {what}"
    return None


def describe_non_xspace(buf: np.ndarray) -> str | None:
    """Best guess of what a file that failed to decode as XSpace is (magic numbers, text)."""
    known = describe_known_format(buf)
    if known:
        return known
    head = bytes(buf[:64])
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        return "it looks like JSON text (a trace.json? tfprof_nb reads .xplane.pb files)"
    if stripped[:1] == b"<":
        return "it looks like XML/HTML text"
    if head and all(32 <= c < 127 or c in (9, 10, 13) for c in head):
        return "it looks like plain text"
    return None
