"""XLA on real GPU captures (JAX on ROCm, AMD MI300X and MI355X; JAX on CUDA, NVIDIA H100 and
H200, with and without XLA's command buffers; tests/data) against xprof 2.24.2: HLO stats rows
and times, device framework ops, kernel stats, device peaks, roofline; the host events that
launch each kernel are launches, not XLA:CPU ops.  Kernels run inside command buffers (CUDA
graphs) name the buffer, not their HLO ops: XProf drops them from its op tables (and counts
their time idle); we attribute each to its HLO op (tests/analysis/test_command_buffers.py
compares those captures with the same program run without command buffers), and every other
number is equal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.xla.buffer_words import buffered_kernels, xprof_buffer_words

from .real_xla import (AMD, COMMAND_BUFFERS, GIB, NVIDIA, REAL, assert_hlo_rows_equal,
                       device_rows, keyed, named)
from .xla_profiles import oracle, oracle_frame

# captures whose host launch events carry no hlo_op (an older JAX on ROCm; JAX 0.11 on CUDA)
_LAUNCHES_WITHOUT_HLO_OP = {"mi300x_jax_conv_legacy.xplane.pb"} | {p.name for p in NVIDIA}


@pytest.fixture(scope="module", params=named(AMD + NVIDIA))
def capture(request):
    path = REAL / request.param
    return path, tp.load(path)




def test_hlo_stats_rows_equal_xprof(capture):
    path, prof = capture
    ours = prof.hlo_stats
    assert set(ours.device_type) == {"GPU"}  # no XLA:CPU rows
    ref = oracle_frame(path, "hlo_stats")
    if path.name in COMMAND_BUFFERS:
        # XProf lists nothing; we list the HLO ops the buffer's kernels are attributed to
        assert ref.empty
        assert len(ours) > 10 and not ours.hlo_op_name.str.startswith("command_buffer").all()
        assert set(ours.attribution) <= {"name", "position", "unresolved"}
        assert (ours.resolved == (ours.attribution != "unresolved")).all()
        ev = prof.events
        compute = ev[ev.plane.str.startswith("/device:GPU") & ev.line.str.contains("Compute")]
        # every kernel and memset of the compute stream ran in the buffer: each counted once
        assert ours.occurrences.sum() == len(compute) > prof.kernel_stats.occurrences.sum()
        assert ours.total_time_us.sum() == pytest.approx(compute.duration_us.sum(), rel=1e-9)
        assert any("command buffer command_buffer_1" in r and "unresolved" in r
                   for r in ours.attrs["reasons"])
        return
    assert len(ours) >= 4 and ours.resolved.all() and (ours.attribution == "stat").all()
    a, b = assert_hlo_rows_equal(ours, ref)
    assert_costs_equal(a, b)


def assert_costs_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """FLOP rates, bandwidths, intensity and bound-by of every row equal XProf's: XLA's GPU
    cost analysis as XProf runs it (:mod:`tfprof_nb.analysis.xla.gpu_cost`)."""
    for ours, theirs, scale in (("model_flop_rate_flops_per_s", "model_flop_rate", 1e9),
                                ("normalized_flop_rate_flops_per_s", "normalized_flop_rate",
                                 1e9),
                                ("memory_bw_bytes_per_s", "measured_memory_bw", GIB),
                                ("hbm_bw_bytes_per_s", "hbm_bw", GIB)):
        np.testing.assert_allclose(a[ours].fillna(0) / scale, b[theirs], rtol=1e-6,
                                   atol=1e-9, err_msg=ours)
    np.testing.assert_allclose(a.arithmetic_intensity_flops_per_byte.fillna(0),
                               b.operational_intensity, rtol=1e-6, atol=1e-9)
    assert (a.bound_by == b.bound_by).all(), a.index[a.bound_by != b.bound_by].tolist()


def test_launch_events_are_not_cpu_ops(capture):
    """Every XLA kernel was launched by a host event carrying the same hlo_op: those are
    launches (host time), one per kernel, and no XLA:CPU op comes of them."""
    path, prof = capture
    ours = prof.hlo_stats
    said = [r for r in ours.attrs["reasons"] if "launch device work" in r]
    if path.name in _LAUNCHES_WITHOUT_HLO_OP:
        assert not said
    else:
        assert len(said) == 1
        assert int(said[0].split()[0].replace(",", "")) == ours.occurrences.sum()
    assert "CPU" not in set(ours.device_type)
    # the launches stay host time: the host side equals xprof's, which counts them there
    ref = oracle_frame(path, "framework_op_stats", 0)
    theirs = ref[ref.host_or_device == "Host"].set_index("operation").sort_index()
    mine = prof.op_stats[prof.op_stats.host_or_device == "Host"].set_index("operation") \
        .sort_index()
    assert mine.index.equals(theirs.index) and len(mine) >= 2
    np.testing.assert_allclose(mine.total_self_time_us, theirs.total_self_time, rtol=1e-9)
    assert (mine.occurrences == theirs.occurrences).all()


def test_device_framework_ops_equal_xprof(capture):
    path, prof = capture
    ref = device_rows(oracle_frame(path, "framework_op_stats", 0))
    ours = device_rows(prof.op_stats)
    if path.name in COMMAND_BUFFERS:
        # XProf shows the device 100% idle; our idle time plus the framework ops' time
        # (attributed inside the buffer) is its idle time
        assert ref.index.tolist() == ["IDLE"] and len(ours) > 10
        np.testing.assert_allclose(ours.total_time_us.sum(), ref.total_time.sum(), rtol=1e-12)
        assert ours.drop(index="IDLE").total_self_time_us.sum() == pytest.approx(
            prof.hlo_stats.total_self_time_us.sum(), rel=1e-9)
        return
    assert ours.index.equals(ref.index)
    assert (ours.occurrences == ref.occurrences).all()
    np.testing.assert_allclose(ours.total_time_us, ref.total_time, rtol=1e-12)
    np.testing.assert_allclose(ours.total_self_time_us, ref.total_self_time, rtol=1e-12)
    np.testing.assert_allclose(ours.self_time_pct / 100, ref.device_total_self_time_percent,
                               rtol=1e-9)


def test_what_xprofs_tables_show_for_command_buffers_is_said_and_true(capture):
    """Where kernels ran inside command buffers our op, HLO and kernel tables attribute them to
    their ops and XProf's do not: each table says what XProf's shows instead, and each claim
    of those sentences holds in XProf's own output (no HLO row; the devices' op stats IDLE
    only; every kernel's op XlaModule, none Tensor-Core eligible); the counts are the HLO
    table's buffered rows.  Captures without command buffers say nothing of them."""
    path, prof = capture
    said = {t: xprof_buffer_words(prof.hlo_stats, t) for t in ("op_stats", "hlo_stats",
                                                               "kernel_stats")}
    if path.name not in COMMAND_BUFFERS:
        assert buffered_kernels(prof.hlo_stats) == (0, 0.0) and not any(said.values())
        return
    n, us = buffered_kernels(prof.hlo_stats)
    assert n == prof.hlo_stats.occurrences.sum() and n > 1000
    assert said["hlo_stats"].startswith(f"XProf's HLO stats have no row for the {n:,} device "
                                        f"ops (kernels, memsets; {us / 1e3:,.3f} ms) run")
    assert oracle_frame(path, "hlo_stats").empty
    assert said["op_stats"].startswith(f"XProf's op stats count the time of the {n:,} device "
                                       "ops") and "as the devices' IDLE" in said["op_stats"]
    assert device_rows(oracle_frame(path, "framework_op_stats", 0)).index.tolist() == ["IDLE"]
    assert "their op reads XlaModule, which no Tensor Core is eligible for" in \
        said["kernel_stats"]
    ref = oracle_frame(path, "kernel_stats")
    assert (ref.op_name == "XlaModule").all() and not ref.is_op_tensor_core_eligible.any()


