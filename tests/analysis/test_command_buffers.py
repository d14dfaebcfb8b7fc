"""Kernels inside XLA command buffers (CUDA graphs) attributed to their HLO ops
(:mod:`tfprof_nb.analysis.xla.command_buffers`).

The reference is the same program captured with command buffers off: tests/data's
``jax_h200_transformer`` (XLA's defaults: every kernel of the step runs inside one CUDA graph,
whose ``hlo_op`` names the buffer) against ``jax_h200_nocmdbuf`` (the same script with
``--xla_gpu_enable_command_buffer=``, every kernel launched on its own with its op's name).
XProf has no reference here: it drops the kernels of command buffers.  Instruction names differ
between the two compilations; framework ops (the JAX primitives) do not.  The alignment rules
are checked on small modules built here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.xla import command_buffers as cb
from tfprof_nb.xspace.hlo_proto import HloModule, _message_classes, programs_of_space
from tfprof_nb.analysis.runtime.hostdata.host import HostData
from tfprof_nb.xspace import read_xspace

from .real_xla import COMMAND_BUFFERS, REAL

ON, OFF = REAL / "jax_h200_transformer.xplane.pb", REAL / "jax_h200_nocmdbuf.xplane.pb"
ALL_REAL = sorted(REAL.glob("*.xplane.pb"))


@pytest.fixture(scope="module")
def pair():
    return tp.load(ON), tp.load(OFF)


def _gpu(stats: pd.DataFrame) -> pd.DataFrame:
    return stats[stats.device_type == "GPU"]


def _kind_shares(names: pd.Series, time: pd.Series) -> pd.Series:
    """Share (%) of ``time`` per framework-op kind: the last part of the op name."""
    kind = names.fillna("").str.rsplit(":", n=1).str[0].str.rsplit("/", n=1).str[-1]
    return time.groupby(kind.where(kind != "", "(none)")).sum() / time.sum() * 100


def _compare(a: pd.Series, b: pd.Series) -> pd.Series:
    both = pd.DataFrame({"on": a, "off": b}).fillna(0.0)
    return (both.on - both.off).abs()


# ---- item 2: the same program, command buffers on and off -----------------------------------
def test_most_device_time_is_attributed_to_hlo_ops(pair):
    on, off = pair
    for prof in (on, off):
        gpu = _gpu(prof.hlo_stats)
        placed = gpu[gpu.resolved & (gpu.attribution != "unresolved")]
        assert placed.total_self_time_us.sum() >= 0.95 * gpu.total_self_time_us.sum()
    gpu = _gpu(on.hlo_stats)
    assert {"name", "position"} <= set(gpu.attribution) and "stat" not in set(gpu.attribution)
    assert (_gpu(off.hlo_stats).attribution == "stat").all()
    # the buffer's device time is all there, and as long as the other capture's
    total_off = _gpu(off.hlo_stats).total_self_time_us.sum()
    assert gpu.total_self_time_us.sum() == pytest.approx(total_off, rel=0.05)


def test_framework_op_kinds_share_the_device_time_alike(pair):
    """Each framework-op kind's share of device time within 5 points of the other capture's:
    from the HLO stats, the device framework ops and the kernel table's op column."""
    on, off = pair
    shares = [_kind_shares(p.hlo_stats.framework_op_name, p.hlo_stats.total_self_time_us)
              for p in pair]
    diff = _compare(*shares)
    assert len(diff) >= 5 and diff.max() <= 5.0, diff.sort_values().tail()
    assert shares[0].idxmax() == shares[1].idxmax()
    dev = [p.op_stats[(p.op_stats.host_or_device == "Device") & (p.op_stats.type != "IDLE")]
           for p in pair]
    diff = _compare(*[_kind_shares(d.operation, d.total_self_time_us) for d in dev])
    assert len(diff) >= 5 and diff.max() <= 5.0, diff.sort_values().tail()
    kernels = [p.kernel_stats for p in pair]
    assert all((k.op_name != "").all() for k in kernels)
    diff = _compare(*[_kind_shares(k.op_name, k.total_duration_us) for k in kernels])
    assert len(diff) >= 5 and diff.max() <= 5.0, diff.sort_values().tail()


