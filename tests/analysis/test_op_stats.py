"""prof.op_stats against xprof's framework_op_stats (TensorFlow stats)."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp

from .oracle import gviz_frame, run_tool


@pytest.fixture(params=["cpu_file", "gpu_fixture_file", "cpu_python_file"])
def xplane(request):
    return request.getfixturevalue(request.param)


def _pct_column(side: str) -> str:
    return "device_total_self_time_percent" if side == "Device" else \
        "host_total_self_time_percent"


@pytest.mark.parametrize("include_idle", [True, False])
def test_rows_match_xprof(xplane, include_idle):
    prof = tp.load(xplane)
    ours = prof.op_stats_table(include_idle=include_idle)
    ref = gviz_frame(run_tool(xplane, "framework_op_stats")[0 if include_idle else 1])
    assert len(ref) > 5
    # the reference keeps the top 500 rows per side; every one of them is ours, same order
    for side in ("Host", "Device"):
        r = ref[ref.host_or_device == side].reset_index(drop=True)
        o = ours[ours.host_or_device == side].reset_index(drop=True).iloc[:len(r)]
        assert len(o) == len(r)
        assert o.operation.tolist() == r.operation.tolist()
        assert o.type.tolist() == r.type.tolist()
        assert o.occurrences.tolist() == r.occurrences.astype(int).tolist()
        np.testing.assert_allclose(o.total_time_us, r.total_time, rtol=1e-9, atol=1e-6)
        np.testing.assert_allclose(o.total_self_time_us, r.total_self_time, rtol=1e-9,
                                   atol=1e-6)
        np.testing.assert_allclose(o.avg_self_time_us, r.avg_self_time, rtol=1e-9, atol=1e-6)
        np.testing.assert_allclose(o.self_time_pct / 100, r[_pct_column(side)], atol=1e-9)
        assert o.eager.tolist() == r.eager.tolist()
    assert ours["rank"].tolist() == list(range(1, len(ours) + 1))


def test_self_time_is_nested_on_each_thread(cpu_file):
    ops = tp.load(cpu_file).op_stats.set_index("operation")
    root = ops.loc["Iterator::Root"]
    prefetch = ops.loc["Iterator::Root::Prefetch"]
    # Root's only child on its thread is the Prefetch call
    assert root.total_self_time_us == pytest.approx(
        root.total_time_us - prefetch.total_time_us, abs=1e-6)
    host = tp.load(cpu_file).op_stats
    host = host[host.host_or_device == "Host"]
    assert host.cumulative_self_time_pct.iloc[-1] == pytest.approx(100)
