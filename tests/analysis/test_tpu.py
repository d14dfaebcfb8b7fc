"""TPU: every XLA table against xprof 2.24.2 on a real JAX capture of 4 TPU v6e chips
(tests/data), steps inferred from its programs, and damaged copies of it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tensorflow.tsl.profiler.protobuf import xplane_pb2

import tfprof_nb as tp
from tfprof_nb.constants import CATEGORY_COLUMNS

from .real_xla import GIB, TPU, assert_hlo_rows_equal, device_rows, keyed
from .xla_profiles import oracle, oracle_frame


@pytest.fixture(scope="module")
def prof():
    return tp.load(TPU)


def test_hlo_stats_equal_xprof(prof):
    ours = prof.hlo_stats
    assert len(ours) == 17 and set(ours.device_type) == {"TPU"}
    a, b = assert_hlo_rows_equal(ours, oracle_frame(TPU, "hlo_stats"))
    assert (a.program_id > 2**63).any()  # TPU program ids use all 64 bits
    np.testing.assert_allclose(a.model_flop_rate_flops_per_s / 1e9, b.model_flop_rate,
                               rtol=1e-9)
    np.testing.assert_allclose(a.normalized_flop_rate_flops_per_s / 1e9,
                               b.normalized_flop_rate, rtol=1e-9)
    np.testing.assert_allclose(a.memory_bw_bytes_per_s / GIB, b.measured_memory_bw, rtol=1e-9)
    # HBM bytes from the ops' memory breakdowns (copy-start.4 has none: all its bytes count)
    np.testing.assert_allclose(a.hbm_bw_bytes_per_s / GIB, b.hbm_bw, rtol=1e-9)
    np.testing.assert_allclose(a.arithmetic_intensity_flops_per_byte.fillna(0),
                               b.operational_intensity, rtol=1e-9)
    assert (a.bound_by == b.bound_by).all() and set(a.bound_by) == {"HBM"}
    html = np.where(a.source != "", "<div class='source-info-cell' title='" +
                    a.source_stack.str.replace("'", "&#39;").str.replace("<", "&lt;")
                    .str.replace(">", "&gt;") + "'>" + a.source + "</div>", "")
    assert (html == b.source_info).all() and (a.source != "").sum() == 5
    assert (a.deduplicated_name == "broadcast_add_fusion").sum() == 2


def test_device_framework_ops_equal_xprof(prof):
    ref = device_rows(oracle_frame(TPU, "framework_op_stats", 0))
    ours = device_rows(prof.op_stats)
    assert ours.index.equals(ref.index) and len(ours) == 16  # 15 framework ops + IDLE
    assert (ours.type == ref.type).all() and (ours.occurrences == ref.occurrences).all()
    np.testing.assert_allclose(ours.total_time_us, ref.total_time, rtol=1e-12)
    np.testing.assert_allclose(ours.total_self_time_us, ref.total_self_time, rtol=1e-12)
    np.testing.assert_allclose(ours.self_time_pct / 100, ref.device_total_self_time_percent,
                               rtol=1e-9)


def _flatten(node, path=()) -> dict:
    """xprof's op profile as {path: node} (leaves with HLO text named name#program)."""
    name = node["name"]
    if "xla" in node and node["xla"].get("expression") and not node.get("children"):
        name = f"{name}#{node['xla']['programId']}"
    out = {path + (name,): node}
    for child in node.get("children", []):
        out.update(_flatten(child, path + (name,)))
    return out


def _ours(tree: pd.DataFrame) -> dict:
    """Our op profile the same way (fused instructions are program 0, as in xprof)."""
    parents = set(tree.parent)
    rows = {r.node: r for r in tree.itertuples(index=False)}
    out = {}
    for node, r in rows.items():
        path, n = [], node
        while n:
            row = rows[n]
            leaf = row.kind in ("op", "fused") and row.expression and n not in parents
            path.append(f"{row.name}#{row.program_id}" if leaf else row.name)
            n = row.parent
        out[tuple(reversed(path))] = r
    return out


