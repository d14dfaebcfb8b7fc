"""event_rows: a few events' plane, name and duration read from the decoded columns, equal to
their rows of prof.events, on one real host and on two real hosts loaded as one run."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.trace.event_rows import event_rows

from ...conftest import DATA


@pytest.mark.parametrize("which", ["one host", "two hosts"])
def test_rows_equal_the_events_table(which, rocm_pod):
    prof = rocm_pod if which == "two hosts" else tp.load(DATA / "jax_h200_transformer.xplane.pb")
    assert len(prof.hosts) == (2 if which == "two hosts" else 1)
    n = len(prof.events)
    # both ends of every host, and a shuffled sample across them
    ends = [o + d for o in prof.event_offsets.values() for d in (0, 1)] + [n - 1]
    ids = np.concatenate([ends, np.random.default_rng(1).choice(n, 300, replace=False)])
    got = event_rows(prof.spaces, prof.event_offsets, ids)
    want = prof.events.loc[ids]
    assert got.index.tolist() == ids.tolist()
    assert got.plane.tolist() == want.plane.astype(str).tolist()
    assert got.name.tolist() == want.name.astype(str).tolist()
    np.testing.assert_array_equal(got.duration_us.to_numpy(), want.duration_us.to_numpy())
    assert event_rows(prof.spaces, prof.event_offsets, []).empty
    with pytest.raises(IndexError, match=str(n)):
        event_rows(prof.spaces, prof.event_offsets, [0, n])
