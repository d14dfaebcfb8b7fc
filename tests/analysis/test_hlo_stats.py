"""prof.hlo_stats against xprof 2.24.2's hlo_stats.

GPU parity without a GPU: synthetic GPU XSpaces whose kernels name the instructions of REAL HLO
protos (JAX programs compiled on CPU and a TensorFlow jit_compile program; every instruction of
every computation gets kernels on two GPUs).  Real CPU captures show what xprof leaves out:
XLA:CPU thunks (xprof: 0 rows).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.xspace.hlo_proto import HloParseError, parse_hlo_proto

from ..conftest import DATA
from .xla_profiles import MAKER, make, oracle_frame, programs, xplane


@pytest.fixture(scope="module")
def gpu_dir(tmp_path_factory):
    return make(tmp_path_factory, "gpu")


@pytest.fixture(scope="module")
def gpu(gpu_dir):
    path = gpu_dir / "full.xplane.pb"
    ours = tp.load(path).hlo_stats
    ref = oracle_frame(path, "hlo_stats")
    ref = ref.assign(program_id=ref.program_id.astype(int))
    return ours, ref


def _keyed(frame: pd.DataFrame, name: str = "hlo_op_name") -> pd.DataFrame:
    return frame.set_index([frame.program_id.astype(int), frame[name]]).sort_index()


def test_rows_times_and_text_equal_xprof(gpu, gpu_dir):
    ours, ref = gpu
    resolved = ours[ours.resolved | (ours.program_id == 0)]
    a, b = _keyed(resolved), _keyed(ref)
    assert len(b) >= 300 and a.index.equals(b.index)  # every instruction of 4 programs
    assert (a.category == b.category).all()
    assert (a.hlo_op_expression == b.hlo_op_expression).all()
    assert (a.framework_op_name == b.tf_op_name).all()
    assert (a.occurrences == b.occurrences).all()
    assert np.allclose(a.total_time_us, b.total_time, rtol=0, atol=1e-9)
    assert np.allclose(a.total_self_time_us, b.total_self_time, rtol=0, atol=1e-9)
    assert np.allclose(a.avg_time_us, b.avg_time, rtol=1e-12)
    assert np.allclose(a.self_time_pct, b.total_self_time_percent, rtol=1e-9)
    # xprof's source cell: the first stack frame (or the metadata's file:line), stack as title
    html = np.where(a.source != "", "<div class='source-info-cell' title='"
                    + a.source_stack + "'>" + a.source + "</div>", "")
    assert (html == b.source_info).all()
    assert (a.source != "").sum() > 100
    # the same order: by self time, then name (our extra unresolved op aside)
    assert list(resolved.hlo_op_name) == list(ref.hlo_op_name)
    # instructions from all four programs, fused computations included
    assert set(ours.program_id) == {0, 7, 11, 12, 13}
    assert sum(len(p["instructions"]) for p in programs(gpu_dir).values()) == \
        (ours.program_id > 0).sum() - 1


def test_replica_groups_and_shardings_are_written_as_xprof_writes_them(tmp_path_factory):
    """Programs compiled for 8 devices (make_xla_profile.py gpu_collectives): the all-reduces
    name their replica groups by mesh axes (mesh['axis_0'=8,...] {'axis_0'}, with
    use_global_device_ids; a mesh of reordered devices with its order), parameters carry
    replicated and tiled (iota) shardings and the debug callback a maximal one inside a
    tuple; every expression equals xprof's."""
    path = make(tmp_path_factory, "gpu_collectives") / "full.xplane.pb"
    ours, ref = tp.load(path).hlo_stats, oracle_frame(path, "hlo_stats")
    theirs = dict(zip(zip(ref.program_id.astype(int), ref.hlo_op_name), ref.hlo_op_expression))
    mine = dict(zip(zip(ours.program_id.astype(int), ours.hlo_op_name.astype(str)),
                    ours.hlo_op_expression))
    assert len(theirs) > 100 and {k: mine.get(k) for k in theirs} == theirs
    said = " ".join(theirs.values())
    for form in ("replica_groups=mesh['axis_0'=8", "use_global_device_ids=true",
                 "], device_ids=([4,2]T(1,0)) {'axis_0'}", "sharding={replicated}",
                 "sharding={devices=[8,1]<=[8]}", "sharding={{maximal device=0}}"):
        assert form in said, form


