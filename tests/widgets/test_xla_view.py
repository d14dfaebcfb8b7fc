"""The XLA view's sentences on real captures: one op's self-time share, one figure, or the
rule of each named."""

from __future__ import annotations

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets.op_stats_view import typed_op_stats
from tfprof_nb.widgets.xla_view import XlaView

from ..conftest import DATA


@pytest.mark.parametrize("name", ["tpu_v6e_jax_inference.xplane.pb",
                                  "jax_h200_nocmdbuf.xplane.pb"])
def test_hlo_table_says_its_share_counts_idle_time(name):
    """TPU: copy-done.4 is 21.4% of the HLO table's self time and 24.7% of the op stats' (and
    of tfprof summary's top ops): the HLO table counts the devices' idle time in the whole
    (XProf's hlo_stats), the op stats leave it out unless asked. The table's title says so."""
    prof = tp.load(DATA / name)
    table = XlaView.state(prof).values["table"]
    hlo = table.frame
    ops = typed_op_stats(prof)
    device = ops[ops.host_or_device == "Device"]
    idle = float(device[device.type == "IDLE"].total_self_time_us.sum())
    busy = float(device[device.type != "IDLE"].total_self_time_us.sum())
    assert idle > 0
    top = hlo.iloc[0]
    with_idle = 100 * top.total_self_time_us / (busy + idle)
    without = 100 * top.total_self_time_us / busy
    assert top.self_time_pct == pytest.approx(with_idle)
    assert f"{without:.1f}" != f"{with_idle:.1f}"  # two figures for one op's share
    assert "idle included" in table.title and "XProf's rule" in table.title, table.title
