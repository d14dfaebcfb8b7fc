"""The XLA view's sentences on real captures: one op's self-time share, one figure, or the
rule of each named."""

from __future__ import annotations

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets.op_stats_view import typed_op_stats
from tfprof_nb.widgets.xla_memory import _shown_buffers
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


@pytest.mark.parametrize("name", ["jax_h200_nocmdbuf.xplane.pb",
                                  "jax_h200_transformer.xplane.pb",
                                  "tpu_v6e_jax_inference.xplane.pb"])
def test_ops_above_the_device_peak_are_named_with_why(name):
    """H200: cuBLAS's GEMM custom-call.18 reads 1,353 TFLOP/s, above the device's 1,070.5:
    XProf's rule (its hlo_stats gives the same figure) counts the op's FLOPs for each device
    event, and it runs a memset beside each of its 10 kernels.  The view says so, with the
    table's own figure and the events counted here from the trace (with command buffers, the
    transformer, the kernels the buffers' attribution gives the op: their hlo_op stat names
    the buffer); where no op is above the peak (the TPU capture), nothing is said."""
    prof = tp.load(DATA / name)
    statements = XlaView.state(prof).values["statements"]
    stats = prof.hlo_stats
    over = stats[stats.model_flop_rate_flops_per_s > prof.device_peaks.peak_flops_per_s]
    said = [s for s in statements if s.startswith("Above this peak")]
    if over.empty:
        assert said == []
        return
    (text,) = said
    top = over.sort_values("model_flop_rate_flops_per_s").iloc[-1]
    buffers = prof.result("command_buffer_kernels")
    inside = buffers.event[buffers.hlo_op.astype(str) == top.hlo_op_name]
    ops = prof.stat("hlo_op")
    ev = prof.events.loc[inside if len(inside) else ops[ops == top.hlo_op_name].index]
    ev = ev[ev.plane.astype(str).str.startswith("/device:")]
    kernel = ev[ev.name.astype(str).str.startswith("nvjet")]
    assert top.occurrences == len(ev) == 2 * len(kernel)  # a memset beside each GEMM
    assert (f"{top.hlo_op_name} {top.model_flop_rate_flops_per_s / 1e12:,.1f} TFLOP/s "
            f"({len(ev)} device events for {len(kernel)} runs of its kernel "
            f"{kernel.name.iloc[0]}: 2.0x its FLOPs)") in text
    assert "XProf's rule, which the table keeps" in text


def test_buffers_live_through_the_program_show_no_positions():
    """A program's buffers live at its peak: parameters, constants and outputs live through
    the whole program (indefinite) and have no allocation or free position (-1 in
    prof.program_memory): the view's table leaves both blank, the others keep theirs."""
    prof = tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb")
    details = XlaView.state(prof).values["memory_details"]
    checked = 0
    for program, detail in details.items():
        mem = prof.program_memory(int(program))
        buffers = mem.buffers
        if not len(buffers) or not buffers.indefinite.any():
            continue
        shown = _shown_buffers(buffers)
        whole = buffers.indefinite.to_numpy(bool)
        assert (buffers.alloc_position[whole] == -1).all()
        assert shown.alloc_position[whole].isna().all() and shown.free_position[whole].isna().all()
        assert (shown.alloc_position[~whole] == buffers.alloc_position[~whole]).all()
        assert detail["buffers"]["title"].startswith("Buffers live at the peak")
        checked += 1
    assert checked