def test_unknown_op_kept_with_reason_where_xprof_drops_it(gpu):
    """xprof drops kernels whose hlo_op is not in the program's proto (their time becomes
    IDLE); we keep the row, its instruction columns empty, and say why."""
    ours, ref = gpu
    row = ours[ours.hlo_op_name == "not_in_hlo.9"].iloc[0]
    assert not row.resolved and row.category == "" and np.isnan(row.flops)
    assert row.occurrences == 4 and row.total_time_us == 12.0
    assert "not_in_hlo.9" not in set(ref.hlo_op_name)
    assert any("not_in_hlo.9" in r and "program 11" in r for r in ours.attrs["reasons"])


def test_tensorflow_kernels_outside_xla_are_program_zero(gpu):
    ours, ref = gpu
    a = ours[ours.program_id == 0].iloc[0]
    b = ref[ref.program_id == 0].iloc[0]
    assert (a.hlo_op_name, a.category, a.framework_op_name) == \
        (b.hlo_op_name, b.category, b.tf_op_name) == ("dense/MatMul/tf_k", "MatMul",
                                                      "dense/MatMul:MatMul")
    assert a.occurrences == b.occurrences and a.total_time_us == b.total_time


def _ref_costs(ref: pd.DataFrame) -> pd.DataFrame:
    t = ref.total_time * 1e3  # us -> ns: GFLOP/s x ns = FLOPs
    return pd.DataFrame({"flops": (ref.model_flop_rate * t).round(),
                         "bytes": (ref.measured_memory_bw * 1.073741824 * t).round()},
                        index=ref.index)


def test_flops_bytes_and_bound_by_equal_xprof(gpu):
    """Every row, every computation: XLA's GPU cost analysis as XProf runs it (the sm_86 op
    profile's cycles, fusions by utilization, unknown custom-calls at 0)."""
    ours, ref = gpu
    a, b = _keyed(ours[ours.resolved]), _keyed(ref[ref.program_id > 0])
    b = b.join(_ref_costs(b))
    assert len(a) >= 300 and a.index.equals(b.index)
    np.testing.assert_allclose(a.flops.fillna(0), b.flops, rtol=1e-6, atol=0.5)
    np.testing.assert_allclose(a.memory_accessed_bytes.fillna(0), b.bytes, rtol=1e-6,
                               atol=0.5)
    t = b.total_time * 1e3
    np.testing.assert_allclose(a.normalized_flops.fillna(0), b.normalized_flop_rate * t,
                               rtol=1e-6, atol=0.5)
    assert (a.bound_by == b.bound_by).all()
    assert set(a.bound_by) >= {"HBM", "Unknown"}
    # the cuBLAS gemm custom-call ("__cublas$gemm") is unknown to XLA's analysis (only
    # cuBLASLt matmuls are costed as dots): no FLOPs and no bytes, as in XProf
    gemm = a.loc[(13, "MatMul.2")]
    assert gemm.flops == 0 and gemm.memory_accessed_bytes == 0
    # the dot, the convolution and the TF MatMul, exactly
    for pid, name, flops in ((11, "conv_general_dilated.1", 30976), (7, "MatMul.2", 65536),
                             (11, "ynn_fusion.1", 65536)):
        assert a.loc[(pid, name)].flops / a.loc[(pid, name)].occurrences == flops


def test_event_flops_stats_fill_in_where_the_model_has_none(gpu):
    ours, ref = gpu
    row = ours[(ours.program_id == 12) & (ours.hlo_op_name == "arg_tuple.6")].iloc[0]
    ref_row = _keyed(ref).loc[(12, "arg_tuple.6")]
    assert row.flops == (ref_row.model_flop_rate * ref_row.total_time * 1e3).round() == \
        1013 * row.occurrences


def test_no_hlo_protos(gpu_dir):
    """xprof shows no XLA rows at all; we keep every op, say why its columns are empty."""
    path = gpu_dir / "no_hlo.xplane.pb"
    ours = tp.load(path).hlo_stats
    ref = oracle_frame(path, "hlo_stats")
    assert list(ref.program_id) == ["0"]  # only the TensorFlow kernel
    xla = ours[ours.program_id > 0]
    assert len(xla) == len(_keyed(tp.load(gpu_dir / "full.xplane.pb").hlo_stats)) - 1
    assert not xla.resolved.any() and (xla.category == "").all()
    assert (xla.module != "").all()  # names from the hlo_module stats
    # FLOPs only where the kernels carry a flops stat (every 11th instruction here)
    assert 0 < xla.flops.notna().sum() < len(xla) / 8
    assert any("no HLO protos" in r for r in ours.attrs["reasons"])