@pytest.mark.parametrize("group_by", ["program", "category"])
def test_op_profile_equals_xprof(prof, group_by):
    ref = oracle(TPU, "op_profile", group_by=group_by)
    root = ref["byProgram" if group_by == "program" else "byCategory"]
    theirs, ours = _flatten(root), _ours(prof.op_profile(group_by=group_by))
    assert set(ours) == set(theirs) and len(ours) >= 34
    assert sum(r.kind == "fused" for r in ours.values()) == 9  # 3 fusions x 3 instructions
    for path, node in theirs.items():
        mine, m = ours[path], node["metrics"]
        assert mine.time_us * 1e6 == pytest.approx(m["rawTime"], abs=1e-3), path
        assert mine.occurrences == m.get("occurrences", 0), path
        assert mine.flops == pytest.approx(m.get("rawFlops", 0), rel=1e-12), path
        share = m["rawTime"] / root["metrics"]["rawTime"]
        assert mine.flop_utilization_pct / 100 * share == pytest.approx(
            m.get("flops", 0), rel=1e-6, abs=1e-15), path
        assert mine.memory_bw_utilization_pct / 100 == pytest.approx(
            m["bandwidthUtils"][0], rel=1e-6, abs=1e-15), path
        if "xla" in node and mine.kind in ("op", "fused"):
            assert mine.expression == node["xla"]["expression"], path
            assert mine.provenance == node["xla"]["provenance"], path
            assert mine.category == node["xla"]["category"], path
    key = "byProgramExcludeIdle" if group_by == "program" else "byCategoryExcludeIdle"
    tree = prof.op_profile(group_by=group_by, include_idle=False)
    assert round(tree.iloc[0].time_us * 1e6) == ref[key]["metrics"]["rawTime"]


def test_roofline_and_peaks_equal_xprof(prof):
    data = oracle(TPU, "roofline_model")
    props = data[0]["p"]
    peaks = prof.device_peaks
    assert peaks.device == props["device_type"] == "TPU v6 Lite"
    assert peaks.peak_flops_per_s / 1e9 == pytest.approx(float(props["peak_flop_rate"]))
    assert peaks.memory_bw_bytes_per_s / GIB == pytest.approx(float(props["peak_hbm_bw"]),
                                                              rel=1e-5)
    assert peaks.vmem_read_bw_bytes_per_s / GIB == pytest.approx(
        float(props["peak_vmem_read_bw"]), rel=1e-5)
    assert peaks.ridge_point_flops_per_byte == pytest.approx(float(props["hbm_ridge_point"]),
                                                             rel=1e-5)
    ref = oracle_frame(TPU, "roofline_model", 0)
    ref = ref[(ref.step == "Total") & (ref.include_infeed_outfeed == True)]  # noqa: E712
    ref = ref.assign(pid=np.where(ref.category == "Program", "-1", ref.hlo_module_id))
    ours = prof.roofline
    a, b = keyed(ours, "program_id", "operation"), keyed(ref, "pid", "operation")
    assert a.index.equals(b.index) and len(a) == 18
    np.testing.assert_allclose(a.total_time_us, b.total_time, rtol=1e-12)
    np.testing.assert_allclose(a.flop_rate_flops_per_s / 1e9, b.measured_flop_rate, rtol=1e-9)
    np.testing.assert_allclose(a.hbm_bw_bytes_per_s / GIB, b.hbm_bw, rtol=1e-9)
    np.testing.assert_allclose(a.roofline_efficiency_pct / 100, b.roofline_efficiency,
                               rtol=1e-9)
    np.testing.assert_allclose(a.compute_efficiency_pct / 100, b.compute_efficiency, rtol=1e-9)
    np.testing.assert_allclose(a.memory_bw_utilization_pct / 100, b.max_mem_bw_utilization,
                               rtol=1e-9)
    assert (a.bound_by == b.bound_by).all()
    for mine, theirs in (("hbm_arithmetic_intensity_flops_per_byte", "hbm_operational_intensity"),
                         ("bottleneck_arithmetic_intensity_flops_per_byte",
                          "bottleneck_operational_intensity")):
        np.testing.assert_allclose(a[mine], b[theirs].astype(float), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.total_self_time_us, b.total_self_time, rtol=1e-12)


