"""prof.program_memory against xprof 2.24.2's memory viewer.

Real profiles: JAX inference on TPU v6e and two JAX programs on AMD MI300X (tests/data), real
XLA:CPU captures (JAX jit and TensorFlow jit_compile).  SHARE_WITH chains and freed memory
brought back by a share, which no real profile here has, come from a synthetic XSpace of
hand-made buffer assignments (tests/make_memory_profile.py) run through xprof too.  Every
program in every memory space it uses is compared: peak heap, its position, the heap over the
program order, the buffers live at the peak, the allocation totals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.xla.memory.buffer_assignment import (BUFFER_COLUMNS, HEAP_COLUMNS,
                                                             ProgramMemory)
from tfprof_nb.analysis.xla.memory.program_memory import PROGRAM_COLUMNS

from .memory_profiles import REAL, assert_matches, memory_viewer, real, synthetic
from .xla_profiles import make, xplane


def _compare_all(prof, path, spaces=None) -> int:
    """Compare every program (in each of its memory spaces) with xprof; the comparisons."""
    table = prof.program_memory()
    done = 0
    for program in table.itertuples():
        data = prof.result("program_memory").programs[program.program_id]
        for space in (spaces if spaces is not None else sorted(data["spaces"])):
            theirs = memory_viewer(path, space)[program.program]
            assert_matches(prof.program_memory(program.program_id, space), theirs)
            done += 1
    return done


@pytest.mark.parametrize("name", REAL)
def test_real_profiles_match_xprof(name):
    path = real(name)
    prof = tp.load(path)
    table = prof.program_memory()
    assert set(table.program) == set(memory_viewer(path, 0))  # the same programs
    assert table.has_buffer_assignment.all() and not table.attrs["reasons"]
    assert _compare_all(prof, path) >= len(table)
    assert (table.peak_position >= 0).any()  # some programs have a heap simulator trace


def test_tpu_memory_spaces_and_layouts():
    prof = tp.load(real("tpu_v6e_jax_inference"))
    f = prof.program_memory("jit_f")
    assert f.peak_heap_bytes == 4 * 5 * 1024**3 + 32 and f.peak_position == 3
    assert (f.buffers.buffer_shape.head(4) == "f32[5,1024,1024,256]{3,2,1,0:T(8,128)}").all()
    assert f.buffers.shape_index.head(3).tolist() == ["{0}"] * 3  # copy-start tuples
    host = prof.program_memory("jit_f", memory_space=5)  # host memory (S(5)): no heap trace
    assert host.peak_heap_bytes == 3 * 5 * 1024**3 and host.heap.empty
    assert host.buffers.empty  # xprof lists whole-program buffers only in memory space 0
    assert "no heap simulator trace for memory space 5" in host.reasons[0]
    missing = prof.program_memory("jit_f", memory_space=3)
    assert np.isnan(missing.peak_heap_bytes) and "no buffer allocation in memory space 3" \
        in missing.reasons[0]


def test_gpu_peak_buffers_in_detail():
    prof = tp.load(real("mi300x_jax08_conv"))
    conv = prof.program_memory("jit_forward_3d_conv")
    b = conv.buffers
    assert list(b.columns) == BUFFER_COLUMNS and list(conv.heap.columns) == HEAP_COLUMNS
    assert b.size_bytes.is_monotonic_decreasing
    top = b.iloc[0]
    assert (top.hlo_op_name, top.buffer_shape, top.allocation_type, top.indefinite) == (
        "input_transpose_fusion", "bf16[55862,5120]{1,0}", "Output", True)
    assert top.framework_op == "jit(forward_3d_conv)/conv_general_dilated"
    conv_out = b[b.hlo_op_name == "cudnn-conv.1"].iloc[0]
    assert conv_out.shape_index == "{0}" and conv_out.opcode == "custom-call"
    assert conv_out.alloc_position <= conv.peak_position <= conv_out.free_position
    assert conv.peak_heap_bytes == conv.heap.heap_bytes[conv.peak_position]
    assert conv.heap.heap_bytes.max() == conv.peak_heap_bytes
    assert (b.padding_bytes == b.size_bytes - b.unpadded_size_bytes).all()
    assert b.source.str.contains(r"\.py:\d+$").any()  # JAX's stack frames give the source


def test_xla_cpu_captures_carry_buffer_assignments(tmp_path_factory):
    """JAX jit and TensorFlow jit_compile on CPU: XLA:CPU writes buffer assignments too (some
    programs with heap simulator traces) and xprof's memory viewer reads them."""
    for scenario in ("jax", "tf_jit"):
        path = xplane(make(tmp_path_factory, scenario))
        prof = tp.load(path)
        table = prof.program_memory()
        assert len(table) and table.has_buffer_assignment.all()
        assert _compare_all(prof, path, spaces=[0]) == len(table)
    jax = tp.load(xplane(make(tmp_path_factory, "jax"))).program_memory()
    assert (jax.heap_simulator_events > 0).any()
    loop = tp.load(xplane(make(tmp_path_factory, "jax"))).program_memory("jit_loop")
    assert (loop.heap.event == "share_with").any()
    # TensorFlow's XLA:CPU program has no heap simulator trace: its temporaries are not in
    # the peak (nor in xprof's), and the reason says so
    tf = tp.load(xplane(make(tmp_path_factory, "tf_jit")))
    only = tf.program_memory(int(tf.program_memory().program_id[0]))
    assert only.heap.empty and "temporary allocations" in only.reasons[0]
    assert only.peak_heap_bytes < only.total_allocation_bytes


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    path = synthetic(tmp_path_factory)
    return path, tp.load(path)