def test_proto_that_does_not_parse(gpu_dir):
    path = gpu_dir / "bad_hlo.xplane.pb"
    ours = tp.load(path).hlo_stats
    ref = oracle_frame(path, "hlo_stats")
    assert "12" not in set(ref.program_id)  # xprof drops the program
    bad = ours[ours.program_id == 12]
    assert len(bad) == 37 and not bad.resolved.any()
    assert any("program 12" in r and "could not be read" in r for r in ours.attrs["reasons"])
    good = _keyed(ours[ours.resolved])
    assert (good.hlo_op_expression == _keyed(ref[ref.program_id != "0"])
            .loc[good.index].hlo_op_expression).all()
    with pytest.raises(HloParseError):
        parse_hlo_proto(b"\xff\xff\xff\x07garbage")


def test_unknown_device_peaks(gpu_dir):
    path = gpu_dir / "unknown_gpu.xplane.pb"
    prof = tp.load(path)
    ours = prof.hlo_stats
    assert set(oracle_frame(path, "hlo_stats").bound_by) == {"Unknown"}
    assert set(ours.bound_by) == {"Unknown"}
    assert any("clock_rate" in r for r in ours.attrs["reasons"])
    assert any("set_device_peaks" in r for r in ours.attrs["reasons"])
    prof.set_device_peaks(peak_flops_per_s=1e15, memory_bw_bytes_per_s=3e12)
    assert "HBM" in set(prof.hlo_stats.bound_by)
    assert prof.device_peaks.source == "set_device_peaks"


# ---- CPU: XLA:CPU thunks, which xprof ignores ---------------------------------------------------
@pytest.fixture(scope="module")
def jax_cpu(tmp_path_factory):
    return xplane(make(tmp_path_factory, "jax"))


@pytest.fixture(scope="module")
def tf_jit(tmp_path_factory):
    return xplane(make(tmp_path_factory, "tf_jit"))


def test_jax_cpu_thunks(jax_cpu):
    prof = tp.load(jax_cpu)
    ours = prof.hlo_stats
    assert len(oracle_frame(jax_cpu, "hlo_stats")) == 0  # xprof: XLA:CPU is not a device
    assert set(ours.device_type) == {"CPU"} and ours.resolved.all()
    assert set(ours.module) == {"jit_step", "jit_loop"}
    dot = ours[ours.hlo_op_name.str.startswith("dot_general")].iloc[0]
    assert dot.category == "dot" and dot.framework_op_name == "jit(step)/dot_general:"
    line = next(i for i, text in enumerate(MAKER.read_text().splitlines(), 1)
                if "return jnp.sum(y, axis=1), y.T @ x" in text)  # (its dot: y.T @ x)
    assert dot.occurrences == 3 and dot.source.endswith(f".py:{line}")
    # 128x256 @ 256x128 ... transposed: 2 * 256 * 128 * 128 FLOPs per run
    assert dot.flops == 3 * 2 * 256 * 128 * 128
    ev = prof.event_stats(["hlo_op", "_p", "_c"])
    thunks = ev[ev.hlo_op.astype(str) == dot.hlo_op_name]
    ends = ev[ev.name.astype(str) == f"end: {dot.hlo_op_name}"].set_index("_c")
    # a thunk that finished on its own thread has no end event: its own end stands (fmax)
    finish = np.fmax(thunks.start_us + thunks.duration_us,
                     (ends.start_us + ends.duration_us).reindex(thunks._p).to_numpy())
    assert dot.total_time_us == pytest.approx((finish - thunks.start_us).sum(), abs=1e-6)


def test_jax_cpu_shares_are_said_of_the_ops_span(jax_cpu):
    """On CPU the HLO table's shares and the device IDLE row are of the XLA:CPU ops' span on
    the host (first op's start to last op's end), not the host plane's span, and XProf, which
    lists no device time on CPU, is not named as their rule."""
    from tfprof_nb.plot.op_words import idle_note
    from tfprof_nb.widgets.xla_view import XlaView

    prof = tp.load(jax_cpu)
    stats = prof.hlo_stats
    ev = prof.event_stats(["hlo_op"])
    thunks = ev[ev.hlo_op.notna() & (ev.plane.astype(str) == "/host:CPU")]
    ends = ev[ev.name.astype(str).str.startswith("end: ")]
    last = max((thunks.start_us + thunks.duration_us).max(),
               (ends.start_us + ends.duration_us).max())
    span_us = last - thunks.start_us.min()
    plane = ev[ev.plane.astype(str) == "/host:CPU"]
    plane_us = (plane.start_us + plane.duration_us).max() - plane.start_us.min()
    assert plane_us > span_us  # (the two spans differ: the sentence must name the right one)
    total_us = max(span_us, stats.total_self_time_us.sum())
    assert stats.attrs["total_time_us"] == pytest.approx(total_us, abs=1e-3)
    (said,) = [s for s in XlaView.state(prof).values["statements"]
               if s.startswith("HLO table self time %")]
    assert f"of {total_us / 1e3:,.3f} ms, the XLA:CPU ops' time on the host, from the " \
        "first op's start to the last op's end" in said
    assert "XProf" not in said and "plane" not in said
    note = idle_note(prof, prof.op_stats)
    assert note.startswith("IDLE rows: ") and "the XLA:CPU ops' time on the host" in note
    assert "device plane" not in note and "XLA:CPU " in note.split("):")[-1]
    table = XlaView.state(prof).values["table"]
    assert table.title.startswith("HLO op stats of XLA:CPU (") and "XProf's rule" not in \
        table.title
    # the overview's note on CPU says where these device ops come from
    assert "no GPU or TPU in this profile: the step-time breakdown's device columns are zero; " \
        "the ops XLA runs on the CPU are the op tables' device side" in prof.overview().reasons