def test_op_profile_and_roofline_are_per_op(pair):
    """The program's FLOPs (each op's cost model times its occurrences) and its categories are
    those of the capture without command buffers; the roofline has a row per op."""
    profiles = [p.op_profile() for p in pair]
    programs = [o[o.kind == "program"].set_index("name") for o in profiles]
    name = programs[1].time_us.idxmax()
    assert programs[0].loc[name, "flops"] == pytest.approx(programs[1].loc[name, "flops"],
                                                           rel=0.01)
    categories = [set(o[o.kind == "category"].name) for o in profiles]
    assert categories[0] == categories[1]
    roofs = [p.roofline for p in pair]
    assert abs(len(roofs[0]) - len(roofs[1])) <= 0.1 * len(roofs[1])
    assert not roofs[0].operation.str.startswith("command_buffer").any()


# ---- the alignment on the real capture ------------------------------------------------------
def _host(path):
    """(host, its GPU kernels with an hlo_op, their ops, programs, the HLO modules)."""
    hd = HostData("h", read_xspace(path))
    hlo = hd.str_stat("hlo_op")
    rows = hlo.rows.astype(np.int64)
    rows = rows[(hd.plane_of(rows) == "/device:GPU:0") & ~hd.derived_line_mask()[rows]]
    ops = np.array([str(v).split("::")[-1] for v in hlo.table], dtype=object)[
        hlo.lookup(rows)[0]]
    pid, has = hd.int_stat("program_id").lookup(rows)
    modules, _, _ = programs_of_space(hd.space)
    return hd, rows, ops, np.where(has, pid, -1), modules


def test_each_execution_runs_every_scheduled_op_of_the_buffer():
    """Per launch of the buffer (its kernels' correlation_id), every instruction of the
    schedule that runs a kernel gets at least one, in schedule order, and no op gets more
    kernels than it had in the other launches."""
    hd, rows, ops, pids, modules = _host(ON)
    att = cb.attribute_kernels(hd, rows, ops, pids, modules)
    assert len(att.inside) == len(rows) and (att.how[att.inside] != cb.STAT).all()
    (pid,) = set(pids.tolist())
    plan = cb.kernel_plan(modules[pid], ops[0])
    order = {n: i for i, n in enumerate(plan.names)}
    corr, _ = hd.int_stat("correlation_id").lookup(rows)
    frame = pd.DataFrame({"launch": corr, "op": att.op, "begin": hd.begin[rows]})
    runs = set(n for n, works in zip(plan.names, plan.works) if works)
    counts = []
    for _, g in frame.sort_values("begin").groupby("launch"):
        assert set(g.op) == runs
        pos = g.op.map(order).to_numpy()
        assert (np.diff(pos) >= 0).all()
        counts.append(g.op.value_counts().sort_index())
    assert len(counts) >= 2 and all(c.equals(counts[0]) for c in counts)


def test_library_kernels_without_a_place_stay_unresolved_with_their_time():
    """The same capture against a schedule that lost its cuBLAS calls: the kernels that carry
    no instruction name have nowhere to go, stay in the buffer's row, and the reason gives
    their count and time."""
    hd, rows, ops, pids, modules = _host(ON)
    (pid,) = set(pids.tolist())
    # a copy to change: parsed modules are shared (every later parse of these bytes gets the
    # same object, hlo_proto.parse_hlo_proto)
    edited = type(modules[pid].proto)()
    edited.CopyFrom(modules[pid].proto)
    module = modules[pid] = HloModule.from_proto(edited)
    calls = {i.id for i in module.by_id.values() if i.opcode == "custom-call"}
    for entry in module.proto.schedule.sequences:
        kept = [i for i in entry.value.instruction_ids if i not in calls]
        del entry.value.instruction_ids[:]
        entry.value.instruction_ids.extend(kept)
    att = cb.attribute_kernels(hd, rows, ops, pids, modules)
    names = hd.names[hd.name_code[rows]].astype(str)
    plan = cb.kernel_plan(module, ops[0])
    library = np.array([not plan.positions(n) for n in names])
    lost = att.how == cb.UNRESOLVED
    assert lost.any() and (lost == library).all()
    assert (att.op[lost] == ops[lost]).all()
    (buffer,) = att.buffers
    assert buffer["unresolved_kernels"] == lost.sum()
    assert buffer["unresolved_ps"] == hd.duration[rows[lost]].sum()
    (reason,) = cb.buffer_reasons(att.buffers, {pid: module.name})
    share = 100 * hd.duration[rows[lost]].sum() / hd.duration[rows].sum()
    assert f"{lost.sum():,} of them" in reason and f"{share:.1f}%" in reason


