"""prof.op_profile() and prof.roofline against xprof 2.24.2's op_profile and roofline_model,
on synthetic GPU XSpaces around real HLO protos; peaks for CPUs and unknown devices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.xla.device_peaks import peaks_from_plane_stats

from .xla_profiles import make, oracle, oracle_frame, xplane

GIB = 2**30


@pytest.fixture(scope="module")
def gpu_dir(tmp_path_factory):
    return make(tmp_path_factory, "gpu")


@pytest.fixture(scope="module")
def full(gpu_dir):
    return gpu_dir / "full.xplane.pb"


def _flatten(node, path=()):
    """xprof's op profile tree as {(names on the path, ops as name#program): node}."""
    name = node["name"]
    if "xla" in node and node["xla"].get("expression") and not node.get("children"):
        name = f"{name}#{node['xla']['programId']}"
    out = {path + (name,): node}
    for child in node.get("children", []):
        out.update(_flatten(child, path + (name,)))
    return out


def _ours_by_path(tree: pd.DataFrame) -> dict:
    names = dict(zip(tree.node, tree.name))
    parents = dict(zip(tree.node, tree.parent))
    out = {}
    for node in tree.node:
        path, n = [], node
        while n:
            row = tree[tree.node == n].iloc[0]
            path.append(f"{names[n]}#{int(row.program_id)}" if row.kind == "op"
                        and row.expression else names[n])
            n = parents[n]
        out[tuple(reversed(path))] = tree[tree.node == node].iloc[0]
    return out


@pytest.mark.parametrize("group_by", ["program", "category"])
def test_op_profile_tree_equals_xprof(full, group_by):
    prof = tp.load(full)
    tree = prof.op_profile(group_by=group_by)
    ref = oracle(full, "op_profile", group_by=group_by)
    root = ref["byProgram" if group_by == "program" else "byCategory"]
    theirs, ours = _flatten(root), _ours_by_path(tree)
    assert round(ours[(f"by_{group_by}",)].time_us * 1e6) == root["metrics"]["rawTime"]
    peak = prof.device_peaks
    root_ps = root["metrics"]["rawTime"]
    compared = leaves = 0
    extra = {p for p in ours if "not_in_hlo.9" in p or "unknown" in p}
    for path, node in theirs.items():
        if "jit_train(11)" in path and len(path) == 2:
            # our program node also holds the op its proto lacks (12 us, xprof: IDLE)
            assert round(ours[path].time_us * 1e6) == node["metrics"]["rawTime"] + 12_000_000
            continue
        if path[-1] == "IDLE":
            assert round(ours[path].time_us * 1e6) == node["metrics"]["rawTime"] - 12_000_000
            continue
        mine = ours[path]
        m = node["metrics"]
        assert mine.time_us * 1e6 == pytest.approx(m["rawTime"], abs=1e-3), path
        assert mine.occurrences == m.get("occurrences", 0), path
        compared += 1
        if "xla" in node and m.get("rawFlops") == mine.flops:
            leaves += 1
            # xprof's metrics.flops: FLOP utilisation x the node's share of the root's time
            share = m["rawTime"] / root_ps
            assert mine.flop_utilization_pct / 100 * share == pytest.approx(m["flops"],
                                                                           rel=1e-6, abs=1e-15)
            # HBM bytes (none for ops whose bytes come from kernel stats), as XProf
            assert mine.memory_accessed_bytes == pytest.approx(
                m.get("rawBytesAccessedArray", [0])[0], rel=1e-9, abs=1e-6), path
            assert mine.memory_bw_utilization_pct / 100 == pytest.approx(
                m.get("bandwidthUtils", [0])[0], rel=1e-6, abs=1e-15)
            assert mine.expression == node["xla"]["expression"]
            if mine.kind == "op":  # (a duplicates group's provenance in xprof is erratic)
                assert mine.provenance == node["xla"]["provenance"]
    assert compared >= 290 and leaves >= 200
    assert len(ours) == len(theirs) + len(extra)
    # siblings by time (xprof orders ties its own way)
    kids = [c["name"] for c in root["children"]]
    ours_kids = tree[tree.parent == "root"]
    assert set(kids) <= set(ours_kids.name)
    assert ours_kids.time_us.is_monotonic_decreasing
    assert peak.known


def test_op_profile_without_idle(full):
    tree = tp.load(full).op_profile(include_idle=False)
    assert "IDLE" not in set(tree.name)
    root = tree.iloc[0]
    assert root.time_us == pytest.approx(tree[tree.kind == "program"].time_us.sum())
    ref = oracle(full, "op_profile")["byProgramExcludeIdle"]
    assert round(root.time_us * 1e6) == ref["metrics"]["rawTime"] + 12_000_000  # extra op