def test_an_idle_share_of_zero_still_says_the_time_it_is_of():
    """Eight XLA:CPU devices whose ops overlap (tests/data/jax_cpu_sharded8): the ops' summed
    self time outlasts their span, so the device IDLE row is 0 of that sum; its note said "0.0%
    of 0.0 ms" (the whole worked back from the IDLE row's share), beside the XLA tab's 308.9."""
    from tfprof_nb.plot.op_words import idle_note

    prof = tp.load(DATA / "jax_cpu_sharded8.xplane.pb")
    ops = prof.op_stats
    device = ops[ops.host_or_device == "Device"]
    (idle,) = device[device["type"] == "IDLE"].itertuples()
    assert idle.total_self_time_us == 0
    whole_us = prof.hlo_stats.attrs["total_time_us"]
    assert whole_us > 0 and whole_us == pytest.approx(device.total_self_time_us.sum(), rel=1e-9)
    assert f"XLA:CPU 0.0% of {whole_us / 1e3:,.1f} ms" in idle_note(prof, ops)


def test_an_op_holding_others_is_under_no_category_of_the_op_profile(jax_cpu):
    """XLA:CPU's while runs its body's ops inside it: the op profile counts it in its program
    by its self time and under no category (XProf's rule for ops with children), so the
    categories add up to the program less the while's own time, not to more than it."""
    prof = tp.load(jax_cpu)
    stats = prof.hlo_stats
    loop = stats[(stats.module == "jit_loop") & (stats.category == "while")]
    assert len(loop) == 1 and (loop.total_time_us > loop.total_self_time_us).all()
    tree = prof.op_profile()
    (program,) = tree[(tree.kind == "program") & tree.name.str.startswith("jit_loop")].itertuples()
    cats = tree[(tree.kind == "category") & (tree.parent == program.node)]
    assert "while" not in set(cats.name)
    mine = stats[stats.module == "jit_loop"]
    assert program.time_us == pytest.approx(mine.total_self_time_us.sum(), abs=1e-3)
    assert cats.time_us.sum() == pytest.approx(
        program.time_us - loop.total_self_time_us.sum(), abs=1e-3)


def test_jax_cpu_while_self_time(jax_cpu):
    """The while thunk runs its body's thunks inside it: self time leaves them out."""
    ours = tp.load(jax_cpu).hlo_stats
    loop = ours[ours.module == "jit_loop"]
    w = loop[loop.category == "while"].iloc[0]
    body = loop[loop.framework_op_name.str.contains("while/body")]
    assert w.occurrences == 3 and body.occurrences.min() == 9  # 3 iterations per run
    assert w.total_self_time_us < w.total_time_us
    nested = w.total_time_us - w.total_self_time_us
    others = loop[loop.category != "while"]
    assert body.total_time_us.sum() - 1e-6 <= nested <= others.total_time_us.sum() + 1e-6
    assert w.flops == 0  # its work is in the body's ops


def test_tf_jit_compile_cpu(tf_jit):
    ours = tp.load(tf_jit).hlo_stats
    assert len(oracle_frame(tf_jit, "hlo_stats")) == 0
    by_name = ours.set_index("hlo_op_name")
    assert by_name.loc["MatMul.2"].framework_op_name == "MatMul:MatMul"
    assert by_name.loc["MatMul.2"].category == "dot"
    assert by_name.loc["MatMul.2"].flops == 4 * 2 * 128 * 256 * 64
    assert (ours.occurrences == 4).all() and (ours.program_id == 0).all()
    assert ours.module.str.startswith("a_inference_step").all()
    assert ours.self_time_pct.sum() < 100