def _pct(text: str) -> float:
    return float(text.rstrip("%"))


def test_overview_device_figures_equal_xprof(prof):
    props = oracle(TPU, "overview_page")[0]["p"]
    device = prof.overview().device
    assert device["device_type"] == "TPU" and device["cores"] == 4
    assert round(device["duty_cycle_pct"], 1) == _pct(props["device_duty_cycle_percent"])
    assert round(device["idle_pct"], 1) == _pct(props["device_idle_time_percent"])
    assert round(device["host_idle_pct"], 1) == _pct(props["host_idle_time_percent"])
    assert device["mxu_utilization_pct"] == _pct(props["mxu_utilization_percent"])
    duty = prof.duty_cycle  # the devices' idle time, summed, is xprof's
    idle_ps = float((duty.span_us - duty.busy_us).sum()) * 1e6
    assert idle_ps == pytest.approx(float(props["idle_time_high_confidence_ps"]), rel=1e-5)
    assert device["duty_cycle_pct"] == prof.overview().xprof_device_duty_cycle_pct
    # ours is the roofline's program row, as xprof's roofline tool gives it; XProf's overview
    # counts only complete steps' ops and finds no steps here: 0.0%, which the measures carry
    # as XProf's figure, with why
    program = oracle_frame(TPU, "roofline_model", 0).iloc[0]
    assert program.category == "Program"
    assert device["flop_rate_utilization_pct"] / 100 == pytest.approx(
        program.roofline_efficiency, rel=1e-9)
    assert device["hbm_bw_utilization_pct"] / 100 == pytest.approx(
        program.max_mem_bw_utilization, rel=1e-9)
    for key, said in (("flop_rate_utilization_pct", "flop_rate_utilization_relative_to_roofline"),
                      ("hbm_bw_utilization_pct", "memory_bw_utilization_relative_to_hw_limit")):
        row = prof.measures.loc[key]
        assert _pct(props[said]) == row.xprof_value == 0.0 < round(row.value, 1)
        assert "finds no steps here" in row.xprof_note and "Total" in row.scope
    assert np.isnan(device["hbm_utilization_pct"])  # no counter in the file (xprof: 0%)
    (note,) = [r for r in prof.overview().reasons if "HBM utilisation counter" in r]
    # the card of a near name and another source is told apart, with its own figure
    assert note.endswith(f"the figure 'HBM bandwidth of its peak', "
                         f"{device['hbm_bw_utilization_pct']:.1f}%, is another measure: the "
                         "bandwidth the program reached over the chip's peak, from the roofline")


def test_steps_inferred_from_the_repeated_program(prof):
    steps = prof.steps
    assert len(steps) == 100 and (steps.step_name == "jit_f").all()
    assert steps.source.iloc[0].startswith("inferred: each execution of the repeated XLA "
                                           "program 'jit_f(12190760917235803885)'")
    np.testing.assert_allclose(steps[CATEGORY_COLUMNS].sum(axis=1), steps.duration_ms,
                               rtol=1e-9)
    # every op of jit_f falls in a step; the steps average the 4 cores: their compute is
    # the program's self time (xprof's hlo_stats) over 4, and it fills the steps
    ref = oracle_frame(TPU, "hlo_stats")
    jit_f = ref[ref.program_id == "12190760917235803885"].total_self_time.sum()
    assert steps.device_compute_ms.sum() * 4e3 == pytest.approx(jit_f, rel=1e-12)
    assert steps.host_compute_ms.eq(0).all() and steps.device_idle_ms.ge(0).all()
    assert (steps.device_idle_ms < 0.001 * steps.duration_ms).all()  # back to back
    first = prof.events[(prof.events.line == "XLA Modules")
                        & prof.events.name.str.startswith("jit_f(")].start_us.min()
    assert steps.start_us.iloc[0] == pytest.approx(first)
    overview = prof.overview()
    assert any(r.startswith("steps inferred from each execution of the repeated XLA program")
               for r in overview.reasons)
    assert overview.step_time["steps"] == 100
    props = oracle(TPU, "input_pipeline_analyzer")[1]["p"]  # xprof finds no step
    assert props.get("input_conclusion", "").startswith("No step time measured")