def test_share_with_and_random_traces_match_xprof(synth):
    path, prof = synth
    revived = 0
    spaces = {pid: sorted(p["spaces"]) for pid, p in prof.result("program_memory")
              .programs.items()}
    assert spaces[3] == [0, 1] and spaces[1] == [0]
    for pid in range(1, 9):
        for space in spaces[pid]:
            ours = prof.program_memory(pid, space)
            assert_matches(ours, memory_viewer(path, space)[ours.name])
        heap = prof.program_memory(pid).heap
        revived += int(((heap.event == "share_with") & (heap.delta_bytes > 0)).sum())
    assert revived >= 10  # shares that bring freed memory back are exercised
    # XProf's own unit test: the constant (1 MiB) plus one 0.5 MiB buffer at the peak
    for name in ("share_after_free", "share_while_live"):
        assert prof.program_memory(name).peak_heap_bytes == 1.5 * 2**20
    shown = prof.program_memory("share_after_free").buffers
    assert shown.logical_buffer_id.tolist() == [3, 1]  # the sharer is not shown twice
    assert shown.framework_op[1] == "jit(f)/<b>a</b>"


def test_no_buffer_assignment_says_so(synth, tmp_path_factory):
    path, prof = synth
    bare = prof.program_memory("no_buffers")
    assert isinstance(bare, ProgramMemory) and np.isnan(bare.peak_heap_bytes)
    assert bare.buffers.empty and list(bare.buffers.columns) == BUFFER_COLUMNS
    assert bare.heap.empty and list(bare.heap.columns) == HEAP_COLUMNS
    assert "no buffer assignment" in bare.reasons[0]
    assert "peakHeapMib" not in memory_viewer(path, 0)["no_buffers(9)"]  # xprof: nothing
    table = prof.program_memory()
    row = table[table.program_id == 9].iloc[0]
    assert not row.has_buffer_assignment and np.isnan(row.peak_heap_bytes)
    assert any("program 9 (no_buffers)" in r for r in table.attrs["reasons"])
    # JAX modules serialized alone (as_serialized_hlo_module_proto) have none either; the
    # TensorFlow program (experimental_get_compiler_ir's optimized_hlo_proto) has one
    gpu_path = make(tmp_path_factory, "gpu") / "full.xplane.pb"
    gpu = tp.load(gpu_path)
    table = gpu.program_memory()
    assert dict(zip(table.program_id, table.has_buffer_assignment)) == {
        11: False, 12: False, 7: True, 13: True}
    assert len(table.attrs["reasons"]) == 2
    for pid in (7, 13):
        ours = gpu.program_memory(pid)
        assert_matches(ours, memory_viewer(gpu_path, 0)[ours.name])
    for pid in (11, 12):
        assert gpu.program_memory(pid).buffers.empty
        assert "peakHeapMib" not in memory_viewer(gpu_path, 0)[gpu.program_memory(pid).name]