def test_the_share_s_denominator_is_said():
    """H200 with CUPTI counters: the HLO table's shares are of 625.4 ms, GPU:0's span from
    its first counter sample to its last (XProf's rule; its hlo_stats gives the same
    shares), where the ops ran 122.3 ms: a share that looks small is explained by the
    sentence, which gives both, from the table and the device plane."""
    prof = tp.load(DATA / "jax_h200_counters")
    stats = prof.hlo_stats
    events = prof.events
    gpu = events[events.plane.astype(str) == "/device:GPU:0"]
    span_us = float((gpu.start_us + gpu.duration_us).max() - gpu.start_us.min())
    assert stats.attrs["total_time_us"] == pytest.approx(span_us, abs=1e-3)
    top = stats.iloc[0]
    assert top.self_time_pct == pytest.approx(100 * top.total_self_time_us / span_us)
    (said,) = [s for s in XlaView.state(prof).values["statements"]
               if s.startswith("HLO table self time %")]
    ops_ms = stats.total_self_time_us.sum() / 1e3
    assert f"of {span_us / 1e3:,.3f} ms, its device's time from its plane's first" in said
    assert f"the ops' self time is {ops_ms:,.3f} ms of it ({100e3 * ops_ms / span_us:.1f}%, " \
        "XProf's rule: ops that overlap add up)" in said
    # the page's own busy share beside it, over another span (its kernels' and copies')
    duty = prof.measures.loc["duty_cycle_pct"]
    kernels_ms = float(prof.duty_cycle.span_us.sum()) / 1e3
    assert kernels_ms < 0.5 * span_us / 1e3
    busy_ms = float(prof.duty_cycle.busy_us.sum()) / 1e3
    assert (f"The device duty cycle, {duty['value']:.1f}% ({duty['scope']}), is the busy "
            f"share of another span, {kernels_ms:,.1f} ms (from the first to the last kernel "
            f"or copy of the devices it counts): the time any kernel runs, counted once, "
            f"{busy_ms:,.1f} ms.") in said


@pytest.mark.parametrize("name, devices", [("jax_h200_nocmdbuf.xplane.pb", 1),
                                           ("tpu_v6e_jax_inference.xplane.pb", 4)])
def test_the_ops_share_is_told_from_the_duty_cycle(name, devices):
    """The HLO table's whole time and the duty cycle's span, each said by its rule. H200: the
    same span (35.240 ms, the device plane's first to last event): the ops' share (55.5%)
    sums ops that run at once, the duty cycle (53.5%) counts them once, with its busy ms.
    TPU v6e: XProf's spans are its 4 planes' ops and step markers (363,729.7 ms); the duty
    cycle's reach from each TPU's first op or program run (364,200.4 ms: its XLA Modules
    start earlier), so it is said as another span, and no overlap is blamed for the gap."""
    prof = tp.load(DATA / name)
    stats, duty = prof.hlo_stats, prof.measures.loc["duty_cycle_pct"]
    total_ms = stats.attrs["total_time_us"] / 1e3
    span_ms = float(prof.duty_cycle.span_us.sum()) / 1e3
    busy_ms = float(prof.duty_cycle.busy_us.sum()) / 1e3
    share = 100 * stats.total_self_time_us.sum() / 1e3 / total_ms
    assert f"{share:.1f}" != f"{duty['value']:.1f}"
    (said,) = [s for s in XlaView.state(prof).values["statements"]
               if s.startswith("HLO table self time %")]
    whose = "its device's time" if devices == 1 else f"the {devices} devices' time summed"
    assert f"of {total_ms:,.3f} ms, {whose}" in said
    head = (f"({share:.1f}%, XProf's rule: ops that overlap add up). The device duty cycle, "
            f"{duty['value']:.1f}% ({duty['scope']}), is the busy share of ")
    if devices == 1:
        assert span_ms == pytest.approx(total_ms, rel=1e-12)
        assert (f"{head}the same spans: the time any kernel runs, counted once, "
                f"{busy_ms:,.1f} ms (the ops' self times add up ops that run at once).") in said
        assert "from its plane's first to its last event on any line" in said
        return
    assert span_ms - total_ms == pytest.approx(470.7, abs=0.1)  # the modules' earlier start
    assert (f"{head}another span, {span_ms:,.1f} ms (from the first to the last op or program "
            f"run of the devices it counts): the time any op runs, counted once, "
            f"{busy_ms:,.1f} ms.") in said
    assert "first to its last op or step marker on its XLA Ops and Steps lines" in said
    assert "any line" not in said and "overlap" not in said.split("duty cycle")[1]