def test_device_peaks_equal_xprof(full):
    props = oracle(full, "roofline_model")[0]["p"]
    peaks = tp.load(full).device_peaks
    assert peaks.peak_flops_per_s / 1e9 == pytest.approx(float(props["peak_flop_rate"]),
                                                         rel=1e-6)
    assert peaks.memory_bw_bytes_per_s / GIB == pytest.approx(float(props["peak_hbm_bw"]),
                                                              rel=1e-6)
    assert peaks.shared_memory_bw_bytes_per_s / GIB == pytest.approx(
        float(props["peak_vmem_write_bw"]), rel=1e-5)
    assert peaks.ridge_point_flops_per_byte == pytest.approx(float(props["hbm_ridge_point"]),
                                                             rel=1e-5)
    assert peaks.device == props["device_type"]


def test_roofline_equals_xprof_where_flops_agree(full):
    ours = tp.load(full).roofline
    ref = oracle_frame(full, "roofline_model", 0)
    ref = ref[(ref.step == "Total") & (ref.include_infeed_outfeed == True)]  # noqa: E712
    prog, ref_prog = ours.iloc[0], ref[ref.category == "Program"].iloc[0]
    assert prog.operation == "Program" and prog.total_time_us == ref_prog.total_time
    ops = ours.iloc[1:].set_index(["program_id", "operation"])
    theirs = ref[ref.category != "Program"]
    theirs = theirs.set_index([theirs.hlo_module_id.astype(int), theirs.operation])
    common = theirs.index.intersection(ops.index)
    assert len(common) == len(theirs) and len(ops) == len(theirs) + 1  # + not_in_hlo.9
    a, b = ops.loc[common], theirs.loc[common]
    assert np.allclose(a.total_time_us, b.total_time)
    assert np.allclose(a.total_self_time_us, b.total_self_time)
    agree = (a.flops.fillna(0) == (b.model_flop_rate * b.total_time * 1e3).round()) & \
        (a.memory_accessed_bytes.fillna(0) == (b.measured_memory_bw * 1.073741824
                                               * b.total_time * 1e3).round())
    assert agree.all()  # (XLA's GPU cost analysis, as XProf runs it)
    agree = agree & (a.index.get_level_values(0) > 0)  # TensorFlow kernels: no FLOPs known (NaN)
    a, b = a[agree], b[agree]
    assert np.allclose(a.flop_rate_flops_per_s / 1e9, b.measured_flop_rate, rtol=1e-9)
    assert np.allclose(a.memory_bw_bytes_per_s / GIB, b.measured_memory_bw, rtol=1e-9)
    assert np.allclose(a.arithmetic_intensity_flops_per_byte.fillna(0),
                       b.operational_intensity, rtol=1e-9)
    assert (a.bound_by == b.bound_by).all()
    assert np.allclose(a.roofline_efficiency_pct / 100, b.roofline_efficiency, rtol=1e-6,
                       atol=1e-15)
    assert np.allclose(a.compute_efficiency_pct / 100, b.compute_efficiency, rtol=1e-6,
                       atol=1e-15)
    # our addition: the roofline's ceiling at each op's intensity
    peaks = ours.attrs["peaks"]
    x = a.dropna(subset=["arithmetic_intensity_flops_per_byte"])
    assert (x.attainable_flop_rate_flops_per_s <= peaks.peak_flops_per_s).all()
    assert ours.attrs["ridge_point_flops_per_byte"] == pytest.approx(283.052, rel=1e-5)


def test_roofline_unknown_device_and_user_peaks(gpu_dir):
    prof = tp.load(gpu_dir / "unknown_gpu.xplane.pb")
    table = prof.roofline
    assert table.roofline_efficiency_pct.isna().all() and set(table.bound_by) == {"Unknown"}
    assert any("set_device_peaks" in r for r in table.attrs["reasons"])
    with pytest.warns(DeprecationWarning, match="set_device_peaks"):
        given = prof.roofline_for(peak_flops_per_s=1e14, memory_bw_bytes_per_s=1e12)
    assert given.roofline_efficiency_pct.notna().all()
    assert {"HBM"} <= set(given.bound_by)
    with pytest.warns(DeprecationWarning, match="set_device_peaks"):
        tree = prof.op_profile(peak_flops_per_s=1e14, memory_bw_bytes_per_s=1e12)
    assert tree.flop_utilization_pct.notna().all()
    assert prof.op_profile().flop_utilization_pct.isna().all()
    with pytest.raises(ValueError):
        prof.op_profile(peak_flops_per_s=1e14)
    # the one way to give peaks: every table follows
    prof.set_device_peaks(peak_flops_per_s=1e14, memory_bw_bytes_per_s=1e12)
    pd.testing.assert_series_equal(prof.roofline.roofline_efficiency_pct,
                                   given.roofline_efficiency_pct)
    pd.testing.assert_series_equal(prof.op_profile().flop_utilization_pct,
                                   tree.flop_utilization_pct)


