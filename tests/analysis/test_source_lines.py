"""prof.source_lines and prof.source_stacks on real captures (GPU, TPU, AMD, command buffers):
they sum to the device op time; the GPU capture recounted from its kernel events and its HLO
protos' metadata alone; stacks read in either order; function names from the protos."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.xspace.hlo_proto import programs_of_space
from tfprof_nb.analysis.xla.source_lines import (NO_SOURCE, SOURCE_LINE_COLUMNS,
                                             SOURCE_STACK_COLUMNS, Functions, parse_frame,
                                             source_lines_table, stack_tree)

from ..conftest import DATA

GPU = DATA / "jax_h200_nocmdbuf.xplane.pb"
TPU = DATA / "tpu_v6e_jax_inference.xplane.pb"
REAL = ["jax_h200_nocmdbuf.xplane.pb", "jax_h100_nocmdbuf.xplane.pb",
        "jax_h200_transformer.xplane.pb", "jax_h200_inputbound.xplane.pb",
        "tpu_v6e_jax_inference.xplane.pb", "mi300x_jax08_attention.xplane.pb",
        "mi355x_jax_te_fused_attn.xplane.pb"]


@pytest.mark.parametrize("name", REAL)
def test_tables_sum_to_the_device_op_time(name):
    prof = tp.load(DATA / name)
    ops_us = prof.hlo_stats.total_self_time_us.sum()
    for table, columns in ((prof.source_lines, SOURCE_LINE_COLUMNS),
                           (prof.source_stacks, SOURCE_STACK_COLUMNS)):
        assert list(table.columns) == columns
        assert table.self_time_us.sum() == pytest.approx(ops_us, rel=1e-9)
        assert table.attrs["device_op_time_us"] == pytest.approx(ops_us, rel=1e-12)
        assert table.self_time_pct.sum() == pytest.approx(100.0 if ops_us else 0.0)
        assert table.ops.sum() == len(prof.hlo_stats)
        assert table.occurrences.sum() == prof.hlo_stats.occurrences.sum()
        assert table.self_time_us.is_monotonic_decreasing
        assert table["rank"].tolist() == list(range(1, len(table) + 1))
        located = table[table.no_source == ""]
        assert (located.file != "").all() and (located.line >= 0).all()
    lines = prof.source_lines
    assert not lines.duplicated(["file", "line", "no_source"]).any()
    missing = lines[lines.no_source != ""]
    assert set(missing.no_source) <= set(NO_SOURCE.values())
    fused = lines.attrs["located_by_fused_us"]
    assert len(lines.attrs["reasons"]) == len(missing) + (fused > 0)  # a sentence each
    for why, us in missing[["no_source", "self_time_us"]].itertuples(index=False):
        assert any(why in r and f"{us / 1e3:,.3f} ms" in r for r in lines.attrs["reasons"])


def _kernel_sources(prof) -> pd.DataFrame:
    """Each GPU kernel event's time and its op's source location, read here from the events'
    own hlo_op / program_id stats and the HLO protos' instruction metadata (not hlo_stats)."""
    gpu = prof.events[prof.events.plane.astype(str).str.startswith("/device:GPU")]
    ev = prof.event_stats(["hlo_op", "program_id"], gpu).dropna(subset=["hlo_op"])
    space = prof.spaces[prof.hosts[0]]
    modules, _, _ = programs_of_space(space)
    where = {}
    for pid, module in modules.items():
        index = module.proto.stack_frame_index

        def at(md):
            if md.source_file:
                return f"{md.source_file}:{md.source_line}"
            if md.stack_frame_id:  # the innermost frame of its stack
                loc = index.file_locations[
                    index.stack_frames[md.stack_frame_id - 1].file_location_id - 1]
                return f"{index.file_names[loc.file_name_id - 1]}:{loc.line}"
            return ""
        for name, instr in module.instructions.items():
            where[(pid, name)] = at(instr.metadata)
            if not where[(pid, name)] and instr.opcode == "fusion":
                for comp in module.called(instr):  # its fused root's, else their one place
                    root = module.root_of(comp)
                    places = {at(i.metadata) for i in comp.instructions} - {""}
                    where[(pid, name)] = at(root.metadata) or (
                        places.pop() if len(places) == 1 else "")
    source = [where.get((int(p), str(o)), "") for p, o in zip(ev.program_id, ev.hlo_op)]
    return pd.DataFrame({"source": source, "us": ev.duration_us.to_numpy(float)})


def test_gpu_capture_recounted_from_its_kernel_events():
    """Each kernel's time goes to its instruction's source_file:source_line (else its stack's
    innermost frame, as JAX writes them; a fusion without either: its fused root's, else the
    one place of its fused instructions): per location,
    the sums equal prof.source_lines (kernels do not nest on a GPU: self time is time)."""
    prof = tp.load(GPU)
    kernels = _kernel_sources(prof)
    mine = prof.source_lines
    assert kernels.us.sum() == pytest.approx(mine.self_time_us.sum(), rel=1e-9)  # 19.548 ms
    expected = kernels[kernels.source != ""].groupby("source").us.sum()
    located = mine[mine.no_source == ""]
    got = pd.Series(located.self_time_us.to_numpy(),
                    index=located.file + ":" + located.line.astype(str))
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False,
                                   rtol=1e-9)
    assert kernels[kernels.source == ""].us.sum() == pytest.approx(
        mine[mine.no_source != ""].self_time_us.sum(), rel=1e-9)


