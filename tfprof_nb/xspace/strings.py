"""Turning byte spans of the decoded buffer into Python strings, once per distinct value."""

from __future__ import annotations

import numpy as np

from ._wire import hash_spans, spans_equal_to_representative

__all__ = ["decode_spans", "intern_spans"]


def decode_spans(raw: bytes, offs: np.ndarray, lens: np.ndarray) -> list[str]:
    """Decode every span of ``raw`` as UTF-8 (invalid bytes become U+FFFD).  For small tables."""
    return [raw[o:o + n].decode("utf-8", "replace") for o, n in zip(offs.tolist(), lens.tolist())]


def intern_spans(buf: np.ndarray, raw: bytes, offs: np.ndarray, lens: np.ndarray,
                 as_bytes: np.ndarray) -> tuple[list, np.ndarray]:
    """Intern many spans: return (table of distinct values, code of each span).

    Spans are hashed in compiled code and only one span per distinct content is turned into a
    Python object (``bytes`` where ``as_bytes`` is set, else ``str``).  A hash collision is
    detected by comparing every span with its representative, and then falls back to exact
    interning in Python.
    """
    n = len(offs)
    if n == 0:
        return [], np.empty(0, dtype=np.int64)
    offs = np.ascontiguousarray(offs, dtype=np.int64)
    lens = np.ascontiguousarray(lens, dtype=np.int64)
    salt = np.ascontiguousarray(as_bytes, dtype=np.int64)
    hashes = hash_spans(buf, offs, lens, salt)
    _, first, codes = np.unique(hashes, return_index=True, return_inverse=True)
    codes = codes.reshape(-1)
    if not spans_equal_to_representative(buf, offs, lens, first[codes]):
        return _intern_exact(raw, offs, lens, as_bytes)
    table = []
    for i in first.tolist():
        chunk = raw[offs[i]:offs[i] + lens[i]]
        table.append(chunk if as_bytes[i] else chunk.decode("utf-8", "replace"))
    return table, codes


def _intern_exact(raw, offs, lens, as_bytes):
    index: dict[tuple[bool, bytes], int] = {}
    table = []
    codes = np.empty(len(offs), dtype=np.int64)
    for i, (o, n, b) in enumerate(zip(offs.tolist(), lens.tolist(), as_bytes.tolist())):
        key = (b, raw[o:o + n])
        code = index.get(key)
        if code is None:
            code = index[key] = len(table)
            table.append(key[1] if b else key[1].decode("utf-8", "replace"))
        codes[i] = code
    return table, codes
