"""The decoded tables' lookups against plain numpy over every row."""

from __future__ import annotations

import numpy as np
import pytest

from tfprof_nb.xspace import read_xspace
from tfprof_nb.xspace.model import StatTable


def _table(owner, owner_kind) -> StatTable:
    n = len(owner)
    return StatTable(owner_kind=np.asarray(owner_kind, np.int8), owner=np.asarray(owner, np.int32),
                     name_code=np.zeros(n, np.uint8), kind=np.full(n, 3, np.int8),
                     raw_value=np.arange(n, dtype=np.int64), names=["x"], values=[])


def _scan(st: StatTable, event: int) -> np.ndarray:
    return np.flatnonzero((st.owner_kind == 0) & (st.owner == event))


@pytest.mark.parametrize("seed", range(6))
def test_rows_of_event_equal_a_scan_of_every_stat(seed):
    """Events with 0-4 stats each, runs of metadata and plane stats (owners unrelated to the
    events') at the start, between events (never inside one: an event's stats are in its own
    message) and at the end."""
    rng = np.random.default_rng(seed)
    n_events = 300
    per_event = rng.integers(0, 5, n_events)
    owner = list(np.repeat(np.arange(n_events), per_event))
    kind = [0] * len(owner)
    bounds = np.unique(np.cumsum(per_event))
    for at in sorted(set(rng.choice(bounds, 8).tolist()) | {0, len(owner)}, reverse=True):
        m = int(rng.integers(1, 30))
        owner[at:at] = rng.integers(0, 2 * n_events, m).tolist()  # (any values)
        kind[at:at] = [int(rng.integers(1, 3))] * m
    st = _table(owner, kind)
    for event in range(-1, n_events + 2):
        assert np.array_equal(st.rows_of_event(event), _scan(st, event)), event
    assert not len(_table([], []).rows_of_event(0))
    only_others = _table([5, 1, 9], [1, 2, 1])
    assert not len(only_others.rows_of_event(1))


def test_rows_of_event_on_real_files(gpu_fixture_file, cpu_file):
    rng = np.random.default_rng(1)
    for f in (gpu_fixture_file, cpu_file):
        sp = read_xspace(f)
        for event in rng.integers(0, len(sp.events), 40).tolist() + [0, len(sp.events) - 1]:
            assert np.array_equal(sp.stats.rows_of_event(event), _scan(sp.stats, event))