def test_gpu_capture_lines_functions_and_stacks():
    prof = tp.load(GPU)
    lines = prof.source_lines
    top = lines.iloc[0]
    assert top.file.endswith("tests/make_jax_gpu_profile.py") and top.line == 52
    assert top.function == "_model.<locals>.forward"
    assert top.self_time_pct == pytest.approx(30.94, abs=0.01)  # transposes fused there too
    assert lines.iloc[:8].line.tolist() == [52, 56, 51, 54, 58, 44, 67, 61]
    assert set(lines[lines.no_source == ""].function) == {
        "_model.<locals>.forward", "_model.<locals>.norm", "_model.<locals>.step",
        "_model.<locals>.loss"}
    assert (lines.no_source == "").all()  # 4 transpose fusions located by what they fuse
    assert lines.attrs["located_by_fused_us"] == pytest.approx(106.208)
    stacks = prof.source_stacks
    first = stacks.iloc[0]
    frames = first.stack.split("\n")
    assert [parse_frame(f)[1] for f in frames][:2] == [125, 97]  # outermost first
    assert parse_frame(frames[-1])[:2] == (first.file, first.line) and first.frames == 5
    assert first.functions.split("\n") == ["<module>", "capture", "_model.<locals>.step",
                                           "_model.<locals>.loss", "_model.<locals>.forward"]
    # every stack ends at the location of its ops: per location, stacks sum to the line
    by_line = stacks[stacks.no_source == ""].groupby(["file", "line"]).self_time_us.sum()
    np.testing.assert_allclose(by_line.sort_index().to_numpy(), lines[lines.no_source == ""]
                               .set_index(["file", "line"]).self_time_us.sort_index()
                               .to_numpy(), rtol=1e-12)


def test_tpu_stacks_come_outermost_first_and_copies_have_no_source():
    """The TPU runtime's source_stack stat lists the outermost frame first (XLA's own order is
    the reverse): either way the op's own location ends the stack."""
    prof = tp.load(TPU)
    lines = prof.source_lines
    assert lines.iloc[0].no_source == NO_SOURCE["metadata"]  # host-offload copies
    assert lines.iloc[0].self_time_pct == pytest.approx(96.48, abs=0.01)
    assert "copy-done.4" in lines.attrs["reasons"][0]
    located = lines[lines.no_source == ""]
    assert located.line.tolist() == [29, 38, 37]
    assert located.function.tolist() == ["main.<locals>.f.<locals>.process", "main", "main"]
    stacks = prof.source_stacks
    top = stacks[stacks.no_source == ""].iloc[0]
    frames = top.stack.split("\n")
    assert frames[0] == "<embedded module '_launcher'>:153:2"
    assert parse_frame(frames[-1]) == (top.file, 29, 10)
    assert top.functions.split("\n")[0] == "run_filename_as_main"


def test_fusions_without_metadata_are_located_by_what_they_fuse():
    """MI300X elementwise: JAX's convert fusions carry no metadata, their fused add, subtract,
    max ... do (9.5 % of the device time had a location, 100 % has)."""
    lines = tp.load(DATA / "mi300x_jax08_elementwise.xplane.pb").source_lines
    assert (lines.no_source == "").all()
    total = lines.attrs["device_op_time_us"]
    assert lines.attrs["located_by_fused_us"] / total == pytest.approx(0.905, abs=0.001)
    assert set(lines.file) == {"/workspace/traces/generate_elementwise_trace.py"}


def test_command_buffer_capture_keeps_unattributed_time_in_its_own_rows():
    """Kernels inside command buffers: whatever hlo_stats cannot tie to an instruction has no
    metadata, and stays (with its time) in a row that says so."""
    prof = tp.load(DATA / "jax_h200_transformer.xplane.pb")
    stats = prof.hlo_stats
    unresolved = stats[~stats.resolved.astype(bool)].total_self_time_us.sum()
    lines = prof.source_lines
    row = lines[lines.no_source == NO_SOURCE["unresolved"]]
    assert row.self_time_us.sum() == pytest.approx(unresolved, rel=1e-12)


