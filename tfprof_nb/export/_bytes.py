"""Vectorised byte building: records made of pieces of one byte pool, numbers as text.

A writer lays every byte it may need into one uint8 *pool* (constants, escaped string tables,
the digits of this chunk's numbers) and describes each output record as a list of *pieces*
(start in the pool, length).  :func:`record_pieces` interleaves the pieces of many records and
:func:`gather` copies them out, so no Python code runs per event.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BytePool", "ChunkPool", "Gatherer", "decimal_text", "fixed_point_text", "gather",
           "record_pieces"]

_ZERO = ord("0")
_POW10 = np.array([10**k for k in range(20)], dtype=np.uint64)


class BytePool:
    """A byte pool under construction: ``add`` returns where a piece of bytes starts."""

    def __init__(self):
        self._parts: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> int:
        start = self.size
        self._parts.append(data)
        self.size += len(data)
        return start

    def add_table(self, items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """Append every item; (starts, lengths) as int64 arrays, one per item."""
        lengths = np.fromiter((len(b) for b in items), dtype=np.int64, count=len(items))
        starts = self.size + np.cumsum(lengths) - lengths
        self._parts.extend(items)
        self.size += int(lengths.sum())
        return starts, lengths

    def build(self, spare: int = 0) -> np.ndarray:
        """The pool as one uint8 array with ``spare`` writable bytes after it."""
        out = np.empty(self.size + spare, np.uint8)
        out[:self.size] = np.frombuffer(b"".join(self._parts), np.uint8)
        return out


class Gatherer:
    """Copies pieces of a pool out (see :meth:`__call__`), keeping a ramp 0, 1, 2, ... between
    calls: numpy's arange is slower than the copying itself."""

    def __init__(self):
        self._ramp = np.empty(0, np.int64)

    def _ramp_of(self, total: int, dtype) -> np.ndarray:
        if len(self._ramp) < total or self._ramp.dtype != dtype:
            self._ramp = np.arange(max(total, 2 * len(self._ramp)), dtype=dtype)
        return self._ramp[:total]

    def __call__(self, pool: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The bytes ``pool[s:s + l]`` of every piece (start s, length l), one after another."""
        lengths = np.asarray(lengths, np.int64)
        total = int(lengths.sum())
        if total == 0:
            return np.empty(0, np.uint8)
        small = len(pool) < 2**31 and total < 2**31
        dtype = np.int32 if small else np.int64
        dest = np.cumsum(lengths)
        dest -= lengths
        idx = np.repeat((np.asarray(starts, np.int64) - dest).astype(dtype), lengths)
        idx += self._ramp_of(total, dtype)
        return pool[idx]


class ChunkPool:
    """The static pool with room after it for each chunk's own bytes (its numbers)."""

    def __init__(self, static: np.ndarray):
        self.static_size = len(static)
        self.array = static

    def with_dynamic(self, parts: list[np.ndarray]) -> tuple[np.ndarray, list[int]]:
        """(the pool, the offset of each part): ``parts`` copied after the static bytes."""
        need = self.static_size + sum(len(p) for p in parts)
        if need > len(self.array):
            grown = np.empty(max(need, 2 * len(self.array)), np.uint8)
            grown[:self.static_size] = self.array[:self.static_size]
            self.array = grown
        offsets, at = [], self.static_size
        for p in parts:
            self.array[at:at + len(p)] = p
            offsets.append(at)
            at += len(p)
        return self.array, offsets


def gather(pool: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes ``pool[s:s + l]`` of every piece (start s, length l), one after another."""
    return Gatherer()(pool, starts, lengths)


def record_pieces(head: tuple, rows: tuple, owner: np.ndarray, tail: tuple,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(starts, lengths) of the pieces of ``n`` records, record after record.

    A record is its ``head`` pieces, then the pieces of each of its rows, then its ``tail``
    pieces.  ``head`` and ``tail`` are (starts, lengths) pairs of shape (n, H) and (n, T);
    ``rows`` is a pair of shape (m, R) and ``owner`` (m, sorted) the record of each row.
    """
    hs, hl = head
    rs, rl = rows
    ts, tl = tail
    n, h = hs.shape
    r = rs.shape[1]
    t = ts.shape[1]
    count = np.bincount(owner, minlength=n) if len(owner) else np.zeros(n, np.int64)
    per = h + t + r * count
    off = np.cumsum(per)
    off -= per
    total = int(per.sum()) if n else 0
    starts = np.empty(total, np.int64)
    lengths = np.empty(total, np.int64)
    pos = off[:, None] + np.arange(h)
    starts[pos] = hs
    lengths[pos] = hl
    if len(owner):
        first = np.cumsum(count)
        first -= count
        rank = np.arange(len(owner)) - first[owner]
        pos = (off[owner] + h + r * rank)[:, None] + np.arange(r)
        starts[pos] = rs
        lengths[pos] = rl
    if t:
        pos = (off + h + r * count)[:, None] + np.arange(t)
        starts[pos] = ts
        lengths[pos] = tl
    return starts, lengths


def _digit_count(mag: np.ndarray) -> np.ndarray:
    """Number of decimal digits of each uint64 (1 for 0)."""
    return np.maximum(np.searchsorted(_POW10, mag, side="right"), 1).astype(np.int64)


def _write_digits(out: np.ndarray, last_col: int, mag: np.ndarray, width: int) -> None:
    """Write the ``width`` last decimal digits of ``mag`` right-aligned, ending at
    ``out[:, last_col]``."""
    x = mag.copy()
    ten = np.uint64(10)
    for col in range(last_col, last_col - width, -1):
        q = x // ten
        out[:, col] = (x - q * ten).astype(np.uint8) + _ZERO
        x = q


def decimal_text(mag: np.ndarray, negative: np.ndarray | None = None,
                 quote: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decimal text of integers given as uint64 magnitudes (``negative``: a '-' sign;
    ``quote``: wrapped in double quotes).  Returns (text matrix uint8 (n, w) raveled, start,
    length) with each number at ``text[start:start + length]``."""
    mag = np.asarray(mag, np.uint64)
    n = len(mag)
    nd = _digit_count(mag)
    digits = int(nd.max()) if n else 1
    w = digits + 3  # quote, sign, digits, quote
    m = np.empty((n, w), np.uint8)
    _write_digits(m, w - 2, mag, digits)
    begin = w - 1 - nd  # first digit's column
    if negative is not None and negative.any():
        begin = begin - negative
        rows = np.flatnonzero(negative)
        m[rows, begin[rows]] = ord("-")
    end = np.full(n, w - 1, np.int64)
    if quote is not None and quote.any():
        rows = np.flatnonzero(quote)
        begin = begin - quote
        m[rows, begin[rows]] = ord('"')
        m[rows, w - 1] = ord('"')
        end[rows] += 1
    base = np.arange(n, dtype=np.int64) * w
    return m.ravel(), base + begin, end - begin


def fixed_point_text(values: np.ndarray, decimals: int = 6,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact decimal text of int64 ``values`` / 10**decimals: trailing zeros of the fraction
    (and a bare point) dropped, '-' for negatives.  Same return as :func:`decimal_text`.

    The text is the exact quotient, so a JSON reader's float of it equals ``values / 1e6``
    (both are the double nearest to the same rational number).
    """
    v = np.asarray(values, np.int64)
    n = len(v)
    negative = v < 0
    mag = v.view(np.uint64).copy()
    if negative.any():  # two's complement magnitude, exact even for -2**63
        mag[negative] = ~mag[negative] + np.uint64(1)
    scale = np.uint64(10**decimals)
    whole = mag // scale
    frac = mag - whole * scale
    nd = _digit_count(whole)
    digits = int(nd.max()) if n else 1
    w = 1 + digits + 1 + decimals  # sign, whole digits, point, fraction
    m = np.empty((n, w), np.uint8)
    point = 1 + digits
    _write_digits(m, point - 1, whole, digits)
    m[:, point] = ord(".")
    _write_digits(m, w - 1, frac, decimals)
    begin = point - nd
    if negative.any():
        begin = begin - negative
        rows = np.flatnonzero(negative)
        m[rows, begin[rows]] = ord("-")
    # trailing zeros of the fraction: its digit count minus that of the fraction stripped of them
    zeros = np.zeros(n, np.int64)
    f = frac.copy()
    for _ in range(decimals):
        z = (f % np.uint64(10) == 0) & (f != 0)
        if not z.any():
            break
        zeros += z
        f = np.where(z, f // np.uint64(10), f)
    end = np.where(frac == 0, point, w - zeros)
    base = np.arange(n, dtype=np.int64) * w
    return m.ravel(), base + begin, end - begin
