"""Text columns built from distinct strings and codes (:mod:`tfprof_nb.analysis.critical.
text_columns`, ``take_text`` in C): the same column as pandas makes of the Python strings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tfprof_nb._native.kernels import take_text
from tfprof_nb.analysis.critical.text_columns import text_column


@pytest.mark.parametrize("n_table", [1, 5, 10_000])
def test_text_column_is_the_column_of_the_strings(n_table):
    rng = np.random.default_rng(n_table)
    table = np.array(["", "é中 /device:GPU:0", "idle"] + [f"op{i}" for i in range(n_table)],
                     object)[:n_table]
    codes = rng.integers(0, n_table, 20_000)
    got = pd.Series(text_column(table, codes))
    pd.testing.assert_series_equal(got, pd.Series(list(table[codes])))
    assert len(text_column(table, codes[:0])) == 0


def test_take_text_refuses_codes_outside_the_table():
    off, data = take_text(np.array([0, 1, 3]), np.frombuffer(b"abc", np.uint8), [1, 0, 1])
    assert off.tolist() == [0, 2, 3, 5] and data.tobytes() == b"bcabc"
    with pytest.raises(IndexError):
        take_text(np.array([0, 1]), np.frombuffer(b"a", np.uint8), [0, 1])
    with pytest.raises(ValueError):
        take_text(np.array([0, 5]), np.frombuffer(b"a", np.uint8), [0])
