"""One stat of one host's events, held sparsely: :class:`SparseStat` (the event rows that
carry it and their values), the value :class:`~.host.HostData`'s stat readers return, so no
per-event object or per-stat dense array is ever made."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...._native.kernels import sparse_lookup

__all__ = ["SparseStat"]


@dataclass
class SparseStat:
    """One stat of one host's events: ``rows`` (int32, increasing, unique) that carry it and
    ``values`` (integers, stored as int32 when they fit; float64 numbers; or int32 codes into
    ``table`` for text stats).  :meth:`dense` and :meth:`lookup` give integers as int64."""

    rows: np.ndarray
    values: np.ndarray
    table: np.ndarray | None = None  # object array of the text values (text stats only)

    def __len__(self) -> int:
        return len(self.rows)

    def present(self, n: int) -> np.ndarray:
        """bool per event: whether it carries the stat."""
        out = np.zeros(n, dtype=bool)
        out[self.rows] = True
        return out

    def _wide(self) -> np.dtype:
        return np.dtype(np.int64) if self.table is None and self.values.dtype == np.int32 \
            else self.values.dtype

    def dense(self, n: int, fill=0) -> np.ndarray:
        """The values scattered over ``n`` events (``fill`` where absent); text stats give
        their codes (-1 where absent when fill is -1)."""
        out = np.full(n, fill, dtype=self._wide())
        out[self.rows] = self.values
        return out

    def lookup(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values, present) of the stat at event ``rows`` (values 0 where absent)."""
        rows = np.asarray(rows)
        if not len(self.rows):
            return np.zeros(len(rows), self._wide()), np.zeros(len(rows), bool)
        if self.values.dtype.kind in "iu":
            values, hit = sparse_lookup(self.rows, self.values, rows)
            return values.astype(self._wide(), copy=False), hit
        pos = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
        hit = self.rows[pos] == rows
        return np.where(hit, self.values[pos], 0), hit

    def text(self, codes: np.ndarray) -> np.ndarray:
        """Object array of the text values of ``codes`` (None for -1)."""
        table = np.concatenate([self.table, np.array([None], dtype=object)])
        return table[np.where(np.asarray(codes) < 0, len(self.table), codes)]
