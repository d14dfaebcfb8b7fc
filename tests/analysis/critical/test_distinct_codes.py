"""distinct_codes and sorted_member give numpy's answers (np.unique, np.isin) without sorting
the column."""

from __future__ import annotations

import numpy as np

from tfprof_nb.analysis.critical.distinct_codes import distinct_codes, sorted_member


def test_distinct_codes_are_numpys_unique_with_inverse():
    rng = np.random.default_rng(1)
    for codes in (rng.integers(0, 50, 1000).astype(np.uint16), np.zeros(0, np.int32),
                  np.array([7, 7, 7], np.int32), rng.integers(0, 3, 20).astype(np.uint8)):
        want, inverse = np.unique(codes, return_inverse=True)
        got, got_inverse = distinct_codes(codes, 60)
        assert got.tolist() == want.tolist()
        assert got_inverse.tolist() == inverse.reshape(-1).tolist()


def test_sorted_member_is_numpys_isin():
    rng = np.random.default_rng(2)
    values = rng.integers(-5, 40, 500)
    for table in (np.unique(rng.integers(0, 30, 12)), np.zeros(0, np.int64), np.array([39])):
        assert sorted_member(values, table).tolist() == np.isin(values, table).tolist()
