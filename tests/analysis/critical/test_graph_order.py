"""The graph's node order: (resource, begin, longest first), ties as given; no sort when the
nodes already are in it."""

from __future__ import annotations

import numpy as np

from tfprof_nb.analysis.critical.graph import _node_order, _run_starts


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


def test_run_starts_of_a_sorted_array_are_its_distinct_values():
    values = np.array([1, 1, 4, 4, 4, 9], np.int32)
    assert values[_run_starts(values)].tolist() == np.unique(values).tolist()
    assert len(_run_starts(values[:0])) == 0