def test_kernel_stats_equal_xprof(capture):
    path, prof = capture
    ours, ref = prof.kernel_stats, oracle_frame(path, "kernel_stats")
    key = ["kernel_name", "op_name", "grid_dim", "block_dim"]
    if path.name in COMMAND_BUFFERS:  # xprof names no op ("XlaModule"): ours name theirs
        assert not (ours.op_name == "XlaModule").any() and (ours.op_name != "").all()
        ours = _without_ops(ours, ref)
    a, b = ours.set_index(key).sort_index(), ref.set_index(key).sort_index()
    assert a.index.equals(b.index) and len(a) >= 5  # no row merged away, none extra
    assert (a.occurrences == b.occurrences).all()
    for col in ("total_duration_us", "avg_duration_us", "min_duration_us", "max_duration_us",
                "occupancy_pct"):
        np.testing.assert_allclose(a[col], b[col], rtol=1e-12)
    assert (a.registers_per_thread == b.registers_per_thread).all()
    assert (a.shmem_bytes == b.shmem_bytes).all()
    differ = (a.is_kernel_using_tensor_core != b.is_kernel_using_tensor_core) | \
        (a.is_op_tensor_core_eligible != b.is_op_tensor_core_eligible)
    if path.name in COMMAND_BUFFERS:  # our ops name the dots: eligible where xprof's is not
        assert (a.is_op_tensor_core_eligible >= b.is_op_tensor_core_eligible).all()
        assert a.is_op_tensor_core_eligible.any() and not b.is_op_tensor_core_eligible.any()
        differ = a.is_kernel_using_tensor_core != b.is_kernel_using_tensor_core
    names = a.index.get_level_values(0)[differ.to_numpy()]
    assert not len(names), list(names)  # (ck_tile's attention kernels too: by tile shape)
    assert a.is_kernel_using_tensor_core.any() == b.is_kernel_using_tensor_core.any()
    # XLA kernels name the framework op of their HLO instruction
    assert path.name in COMMAND_BUFFERS or not (a.index.get_level_values(1) == "XlaModule").any()
    if path in NVIDIA:  # cuBLAS on Hopper (nvjet) and XLA's Triton GEMMs: no Tensor Core flag
        assert a.index.get_level_values(0).str.startswith("nvjet").any()
        assert not a.is_kernel_using_tensor_core.any()


