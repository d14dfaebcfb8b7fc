"""Interval sets (tfprof_nb.analysis.trace.intervals and the native merges behind them) against
a dense grid of integer times."""

from __future__ import annotations

import numpy as np
import pytest

from tfprof_nb._native.kernels import interval_combine
from tfprof_nb.analysis.trace.intervals import intersect, subtract, union, union_of

SPAN = 400


def _dense(s) -> np.ndarray:
    """bool per time 0..SPAN-1: inside the set."""
    out = np.zeros(SPAN, bool)
    for b, e in zip(*s):
        out[b:e] = True
    return out


def _runs(mask: np.ndarray):
    """The one form of a set: its maximal runs, as (begin, end) arrays."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _random_intervals(rng, n: int, longest: int):
    """Unsorted intervals, some empty, some overlapping or touching others."""
    begin = rng.integers(0, SPAN - longest, n)
    end = begin + rng.integers(0, longest, n)
    touching = rng.random(n) < 0.3
    begin[1:][touching[1:]] = end[:-1][touching[1:]]  # starts where the previous one ends
    end = np.maximum(end, begin)
    return begin, end


@pytest.mark.parametrize("seed", range(40))
def test_set_operations_give_the_grids_runs(seed):
    rng = np.random.default_rng(seed)
    n_a, n_b = rng.integers(0, 30, 2)
    a = union(*_random_intervals(rng, n_a, int(rng.integers(1, 60))))
    b = union(*_random_intervals(rng, n_b, int(rng.integers(1, 60))))
    da, db = _dense(a), _dense(b)
    for got, want in ((a, da), (b, db), (union_of(a, b), da | db),
                      (intersect(a, b), da & db), (subtract(a, b), da & ~db),
                      (subtract(b, a), db & ~da)):
        ref = _runs(want)
        assert got[0].dtype == np.int64 and got[1].dtype == np.int64
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


def test_union_of_sorted_and_unsorted_intervals():
    begin = np.array([10, 0, 30, 30, 5, 50, 60, 60], np.int64)
    end = np.array([20, 5, 30, 40, 12, 60, 70, 65], np.int64)  # (30, 30) empty
    got = union(begin, end)
    assert got[0].tolist() == [0, 30, 50] and got[1].tolist() == [20, 40, 70]
    order = np.argsort(begin, kind="stable")
    again = union(begin[order], end[order])  # already sorted: no sort
    assert all(np.array_equal(x, y) for x, y in zip(got, again))
    assert len(union(np.array([3]), np.array([3]))[0]) == 0


def test_combine_accepts_touching_and_empty_intervals_of_sorted_sets():
    a = (np.array([0, 5, 5, 9]), np.array([5, 5, 8, 12]))  # touching at 5, empty at 5
    b = (np.array([4]), np.array([10]))
    for mode, want in (("union", ([0], [12])), ("intersect", ([4, 9], [8, 10])),
                       ("subtract", ([0, 10], [4, 12]))):
        got = interval_combine(a, b, mode)
        assert got[0].tolist() == want[0] and got[1].tolist() == want[1], mode


@pytest.mark.parametrize("bad", [(np.array([5, 0]), np.array([8, 3])),  # not sorted
                                 (np.array([0, 4]), np.array([6, 9])),  # overlapping
                                 (np.array([7]), np.array([3]))])  # end before begin
def test_combine_refuses_sets_that_are_not_sorted_and_disjoint(bad):
    good = (np.array([1]), np.array([2]))
    with pytest.raises(ValueError, match="sorted, disjoint"):
        interval_combine(bad, good, "union")
    with pytest.raises(ValueError, match="sorted, disjoint"):
        interval_combine(good, bad, "subtract")