@pytest.mark.parametrize("path", ALL_REAL, ids=lambda p: p.name)
def test_captures_without_command_buffers_keep_their_stats(path):
    """AMD (no HIP graphs in these captures), TPU and NVIDIA with buffers off: nothing to
    attribute; every row keeps the op its events name."""
    stats = tp.load(path).hlo_stats
    if path.name in COMMAND_BUFFERS:
        assert (_gpu(stats).attribution != "stat").all()
        unresolved = stats[stats.attribution == "unresolved"].total_self_time_us.sum()
        assert any("command buffer" in r and ("0% unresolved" in r if not unresolved
                                              else "could not be placed" in r)
                   for r in stats.attrs["reasons"])
    else:
        assert (stats.attribution == "stat").all()
        assert not any("command buffer" in r for r in stats.attrs["reasons"])


# ---- the rules, on modules built here --------------------------------------------------------
def _module(instrs: list[tuple], order: list[str] | None = None) -> HloModule:
    """A module whose entry has ``instrs`` ((name, opcode, deduplicated name)), scheduled in
    ``order`` (default: as listed)."""
    classes = _message_classes()
    proto = classes["HloModuleProto"](name="m", entry_computation_id=1)
    comp = proto.computations.add(name="main", id=1)
    ids = {}
    for i, (name, opcode, dedup) in enumerate(instrs, start=10):
        ins = comp.instructions.add(name=name, opcode=opcode, id=i)
        ins.metadata.deduplicated_name = dedup
        ids[name] = i
    entry = proto.schedule.sequences.add(key=1)
    entry.value.instruction_ids.extend(ids[n] for n in (order or [n for n, _, _ in instrs]))
    return HloModule.from_proto(proto)


def _align(module: HloModule, kernels: list[str]) -> tuple[list, list]:
    plan = cb.kernel_plan(module, "command_buffer")
    pos, how = cb.align(kernels, plan)
    return ([plan.names[p] if p >= 0 else None for p in pos],
            [cb.ATTRIBUTION[h] for h in how])


def test_names_follow_the_schedule_and_shared_kernels_each_member():
    module = _module([("p", "parameter", ""), ("add.2", "fusion", "add.1"),
                      ("add.1", "fusion", "add.1"), ("gemm-fusion.3", "fusion", ""),
                      ("add.7", "fusion", "add.1")],
                     order=["p", "add.2", "gemm-fusion.3", "add.1", "add.7"])
    ops, how = _align(module, ["add_2", "gemm_fusion_3", "add_2", "add_2"])
    assert ops == ["add.2", "gemm-fusion.3", "add.1", "add.7"] and set(how) == {"name"}
    # a second run of the sequence (no launch id) starts over; AMD's .kd suffix
    ops, _ = _align(module, ["add_2.kd", "gemm_fusion_3.kd", "add_2.kd", "add_2.kd"] * 2)
    assert ops == ["add.2", "gemm-fusion.3", "add.1", "add.7"] * 2


def test_library_kernels_by_position_between_matched_neighbours():
    module = _module([("a", "fusion", ""), ("custom-call.1", "custom-call", ""),
                      ("b", "fusion", ""), ("custom-call.2", "custom-call", ""),
                      ("custom-call.3", "custom-call", ""), ("c", "fusion", ""),
                      ("reduce.4", "fusion", "")])
    ops, how = _align(module, ["a", "Memset 0", "nvjet_x", "b", "cutlass_y", "sm90_z", "c",
                               "Memset 0", "reduce_4"])
    assert ops == ["a", "custom-call.1", "custom-call.1", "b", "custom-call.2",
                   "custom-call.3", "c", "reduce.4", "reduce.4"]
    assert how == ["name", "position", "position", "name", "position", "position", "name",
                   "position", "name"]