# ---- damaged copies of the capture: tables still come out, and the reasons say why -------
def _damaged(tmp_path, edit):
    space = xplane_pb2.XSpace()
    space.ParseFromString(TPU.read_bytes())
    edit(space)
    out = tmp_path / "damaged.xplane.pb"
    out.write_bytes(space.SerializeToString())
    return tp.load(out)


def _tpu_planes(space):
    return [p for p in space.planes if p.name.startswith("/device:TPU:")]


def _drop_plane_stats(space, prefix: str) -> None:
    for plane in _tpu_planes(space):
        names = {k: m.name for k, m in plane.stat_metadata.items()}
        keep = [s for s in plane.stats if not names[s.metadata_id].startswith(prefix)]
        del plane.stats[:]
        plane.stats.extend(keep)


def test_without_peak_stats(prof, tmp_path):
    damaged = _damaged(tmp_path, lambda s: _drop_plane_stats(s, "peak_"))
    ours, full = damaged.hlo_stats, prof.hlo_stats
    assert len(ours) == len(full) == 17
    np.testing.assert_allclose(ours.total_self_time_us, full.total_self_time_us)
    assert set(ours.bound_by) == {"Unknown"}
    reasons = ours.attrs["reasons"]
    assert any("no peak_teraflops_per_second" in r for r in reasons)
    assert any("set_device_peaks" in r for r in reasons)
    assert damaged.roofline.roofline_efficiency_pct.isna().all()
    device = damaged.overview().device
    assert np.isnan(device["flop_rate_utilization_pct"])
    assert device["duty_cycle_pct"] == pytest.approx(prof.overview().device["duty_cycle_pct"])


def test_without_hlo_protos(prof, tmp_path):
    def drop(space):
        keep = [p for p in space.planes if p.name != "/host:metadata"]
        del space.planes[:]
        space.planes.extend(keep)

    damaged = _damaged(tmp_path, drop)
    ours = damaged.hlo_stats
    a, b = keyed(ours, "program_id", "hlo_op_name"), keyed(prof.hlo_stats, "program_id",
                                                           "hlo_op_name")
    assert a.index.equals(b.index) and (a.hlo_op_expression == b.hlo_op_expression).all()
    assert (a.category == b.category).all()  # TPU ops carry their own metadata
    tree = damaged.op_profile()
    assert "fused" not in set(tree.kind) and len(tree) == len(prof.op_profile()) - 9
    assert sum("has no readable HLO proto" in r for r in ours.attrs["reasons"]) == 3


def test_unknown_line_is_counted(prof, tmp_path):
    def rename(space):
        line = next(ln for ln in _tpu_planes(space)[1].lines if ln.name == "XLA TraceMe")
        line.name = "Mystery Line"

    damaged = _damaged(tmp_path, rename)
    n = int(((prof.events.plane == "/device:TPU:1") & (prof.events.line == "XLA TraceMe")).sum())
    assert n > 0
    reasons = damaged.hlo_stats.attrs["reasons"]
    assert f"{n:,} events on TPU line 'Mystery Line' are not analysed (a line tfprof_nb " \
           "does not know)" in reasons
    assert len(damaged.hlo_stats) == 17


def test_ops_without_program_or_symbol(prof, tmp_path):
    def strip(space):
        for plane in _tpu_planes(space):
            sym = [k for k, m in plane.stat_metadata.items() if m.name == "symbol_id"]
            for md in plane.event_metadata.values():
                if md.display_name == "all-reduce":
                    keep = [s for s in md.stats if s.metadata_id not in sym]
                    del md.stats[:]
                    md.stats.extend(keep)

    damaged = _damaged(tmp_path, strip)
    ours = damaged.hlo_stats
    assert "all-reduce" not in set(ours.hlo_op_name) and len(ours) == 16
    assert any(r.startswith("12 events on TPU op lines name no program and symbol")
               for r in ours.attrs["reasons"])
    idle = damaged.op_stats.set_index(["host_or_device", "operation"]).loc[("Device", "IDLE")]
    before = prof.op_stats.set_index(["host_or_device", "operation"]).loc[("Device", "IDLE")]
    reduce = prof.hlo_stats.set_index("hlo_op_name").loc["all-reduce"].total_self_time_us
    assert idle.total_self_time_us == pytest.approx(before.total_self_time_us + reduce)