def test_roofline_on_cpu_with_given_peaks(tmp_path_factory):
    """XLA:CPU: xprof has no roofline (CPU is no device to it); with peaks given we have."""
    path = xplane(make(tmp_path_factory, "jax"))
    ref = oracle_frame(path, "roofline_model", 0)
    assert len(ref) == 0
    prof = tp.load(path)
    assert prof.roofline.compute_efficiency_pct.isna().all()
    prof.set_device_peaks(peak_flops_per_s=2e11, memory_bw_bytes_per_s=2e10, device="2-core CPU")
    table = prof.roofline
    dot = table[table.operation.str.startswith("dot_general")].iloc[0]
    assert dot.bound_by in ("Compute", "Memory")
    assert dot.roofline_efficiency_pct == pytest.approx(
        max(dot.compute_efficiency_pct, dot.memory_bw_utilization_pct))
    assert "Memory" in set(table.bound_by) or "Compute" in set(table.bound_by)
    assert "HBM" not in set(table.bound_by)
    assert prof.hlo_stats.attrs["peaks"].device == "2-core CPU"


def test_peaks_from_plane_stats():
    h100 = {"clock_rate": 1_755_000, "core_count": 132, "memory_bandwidth": 3_352_320_000_000,
            "compute_cap_major": 9, "compute_cap_minor": 0}
    peaks, why = peaks_from_plane_stats("/device:GPU:0", h100)
    assert why is None and peaks.peak_flops_per_s == pytest.approx(132 * 4096 * 1.755e9)
    given, _ = peaks_from_plane_stats("/device:GPU:0",
                                      dict(h100, peak_teraflops_per_second=500.0))
    assert given.peak_flops_per_s == 5e14
    unknown, why = peaks_from_plane_stats("/device:GPU:0", {"core_count": 80})
    assert not unknown.known and "clock_rate" in why
    tpu, why = peaks_from_plane_stats("/device:TPU:0", {"peak_teraflops_per_second": 197.0,
                                                        "peak_hbm_bw_gigabytes_per_second": 819.0})
    assert why is None and tpu.ridge_point_flops_per_byte == pytest.approx(197e12 / 819e9)


def test_profile_without_xla(gpu_fixture_file):
    """A TensorFlow GPU profile without XLA, whose kernels name no op: empty tables with their
    columns and a reason (xprof's hlo_stats is empty too); the roofline is XProf's program
    row alone (its Total step): the GPUs' time, all idle, no FLOPs, bound by nothing."""
    prof = tp.load(gpu_fixture_file)
    assert len(oracle_frame(gpu_fixture_file, "hlo_stats")) == 0
    for table in (prof.hlo_stats, prof.op_profile(), prof.roofline):
        assert len(table.columns) >= 19
        assert any("no XLA ops" in r for r in table.attrs["reasons"])
    assert prof.hlo_stats.empty and prof.op_profile().empty
    ref = oracle_frame(gpu_fixture_file, "roofline_model", 0)
    ref = ref[(ref.step == "Total") & ref.include_infeed_outfeed.astype(bool)]
    assert list(ref.category) == ["Program"]
    ours = prof.roofline
    assert list(ours.category) == ["Program"] and ours.device_type.iloc[0] == "GPU"
    row, want = ours.iloc[0], ref.iloc[0]
    assert row.total_time_us == pytest.approx(want.total_time, abs=0.01)
    assert want.total_time > 0 and row.occurrences == want.occurrences == 1
    for ours_col, ref_col in (("flop_rate_flops_per_s", "measured_flop_rate"),
                              ("memory_bw_bytes_per_s", "measured_memory_bw"),
                              ("roofline_efficiency_pct", "roofline_efficiency")):
        assert row[ours_col] == want[ref_col] == 0
    assert row.bound_by == want.bound_by == "Unknown"
    assert prof.device_peaks.known  # the V100 planes' stats still give peaks
    figure = prof.plot.roofline()  # (nothing to place: said, not drawn)
    assert not figure.data and "no XLA ops" in figure.layout.annotations[0].text
