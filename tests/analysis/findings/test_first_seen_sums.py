"""first_seen_sums against pandas' groupby(sort=False).sum(): the same groups in the same
order and the same int64 sums, through the indexed table and through hashing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tfprof_nb.analysis.findings import first_seen_sums as fss


def _oracle(columns: dict, values: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame({**columns, "v": values})
    return frame.groupby(list(columns), sort=False, as_index=False).v.sum()


@pytest.mark.parametrize("table", [True, False])
@pytest.mark.parametrize("n", [0, 1, 5_000])
def test_groups_and_sums_match_pandas(monkeypatch, table, n):
    if not table:  # (every key hashed)
        monkeypatch.setattr(fss, "_TABLE_MIN", 0)
        monkeypatch.setattr(fss, "_TABLE_PER_ROW", 0)
    rng = np.random.default_rng(n)
    columns = {"side": rng.integers(0, 2, n).astype(bool),
               "pid": rng.choice([-1, 7, 2 ** 40], n),
               "op": rng.choice(np.array(["a", "b", "c:d", "e"], object), n),
               "step": rng.integers(0, 50, n) * 1000 - 3}
    values = rng.integers(0, 2 ** 60, n, dtype=np.int64) // 8
    first, sums = fss.first_seen_sums([fss.codes_of(c) for c in columns.values()], values)
    ref = _oracle(columns, values)
    assert sums.dtype == np.int64 and sums.tolist() == ref.v.tolist()
    for name, column in columns.items():
        assert column[first].tolist() == ref[name].tolist()
    assert (np.diff(first) > 0).all() and (n == 0 or first[0] == 0)


def test_a_key_too_wide_for_int64_is_renumbered():
    """Codes whose counts multiply past 2**62 are grouped as well (the key so far renumbered)."""
    codes = [(np.array([0, 1, 0, 1]), 2 ** 40), (np.array([3, 3, 3, 4]), 2 ** 40)]
    first, sums = fss.first_seen_sums(codes, np.array([1, 2, 3, 4]))
    assert first.tolist() == [0, 1, 3] and sums.tolist() == [4, 2, 4]