def test_kernels_with_no_place_or_no_agreeing_count_stay_unresolved():
    module = _module([("a", "fusion", ""), ("custom-call.1", "custom-call", ""),
                      ("custom-call.2", "custom-call", ""), ("b", "fusion", ""),
                      ("c", "fusion", "")])
    # three library kernels for two calls: no order to trust; none between b and c
    ops, how = _align(module, ["a", "k1", "k2", "k3", "b", "k4", "c"])
    assert ops == ["a", None, None, None, "b", None, "c"]
    assert how == ["name"] + ["unresolved"] * 3 + ["name", "unresolved", "name"]


def test_kernels_before_the_first_match_are_the_ops_just_before_it():
    """A command buffer runs a contiguous stretch of the schedule: a library kernel before
    the first named one is the library call just before that op, never one further back
    (another buffer's, or outside every buffer); with no kernel matched by name, nothing is
    placed."""
    module = _module([("gemm_a", "custom-call", ""), ("fus_b", "fusion", ""),
                      ("fus_c", "fusion", ""), ("gemm_d", "custom-call", ""),
                      ("fus_e", "fusion", "")])
    ops, how = _align(module, ["nvjet_x", "fus_c"])  # gemm_a is not next to fus_c
    assert ops == [None, "fus_c"] and how == ["unresolved", "name"]
    ops, how = _align(module, ["fus_b", "fus_c", "nvjet_x"])  # after the last: gemm_d
    assert ops == ["fus_b", "fus_c", "gemm_d"] and how == ["name", "name", "position"]
    ops, how = _align(module, ["nvjet_x", "fus_e"])
    assert ops == ["gemm_d", "fus_e"] and how == ["position", "name"]
    ops, how = _align(module, ["nvjet_x", "nvjet_y"])
    assert ops == [None, None] and how == ["unresolved", "unresolved"]


def test_an_outlined_command_buffer_computation_is_walked():
    """Older XLA outlines a command buffer as a computation called by a ``call`` (its name in
    the kernels' hlo_op): the plan walks the called computation."""
    classes = _message_classes()
    proto = classes["HloModuleProto"](name="m", entry_computation_id=1)
    body = proto.computations.add(name="command_buffer", id=2)
    body.instructions.add(name="f.1", opcode="fusion", id=21)
    body.instructions.add(name="cc", opcode="custom-call", id=22)
    main = proto.computations.add(name="main", id=1)
    main.instructions.add(name="g.0", opcode="fusion", id=11)
    main.instructions.add(name="call.5", opcode="call", id=12, called_computation_ids=[2])
    module = HloModule.from_proto(proto)
    assert cb.is_buffer_op(module, "call.5") and not cb.is_buffer_op(module, "g.0")
    assert cb.is_buffer_op(module, "command_buffer_1")
    plan = cb.kernel_plan(module, "call.5")
    assert plan.names == ["f.1", "cc"]
    pos, how = cb.align(["f_1", "nvjet"], plan)
    assert pos.tolist() == [0, 1] and how.tolist() == [cb.NAME, cb.POSITION]
    assert cb.kernel_plan(module, "command_buffer_1").names == ["g.0", "f.1", "cc"]


def test_buffer_kernels_name_their_events_for_the_trace_viewer(pair):
    """``command_buffer_kernels``: every event inside the buffer once, with the op it is
    attributed to; per op as many events as the HLO stats count."""
    on, _ = pair
    inside = on.result("command_buffer_kernels")
    stat = on.stat("hlo_op")
    assert inside.event.is_unique and len(inside) == (stat == "command_buffer_1").sum()
    assert set(stat.loc[inside.event].astype(str)) == {"command_buffer_1"}
    counts = inside.hlo_op.value_counts()
    stats = _gpu(on.hlo_stats).set_index("hlo_op_name").occurrences
    assert counts.sort_index().equals(stats.sort_index().rename("count").rename_axis("hlo_op"))