def test_steps_line_markers(prof, tmp_path):
    """A TPU with a Steps line (here: the jit_f executions copied onto one) takes its steps
    from it."""
    def add_steps(space):
        for plane in _tpu_planes(space):
            modules = next(ln for ln in plane.lines if ln.name == "XLA Modules")
            steps = plane.lines.add(id=99, display_id=99, name="Steps",
                                    timestamp_ns=modules.timestamp_ns)
            gid = max(plane.stat_metadata) + 1
            plane.stat_metadata[gid].id, plane.stat_metadata[gid].name = gid, "group_id"
            jit_f = [e for e in modules.events
                     if plane.event_metadata[e.metadata_id].name.startswith("jit_f(")]
            for i, e in enumerate(jit_f):
                ev = steps.events.add(metadata_id=e.metadata_id, offset_ps=e.offset_ps,
                                      duration_ps=e.duration_ps)
                ev.stats.add(metadata_id=gid, int64_value=1000 + i)

    steps = _damaged(tmp_path, add_steps).steps
    assert len(steps) == 100 and (steps.source == "device (TPU Steps line)").all()
    assert steps.index.tolist() == list(range(1000, 1100))
    np.testing.assert_allclose(steps.device_compute_ms.to_numpy(),
                               prof.steps.device_compute_ms.to_numpy(), rtol=1e-12)


def test_framework_op_rooflines_equal_xprof(prof):
    """TPU framework ops: FLOP rates, bandwidth, intensity and bound-by as XProf's framework
    op stats (no tensor-core share there: the view leaves the column out on TPUs)."""
    ref = oracle_frame(TPU, "framework_op_stats", 0).set_index(["host_or_device", "operation"])
    ours = prof.op_stats.set_index(["host_or_device", "operation"])
    assert ours.index.sort_values().equals(ref.index.sort_values())
    b = ref.loc[ours.index]
    np.testing.assert_allclose(ours.flop_rate_flops_per_s / 1e9, b.measured_flop_rate,
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ours.memory_bw_bytes_per_s / 2**30, b.measured_memory_bw,
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ours.arithmetic_intensity_flops_per_byte,
                               b.operational_intensity, rtol=1e-6, atol=1e-9)
    assert (ours.bound_by == b.bound_by).all() and "HBM" in set(ours.bound_by)


def test_tf_gpu_framework_ops_rooflines_equal_xprof():
    """TensorFlow's own GPU kernels (BERT, no XLA): no FLOPs, bound by nothing known, and the
    tensor-core share of their kernels' time as XProf's (its table keeps the top 500)."""
    # (the gpu tests' real capture, read here beside the TPU's: both are XProf parity checks)
    from ..conftest import DATA

    path = DATA / "gpu_bert_multiworker" / "34.83.195.179_6003.xplane.pb"
    ref = oracle_frame(path, "framework_op_stats", 0).set_index(["host_or_device",
                                                                  "operation"])
    ours = tp.load(path).op_stats.set_index(["host_or_device", "operation"])
    shared = ref.index.intersection(ours.index)
    assert len(shared) >= 500
    a, b = ours.loc[shared], ref.loc[shared]
    np.testing.assert_allclose(a.tensor_core_pct / 100, b.gpu_tensorcore_utilization,
                               rtol=1e-6, atol=1e-9)
    assert (a.bound_by == b.bound_by).all()
    np.testing.assert_allclose(a.flop_rate_flops_per_s / 1e9, b.measured_flop_rate, atol=1e-9)
