"""HostData's derived stats (tfprof_nb.analysis.runtime.hostdata.host_stats)."""

from __future__ import annotations

import numpy as np
import pytest

from tfprof_nb.analysis.runtime.hostdata.host import HostData
from tfprof_nb.analysis.runtime.hostdata.host_stats import _distinct_codes
from tfprof_nb.xspace import read_xspace


@pytest.mark.parametrize("n_codes,n", [(10, 100), (1000, 50), (5, 0), (100_000, 200_000),
                                       (300, 1)])
def test_distinct_codes_equal_numpys_unique(n_codes, n):
    """Both ways (a table of the codes, or a sort when the codes are far more than the
    values) give np.unique's sorted codes and inverse."""
    codes = np.random.default_rng(n).integers(0, n_codes, n).astype(np.int32)
    used, inverse = _distinct_codes(codes, n_codes)
    ref_used, ref_inverse = np.unique(codes, return_inverse=True)
    assert np.array_equal(used, ref_used) and inverse.dtype == np.int32
    assert np.array_equal(inverse, ref_inverse.reshape(-1))


@pytest.mark.parametrize("fixture", ["cpu_file", "gpu_fixture_file"])
def test_text_stats_read_back_each_events_last_value(fixture, request):
    """str_stat against a plain walk over the stat table: each event's last text value."""
    hd = HostData("h", read_xspace(request.getfixturevalue(fixture)))
    st = hd.space.stats
    text = (st.owner_kind == 0) & (st.kind >= 4)
    names = [st.names[c] for c in np.unique(st.name_code[text]).tolist()]
    checked = 0
    for name in names[:6]:
        rows = np.flatnonzero(text & (st.name_code == st.names.index(name)))
        want = {int(o): st.values[int(v)] for o, v in zip(st.owner[rows], st.raw_value[rows])}
        sparse = hd.str_stat(name)
        got = dict(zip(sparse.rows.tolist(), sparse.table[sparse.values].tolist()))
        assert got == want and len(got), name
        checked += 1
    assert checked
