"""prof.hlo_graph on real captures: the nodes are a breadth-first walk of the HLO proto's
operand and user lists (done here apart), their times HLO stats' rows, fusions carry their fused
computations, ops inside command buffers have their neighbours and times, kernels stand for
their ops, and a name several programs hold is refused with the programs named."""

from __future__ import annotations

import math

import pytest

import tfprof_nb as tp
from tfprof_nb.xspace.hlo_proto import programs_of_space

from ..conftest import DATA

FILES = {"nocmdbuf": "jax_h200_nocmdbuf.xplane.pb", "cmdbuf": "jax_h200_transformer.xplane.pb",
         "tpu": "tpu_v6e_jax_inference.xplane.pb"}


@pytest.fixture(scope="module", params=sorted(FILES))
def prof(request):
    return tp.load(DATA / FILES[request.param])


def module_of(prof, program_id):
    modules, _, _ = programs_of_space(prof.spaces[prof.hosts[0]])
    return modules[program_id]


def bfs(module, name: str, hops: int) -> dict:
    """{name: distance} over the proto's operand lists and the users found by scanning."""
    comp = next(c for c in module.proto.computations if name in {i.name for i in c.instructions})
    by_id = {i.id: i for i in comp.instructions}
    links = {i: set() for i in by_id}
    for instr in comp.instructions:
        for oid in instr.operand_ids:
            if oid in by_id:
                links[instr.id].add(oid)
                links[oid].add(instr.id)
    start = next(i.id for i in comp.instructions if i.name == name)
    dist, frontier = {start: 0}, [start]
    for d in range(1, hops + 1):
        frontier = [n for f in frontier for n in links[f] if n not in dist]
        for n in frontier:
            dist.setdefault(n, d)
        frontier = list(dict.fromkeys(frontier))
    return {by_id[i].name: d for i, d in dist.items()}


def top_op(prof):
    stats = prof.hlo_stats
    return stats[stats.resolved].iloc[0]


@pytest.mark.parametrize("hops", [1, 2])
def test_nodes_are_the_breadth_first_walk_with_hlo_stats_times(prof, hops):
    row = top_op(prof)
    graph = prof.hlo_graph(row.hlo_op_name, hops=hops, program=int(row.program_id))
    module = module_of(prof, int(row.program_id))
    expected = bfs(module, row.hlo_op_name, hops)
    top = graph.nodes[graph.nodes.parent == ""]
    assert len(top) > 1
    assert dict(zip(top.node, top.hops.astype(int))) == expected
    assert top[top.center].node.tolist() == [row.hlo_op_name]
    stats = prof.hlo_stats
    stats = stats[stats.program_id.astype(object).map(int) == int(row.program_id)]
    times = dict(zip(stats.hlo_op_name, stats.total_self_time_us))
    timed = 0
    for name, self_us in zip(top.node, top.self_time_us):
        if name in times:
            assert self_us == times[name]
            timed += 1
        else:
            assert math.isnan(self_us)
    assert timed >= 1
    for e in graph.edges[graph.edges.parent == ""].itertuples():  # edges join listed nodes
        assert e.source in expected and e.target in expected
        assert module.instructions[e.target].operand_ids[e.operand] == \
            module.instructions[e.source].id


def test_fusions_list_their_fused_computations(prof):
    row = top_op(prof)
    graph = prof.hlo_graph(row.hlo_op_name, program=int(row.program_id))
    module = module_of(prof, int(row.program_id))
    fusions = graph.nodes[(graph.nodes.parent == "") & graph.nodes.is_fusion]
    assert len(fusions)
    for name in fusions.node:
        comp = module.called(module.instructions[name])[0]
        inside = graph.nodes[graph.nodes.parent == name]
        assert set(inside.node) == {i.name for i in comp.instructions}
        assert inside.self_time_us.isna().all()
        edges = graph.edges[graph.edges.parent == name]
        assert len(edges) == sum(len(i.operand_ids) for i in comp.instructions)


@pytest.fixture(scope="module")
def cmdbuf():
    return tp.load(DATA / FILES["cmdbuf"])


def test_ops_inside_command_buffers_have_neighbours_and_their_attributed_times(cmdbuf):
    stats = cmdbuf.hlo_stats
    inside = stats[stats.attribution.isin(["name", "position"])]
    assert len(inside) > 100  # this capture runs its kernels inside command buffers
    for row in inside.head(5).itertuples():
        graph = cmdbuf.hlo_graph(row.hlo_op_name, program=int(row.program_id))
        center = graph.nodes[graph.nodes.center].iloc[0]
        assert center.self_time_us == row.total_self_time_us > 0
        assert center.attribution == row.attribution
        assert (graph.nodes.parent == "").sum() > 1


def test_a_kernel_name_stands_for_its_op(cmdbuf):
    # one kernel, run inside command buffers for fusion.260-263: the op it is named after
    cb = cmdbuf.result("command_buffer_kernels")
    names = cmdbuf.events.name.loc[cb.event].astype(str).to_numpy()
    assert set(cb.hlo_op[names == "fusion_260"]) == {f"fusion.{i}" for i in range(260, 264)}
    assert cmdbuf.hlo_graph("fusion_260").center == "fusion.260"
    nocmd = tp.load(DATA / FILES["nocmdbuf"])
    ops = nocmd.event_stats("hlo_op").dropna(subset=["hlo_op"])
    per_kernel = ops.groupby(ops.name.astype(str), observed=True).hlo_op.agg(
        lambda v: sorted({str(x).rsplit("::", 1)[-1] for x in v}))
    one = per_kernel[per_kernel.map(len) == 1]
    many = per_kernel[per_kernel.map(len) > 1]
    many = many[[all(n.replace(".", "_") != k for n in v) for k, v in many.items()]]
    assert len(one) and len(many)
    for kernel, names in one.head(5).items():
        assert nocmd.hlo_graph(kernel).center == names[0]
    kernel, names = next(iter(many.items()))  # a cuBLAS kernel run for several ops
    with pytest.raises(ValueError, match="ran for several HLO ops") as err:
        nocmd.hlo_graph(kernel)
    assert all(n in str(err.value) for n in names)


def test_a_name_in_two_programs_is_refused_with_both_named(cmdbuf):
    with pytest.raises(ValueError, match="add.39.3") as err:
        cmdbuf.hlo_graph("add.39.3")
    assert "program 11964 (jit_step)" in str(err.value)
    assert "program 1325 (jit__threefry_split)" in str(err.value)
    assert cmdbuf.hlo_graph("add.39.3", program=1325).program_id == 1325
    assert cmdbuf.hlo_graph("add.39.3", program="jit_step").program_id == 11964
    with pytest.raises(ValueError, match="no HLO op or GPU kernel"):
        cmdbuf.hlo_graph("no-such-op")


def test_two_hosts_each_with_their_program(tmp_path):
    prof = tp.load([DATA / FILES["cmdbuf"], DATA / FILES["nocmdbuf"]])
    assert len(prof.hosts) == 2
    with pytest.raises(ValueError) as err:  # program 11964 differs between the two hosts
        prof.hlo_graph("fusion.263")
    for host in prof.hosts:
        assert f"program 11964 (jit_step) on host {host}" in str(err.value)
    for host in prof.hosts:
        graph = prof.hlo_graph("fusion.263", program=(host, 11964))
        assert graph.host == host
        module = programs_of_space(prof.spaces[host])[0][11964]
        top = graph.nodes[graph.nodes.parent == ""]
        assert set(top.node) == set(bfs(module, "fusion.263", 2))