def test_same_script_with_and_without_command_buffers_gives_the_same_lines():
    """jax_h200_transformer (command buffers on, kernels attributed by hlo_stats) against
    jax_h200_nocmdbuf (off), the same script: the same 13 lines, each line's share of the
    device op time within 1.5 points (56: 26.5 vs 27.9 %, the others within about half a point)."""
    on = tp.load(DATA / "jax_h200_transformer.xplane.pb").source_lines
    off = tp.load(GPU).source_lines
    assert on[on.no_source == ""].self_time_pct.sum() > 99
    share_on = on.set_index(["file", "line", "no_source"]).self_time_pct
    share_off = off.set_index(["file", "line", "no_source"]).self_time_pct
    assert set(share_on.index) == set(share_off.index)
    assert (share_on - share_off).abs().max() < 1.5
    assert on.iloc[0].line == off.iloc[0].line == 52


def _stats(rows: list[dict]) -> pd.DataFrame:
    base = {"program_id": 7, "resolved": True, "source": "", "source_stack": "",
            "occurrences": 1}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_why_no_source_and_location_from_the_stack_alone():
    functions = Functions(pd.DataFrame({"file": ["a.py"], "line": [3], "column": [1],
                                        "function": ["f"]}))
    stats = _stats([
        {"hlo_op_name": "MatMul/k", "program_id": 0, "resolved": False,
         "total_self_time_us": 5.0},
        {"hlo_op_name": "cb", "resolved": False, "total_self_time_us": 4.0},
        {"hlo_op_name": "copy", "total_self_time_us": 3.0},
        {"hlo_op_name": "dot", "source_stack": "a.py:3:1\nmain.py:9:0\n",
         "total_self_time_us": 2.0},
        {"hlo_op_name": "add", "source": "a.py:3", "total_self_time_us": 1.0}])
    lines = source_lines_table(stats, functions)
    assert lines.no_source.tolist() == [NO_SOURCE["tensorflow"], NO_SOURCE["unresolved"],
                                        NO_SOURCE["metadata"], ""]
    assert lines.iloc[3][["file", "line", "function", "self_time_us", "ops"]].tolist() == [
        "a.py", 3, "f", 3.0, 2]
    assert ("TensorFlow ops run outside XLA (eagerly or in a tf.function graph) carry no "
            "source") in lines.attrs["reasons"][0]


def test_stack_tree_times_are_inclusive():
    prof = tp.load(GPU)
    tree = stack_tree(prof.source_stacks)
    assert tree.node.is_unique and pd.isna(tree.iloc[0].parent)
    assert tree.iloc[0].time_us == pytest.approx(prof.hlo_stats.total_self_time_us.sum())
    assert set(tree.parent.dropna()) <= set(tree.node)
    children = tree.groupby("parent").time_us.sum()
    inner = tree.set_index("node").loc[children.index]
    np.testing.assert_allclose(inner.time_us, inner.self_time_us + children, rtol=1e-12)
    assert tree.self_time_us.sum() == pytest.approx(tree.iloc[0].time_us)
    assert tree["name"].iloc[1] == "<module> (make_jax_gpu_profile.py:125)"
    tpu = stack_tree(tp.load(TPU).source_stacks)
    assert "(no source: XLA op without source metadata)" in tpu["name"].tolist()


def test_stack_tree_leaves_out_the_outer_frames_every_stack_shares():
    """TPU: the launcher's, absl's and main's call frames; the last shared one stays."""
    stacks = tp.load(TPU).source_stacks
    full, trimmed = stack_tree(stacks), stack_tree(stacks, all_frames=False)
    assert full.attrs["left_out"] == []
    assert trimmed.attrs["left_out"] == [
        "run_filename_as_main (<embedded module '_launcher'>:153)",
        "_run_code_in_main (<embedded module '_launcher'>:35)",
        "<module> (host_offload_stress_test.py:49)", "run (app.py:484)"]
    assert trimmed.depth.max() == full.depth.max() - 4
    assert sorted(trimmed[trimmed.depth == 1]["name"]) == [
        "(no source: XLA op without source metadata)", "_run_main (app.py:404)"]
    assert trimmed.time_us.iloc[0] == full.time_us.iloc[0]
    leaves = trimmed[trimmed.self_time_us > 0]
    assert sorted(leaves.self_time_us) == sorted(full[full.self_time_us > 0].self_time_us)


def test_no_xla_ops_gives_empty_tables_with_a_reason(gpu_fixture_file):
    prof = tp.load(gpu_fixture_file)  # TensorFlow on GPUs
    assert prof.source_lines.empty and prof.source_stacks.empty
    assert list(prof.source_lines.columns) == SOURCE_LINE_COLUMNS
    assert "no XLA ops" in prof.source_lines.attrs["reasons"][0]


def test_ops_of_no_time_give_no_inf_or_nan_share():
    """Zero-length ops without a location: their sentence says "no time", never inf or nan."""
    import pandas as pd

    from tfprof_nb.analysis.xla.source_lines import _reasons

    ops = pd.DataFrame({"no_source": ["no source metadata"] * 2, "self_time_us": [0.0, 0.0],
                        "hlo_op": ["copy.1", "copy.2"]})
    (line,) = _reasons(ops, 0.0)
    assert line.startswith("0.000 ms (no time) of device op time has no source location")
    assert "inf" not in line and "nan" not in line