def _without_ops(ours: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """Our kernel rows summed over the framework ops the kernels are attributed to, named by
    xprof's op (one per kernel and launch shape)."""
    key = ["kernel_name", "grid_dim", "block_dim"]
    op = ref.set_index(key).op_name
    assert op.index.is_unique
    out = ours.groupby(key, sort=False).agg(
        occurrences=("occurrences", "sum"), total_duration_us=("total_duration_us", "sum"),
        min_duration_us=("min_duration_us", "min"), max_duration_us=("max_duration_us", "max"),
        **{c: (c, "first") for c in ours.columns if c not in key + [
            "occurrences", "total_duration_us", "min_duration_us", "max_duration_us",
            "op_name", "avg_duration_us"]}).reset_index()
    total_ns = np.round(out.total_duration_us * 1e3).astype(np.int64)
    out["avg_duration_us"] = (total_ns // out.occurrences) / 1e3  # (whole ns, as xprof)
    out["op_name"] = op.reindex(pd.MultiIndex.from_frame(out[key])).to_numpy()
    return out


def test_device_peaks_equal_xprof(capture):
    path, prof = capture
    props = oracle(path, "roofline_model")[0]["p"]
    peaks = prof.device_peaks
    assert peaks.device == props["device_type"]
    assert peaks.device.startswith("AMD GPU - gfx9" if path in AMD else "Nvidia GPU (Hopper)")
    assert peaks.peak_flops_per_s / 1e9 == pytest.approx(float(props["peak_flop_rate"]),
                                                         rel=1e-5)
    assert peaks.memory_bw_bytes_per_s / GIB == pytest.approx(float(props["peak_hbm_bw"]),
                                                              rel=1e-5)
    assert peaks.shared_memory_bw_bytes_per_s / GIB == pytest.approx(
        float(props["peak_vmem_write_bw"]), rel=1e-5)
    assert peaks.ridge_point_flops_per_byte == pytest.approx(float(props["hbm_ridge_point"]),
                                                             rel=1e-5)


def test_roofline_times_equal_xprof(capture):
    path, prof = capture
    ref = oracle_frame(path, "roofline_model", 0)
    ref = ref[(ref.step == "Total") & (ref.include_infeed_outfeed == True)]  # noqa: E712
    ref = ref.assign(pid=np.where(ref.category == "Program", "-1", ref.hlo_module_id))
    ours = prof.roofline
    if path.name in COMMAND_BUFFERS:  # XProf has its program row only: ours has the ops too
        assert len(ours) > 10 and (ours.operation != "command_buffer_1").all()
        ours = ours[ours.category == "Program"]
    a, b = keyed(ours, "program_id", "operation"), keyed(ref, "pid", "operation")
    assert a.index.equals(b.index) and len(a) >= (1 if path.name in COMMAND_BUFFERS else 4)
    np.testing.assert_allclose(a.total_time_us, b.total_time, rtol=1e-12)
    np.testing.assert_allclose(a.self_time_pct / 100, b.total_self_time_percent, rtol=1e-9)
    np.testing.assert_allclose(a.total_self_time_us, b.total_self_time, rtol=1e-12)
    np.testing.assert_allclose(a.cumulative_self_time_pct / 100,
                               b.cumulative_total_self_time_percent, rtol=1e-9, atol=1e-12)
    if path.name in COMMAND_BUFFERS:  # (XProf's program row holds none of the buffer's work)
        return
    # every row's rates, intensity, bound-by and efficiencies, the program's row included
    for ours, theirs, scale in (("flop_rate_flops_per_s", "measured_flop_rate", 1e9),
                                ("model_flop_rate_flops_per_s", "model_flop_rate", 1e9),
                                ("memory_bw_bytes_per_s", "measured_memory_bw", GIB),
                                ("hbm_bw_bytes_per_s", "hbm_bw", GIB),
                                ("arithmetic_intensity_flops_per_byte",
                                 "operational_intensity", 1),
                                ("hbm_arithmetic_intensity_flops_per_byte",
                                 "hbm_operational_intensity", 1),
                                ("bottleneck_arithmetic_intensity_flops_per_byte",
                                 "bottleneck_operational_intensity", 1),
                                ("attainable_flop_rate_flops_per_s", "optimal_flop_rate", 1e9),
                                ("roofline_efficiency_pct", "roofline_efficiency", 100),
                                ("compute_efficiency_pct", "compute_efficiency", 100),
                                ("memory_bw_utilization_pct", "max_mem_bw_utilization", 100)):
        np.testing.assert_allclose(a[ours].fillna(0) / scale, b[theirs].astype(float),
                                   rtol=1e-6, atol=1e-9, err_msg=ours)
    assert (a.bound_by == b.bound_by).all()


def _op_leaves(node, out: dict) -> dict:
    if "xla" in node and not node.get("children"):
        out[(int(node["xla"]["programId"]), node["name"])] = node["metrics"]
    for child in node.get("children", []):
        _op_leaves(child, out)
    return out


def test_op_profile_bytes_equal_xprof(capture):
    """The op profile's ops carry XProf's HBM bytes and bandwidth utilisation: a cuBLASLt
    matmul's tuple output is not among the HBM bytes XLA's cost analysis keeps (H200:
    custom-call.18 reads 167.8 MB of HBM, 838.9 MB in all)."""
    path, prof = capture
    if path.name in COMMAND_BUFFERS:
        return
    theirs = _op_leaves(oracle(path, "op_profile")["byProgram"], {})
    tree = prof.op_profile(group_by="program")
    ops = tree[tree.kind == "op"]
    ours = {(int(r.program_id), r.name): r for r in ops.itertuples()}
    shared = [k for k in theirs if k in ours]
    assert len(shared) >= len(theirs) - 1 >= 3
    for key in shared:
        m, o = theirs[key], ours[key]
        assert o.memory_accessed_bytes == pytest.approx(
            m.get("rawBytesAccessedArray", [0])[0], rel=1e-9, abs=1e-3), key
        assert o.memory_bw_utilization_pct / 100 == pytest.approx(
            m.get("bandwidthUtils", [0])[0], rel=1e-6, abs=1e-12), key
    if path.name == "jax_h200_nocmdbuf.xplane.pb":
        key = ("11964", "custom-call.18")
        stats = keyed(prof.hlo_stats, "program_id", "hlo_op_name").loc[key]
        assert stats.memory_accessed_bytes > 4 * ours[(11964, key[1])].memory_accessed_bytes


def test_framework_op_rooflines_equal_xprof(capture):
    """The device framework ops' FLOP rates, bandwidth, intensity, tensor-core share and
    bound-by equal XProf's framework op stats (their HLO ops' costs summed; all their bytes
    count for the bound: a framework op keeps no memory breakdown)."""
    path, prof = capture
    if path.name in COMMAND_BUFFERS:  # (XProf has no device op there: see above)
        return
    ref = oracle_frame(path, "framework_op_stats", 0).set_index(["host_or_device", "operation"])
    ours = prof.op_stats.set_index(["host_or_device", "operation"])
    assert ours.index.sort_values().equals(ref.index.sort_values())
    a, b = ours, ref.loc[ours.index]
    for mine, theirs, scale in (("flop_rate_flops_per_s", "measured_flop_rate", 1e9),
                                ("model_flop_rate_flops_per_s", "model_flop_rate", 1e9),
                                ("memory_bw_bytes_per_s", "measured_memory_bw", GIB),
                                ("arithmetic_intensity_flops_per_byte",
                                 "operational_intensity", 1)):
        np.testing.assert_allclose(a[mine] / scale, b[theirs].astype(float), rtol=1e-6,
                                   atol=1e-9, err_msg=mine)
    assert (a.bound_by == b.bound_by).all()
    np.testing.assert_allclose(a.tensor_core_pct / 100,
                               b.gpu_tensorcore_utilization.astype(float), atol=1e-9)
    assert (a.model_flop_rate_flops_per_s[a.index.get_level_values(0) == "Host"] == 0).all()
    assert (a.flop_rate_flops_per_s > 0).sum() >= 1


def test_an_op_the_cost_model_cannot_read_is_left_empty_and_said(monkeypatch):
    """An HLO instruction the GPU cost model trips on (a fault injected into the model on one
    op of the H200 capture) leaves that op's FLOPs and bytes empty and says why; every other
    op and table stands."""
    from tfprof_nb.analysis.xla.gpu_cost import GpuCostModel
    from tfprof_nb.xspace import hlo_proto

    real = GpuCostModel.cost

    def cost(self, instr):
        if instr.name == "loop_convert_fusion":
            raise IndexError("list index out of range")
        return real(self, instr)

    monkeypatch.setattr(GpuCostModel, "cost", cost)
    # (programs parsed earlier in this process keep their resolved rows: parse afresh)
    monkeypatch.setattr(hlo_proto, "_parsed", type(hlo_proto._parsed)())
    prof = tp.load(REAL / "jax_h200_nocmdbuf.xplane.pb")
    stats = prof.hlo_stats.set_index("hlo_op_name")
    assert np.isnan(stats.loc["loop_convert_fusion"].flops)
    assert stats.loc["loop_convert_fusion"].total_time_us > 0
    assert (stats.drop(index="loop_convert_fusion").flops.notna()).all()
    said = [r for r in prof.hlo_stats.attrs["reasons"] if "could not be computed" in r]
    assert said == ["the FLOPs and bytes of 1 op of program 11964 (jit_step) could not be "
                    "computed from its HLO proto (IndexError: list index out of range): left "
                    "empty (loop_convert_fusion)"]
    assert len(prof.op_stats) and len(prof.roofline) > 100
