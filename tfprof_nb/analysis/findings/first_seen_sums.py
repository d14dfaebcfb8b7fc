"""Sums of int64 values per group of rows, the groups in the order they first appear: what
pandas' ``groupby(keys, sort=False).sum()`` gives, from integer codes per key (never a
string or an object per row), for the millions of (op, step) rows of a big host.

A row's key is one integer made of its codes (int32 where they fit); when the keys fit a
table of a few entries per row, the sums and each key's first row are found by indexing
that table (no hashing, no sort), else the keys are hashed once (``pandas.factorize``).
Sums are exact (int64).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["codes_of", "first_seen_sums"]

_TABLE_PER_ROW = 2  # a table of keys up to this many entries per row (and _TABLE_MIN) ...
_TABLE_MIN = 1 << 20  # ... is indexed; more keys than that are hashed


def codes_of(values) -> tuple[np.ndarray, int]:
    """(int64 codes from 0, their count) of ``values`` (an array or a Series), as they first
    appear."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biu" and len(values) and \
            values.min() == values.max():  # (one value: no hashing)
        return np.zeros(len(values), np.int64), 1
    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64, copy=False), len(uniques)


def _joint_key(keys: list, n: int) -> tuple[np.ndarray, int]:
    """(one key per row, the number of keys) of ``keys``: pairs (codes from 0, their count);
    int32 where the keys fit, else int64, the key so far renumbered as it first appears
    where it would overflow."""
    keys = [(codes, int(count)) for codes, count in keys if count != 1]  # (1: rows alike)
    width = np.int32 if np.prod([c for _, c in keys], dtype=object) < 2 ** 31 else np.int64
    key, size = np.zeros(n, width), 1
    for codes, count in keys:
        if size * count >= 2 ** 62:
            key, size = codes_of(key)
        if size == 1:
            key = np.asarray(codes).astype(width)
        else:
            key *= count
            key += np.asarray(codes).astype(width, copy=False)
        size *= count
    return key, size


def first_seen_sums(keys: list, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the first row of each group, increasing; the int64 sum of ``values`` over each
    group's rows) of the rows grouped on ``keys`` (pairs: int codes from 0 per row, their
    count): the groups in the order they first appear, as pandas' ``groupby(sort=False)``."""
    values = np.asarray(values, np.int64)
    n = len(values)
    key, size = _joint_key(keys, n)
    if size <= _TABLE_PER_ROW * n + _TABLE_MIN:
        index = np.int32 if n < 2 ** 31 else np.int64
        row = np.arange(n, dtype=index)
        first_row = np.full(size, n, index)
        np.minimum.at(first_row, key, row)
        first = np.flatnonzero(first_row[key] == row)
        sums = np.zeros(size, np.int64)
        np.add.at(sums, key, values)
        return first, sums[key[first]]
    group, count = codes_of(key)
    sums = np.zeros(count, np.int64)
    np.add.at(sums, group, values)
    seen = np.maximum.accumulate(group) if n else group  # (codes number groups as they come)
    return np.flatnonzero(np.diff(seen, prepend=-1) > 0), sums
