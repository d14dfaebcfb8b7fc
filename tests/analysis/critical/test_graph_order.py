"""The graph's node order: (resource, begin, longest first), ties as given; no sort when the
nodes already are in it."""

from __future__ import annotations

import numpy as np
import pytest

from tfprof_nb.analysis.critical.graph import EveryRow, _distinct_sorted, _node_order


def _lexsort(resource, begin, end):
    return np.lexsort((-(end - begin), begin, resource))


def test_node_order_is_the_lexsort_and_none_when_sorted():
    rng = np.random.default_rng(3)
    resource = rng.integers(0, 4, 300).astype(np.int32)
    begin = rng.integers(0, 20, 300).astype(np.int64)
    end = begin + rng.integers(0, 5, 300)
    order = _node_order(resource, begin, end)
    assert order is not None and order.tolist() == _lexsort(resource, begin, end).tolist()
    r, b, e = resource[order], begin[order], end[order]
    assert _node_order(r, b, e) is None  # (sorted, ties in place: the lexsort is the identity)
    assert _lexsort(r, b, e).tolist() == list(range(300))
    assert _node_order(r[:1], b[:1], e[:1]) is None


def test_distinct_sorted_are_the_distinct_values():
    values = np.array([1, 1, 3, 3, 3, 7, 9, 9], np.int32)
    got = _distinct_sorted(values, np.array([9, 0, 1, 3, 5, 7, 9, 12]))
    assert got.tolist() == np.unique(values).tolist() and got.dtype == np.int32
    assert len(_distinct_sorted(values[:0], np.arange(4))) == 0


def test_every_row_reads_as_the_rows():
    """A CPU host's graph keeps no row per node: EveryRow indexes as np.arange would."""
    rows, full = EveryRow(7), np.arange(7, dtype=np.int64)
    for idx in (np.array([0, 6, 3, 3]), np.array([-1, -7]), full % 2 == 0, slice(1, 5)):
        got = rows[idx]
        assert got.dtype == np.int64 and got.tolist() == full[idx].tolist()
    assert rows[-2] == 5 and len(rows) == 7 and np.asarray(rows).tolist() == full.tolist()
    with pytest.raises(IndexError):
        rows[np.array([7])]