def test_trace_xprof_cannot_replay(synth):
    path, prof = synth
    bad = prof.program_memory("double_free")
    assert "cannot be replayed" in bad.reasons[0] and "freed more times" in bad.reasons[0]
    assert np.isnan(bad.peak_heap_bytes) and bad.buffers.empty
    assert memory_viewer(path, 0)["double_free(10)"] is None  # xprof fails on it


def test_program_lookup_and_errors(synth):
    _path, prof = synth
    by_id, by_name = prof.program_memory(4), prof.program_memory("random_4")
    assert by_id.name == by_name.name == prof.program_memory("random_4(4)").name
    with pytest.raises(ValueError, match=r"unknown program 'nope'.*random_4\(4\)"):
        prof.program_memory("nope")
    with pytest.raises(ValueError, match="unknown program id 99"):
        prof.program_memory(99)
    with pytest.raises(TypeError, match="program id or a module name"):
        prof.program_memory(4.0)
    gemm = tp.load(real("mi300x_jax08_gemm"))
    with pytest.raises(ValueError, match=r"6 programs are named 'jit_dot'.*jit_dot\(21\)"):
        gemm.program_memory("jit_dot")
    assert gemm.program_memory(21).module == "jit_dot"


def test_profile_without_xla_programs(gpu_fixture_file):
    prof = tp.load(gpu_fixture_file)  # TensorFlow on GPU without XLA: no HLO protos
    table = prof.program_memory()
    assert table.empty and list(table.columns) == PROGRAM_COLUMNS
    assert "no HLO protos" in table.attrs["reasons"][0]
    with pytest.raises(ValueError, match="no XLA programs in this profile"):
        prof.program_memory("jit_step")


def test_summary_table_and_analysis_unit(synth):
    _path, prof = synth
    table = prof.program_memory()
    assert list(table.columns) == PROGRAM_COLUMNS and len(table) == 10
    known = table.dropna(subset=["peak_heap_bytes"])
    assert known.peak_heap_bytes.is_monotonic_decreasing
    for row in known.itertuples():
        one = prof.program_memory(row.program_id)
        assert (row.peak_heap_bytes, row.buffers_at_peak, row.heap_simulator_events) == (
            one.peak_heap_bytes, len(one.buffers), len(one.heap))
    assert prof.program_memory(memory_space=1).memory_space.eq(1).all()
    parts = prof._results.partials("program_memory")  # {host: partial}
    assert list(parts) == prof.hosts and set(parts["synthetic"].programs) == set(range(1, 11))
    assert isinstance(prof.program_memory(3).heap.hlo_op_name.dtype, pd.CategoricalDtype)


def test_pod_on_dask_equals_local(tmp_path):
    """Two hosts (the TPU and an MI300X profile) on a real LocalCluster: the buffer
    assignments are read on the workers, the partials travel, the tables equal local ones."""
    import shutil

    import distributed

    shutil.copy(real("tpu_v6e_jax_inference"), tmp_path / "tpu-host.xplane.pb")
    shutil.copy(real("mi300x_jax08_conv"), tmp_path / "gpu-host.xplane.pb")
    local = tp.load(tmp_path)
    table = local.program_memory()
    assert len(table) == 4 + 8  # every program of both hosts
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    with cluster, distributed.Client(cluster) as client:
        remote = tp.load(tmp_path, client=client, timeout=120)
        pd.testing.assert_frame_equal(remote.program_memory(), table)
        for program in ("jit_f", "jit_forward_3d_conv"):
            a, b = remote.program_memory(program), local.program_memory(program)
            pd.testing.assert_frame_equal(a.buffers, b.buffers)
            pd.testing.assert_frame_equal(a.heap, b.heap)
        assert not remote.spaces._fetched  # computed on the workers


def test_programs_in_sql():
    prof = tp.load(real("tpu_v6e_jax_inference"))
    got = prof.sql("SELECT program, peak_heap_bytes FROM program_memory "
                   "ORDER BY peak_heap_bytes DESC")
    table = prof.program_memory()
    assert got.program.tolist() == table.program.tolist()
    assert got.peak_heap_bytes.tolist() == table.peak_heap_bytes.tolist()
