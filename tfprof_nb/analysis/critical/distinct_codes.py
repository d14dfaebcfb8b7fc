"""The distinct values of a column of small non-negative codes (event name codes) and each
entry's place among them, as ``np.unique(codes, return_inverse=True)`` gives them, in two
linear passes instead of a sort of the whole column (tens of millions of graph nodes)."""

from __future__ import annotations

import numpy as np

__all__ = ["distinct_codes", "sorted_member"]


def distinct_codes(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct codes ascending, int64 index of each entry among them); ``n_codes``: a
    bound on the codes (the name table's length)."""
    codes = np.asarray(codes)
    present = np.zeros(max(int(n_codes), int(codes.max()) + 1 if len(codes) else 0), bool)
    present[codes] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    return np.flatnonzero(present), rank[codes]


def sorted_member(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``np.isin(values, table)`` for a sorted ``table`` (``np.unique``'s): a binary search per
    value, no sort of ``values``."""
    if not len(table):
        return np.zeros(len(values), bool)
    at = np.minimum(np.searchsorted(table, values), len(table) - 1)
    return table[at] == values
