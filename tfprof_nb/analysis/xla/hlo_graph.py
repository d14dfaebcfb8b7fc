"""The HLO graph around one op: its neighbours in the program's HLO proto, with their times.

:func:`neighbourhood` walks the op's computation from the op along operand and user links (in
either direction) for at most ``hops`` steps; every fusion among the nodes brings its fused
computation along (its instructions, nested fusions' too, as nodes whose ``parent`` is the
fusion).  Nodes carry shapes from the proto and times, FLOPs and bytes from HLO stats' row of
the same program and instruction name (summed over hosts and devices as HLO stats does; no row:
NaN).  Ops inside command buffers have their rows from the command-buffer attribution
(``attribution`` says how).  :func:`find_op` finds the program holding an op among every
host's programs, and :func:`kernel_ops` the HLO ops a GPU kernel ran for.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pandas as pd

from .hlo_text import category, shape_text

__all__ = ["NODE_COLUMNS", "EDGE_COLUMNS", "HloGraphData", "neighbourhood", "graph_frames",
           "find_op", "kernel_ops", "event_op", "event_ops", "Candidate"]

NODE_COLUMNS = ["node", "opcode", "category", "shape", "computation", "parent", "hops",
                "center", "is_fusion", "fused_instructions", "occurrences", "total_time_us",
                "self_time_us", "flops", "memory_accessed_bytes", "attribution"]
EDGE_COLUMNS = ["source", "target", "operand", "shape", "parent"]
_STAT_COLUMNS = {"occurrences": "occurrences", "total_time_us": "total_time_us",
                 "self_time_us": "total_self_time_us", "flops": "flops",
                 "memory_accessed_bytes": "memory_accessed_bytes", "attribution": "attribution"}
_MAX_NESTING = 16


class Candidate(tuple):
    """(host, program id, module name, HloModule) of a program holding an op."""

    __slots__ = ()

    def __new__(cls, host, program_id, module_name, module):
        return super().__new__(cls, (host, program_id, module_name, module))

    def label(self) -> str:
        return f"program {self[1]} ({self[2]}) on host {self[0]}"


class HloGraphData:
    """The graph: ``nodes`` (NODE_COLUMNS), ``edges`` (EDGE_COLUMNS), the ``center`` op's
    name, its ``program_id``, ``module`` name, ``host`` and the ``hops`` walked."""

    def __init__(self, nodes, edges, center, program_id, module, host, hops):
        self.nodes, self.edges, self.center = nodes, edges, center
        self.program_id, self.module, self.host, self.hops = program_id, module, host, hops


def _users(comp) -> dict:
    """{instruction id: ids of the instructions of ``comp`` that use it}."""
    users: dict = {}
    for instr in comp.instructions:
        for oid in instr.operand_ids:
            users.setdefault(oid, []).append(instr.id)
    return users


def neighbourhood(module, name: str, hops: int) -> dict:
    """{instruction name: hops from ``name``} of the instructions of ``name``'s computation
    reachable in at most ``hops`` steps along operand and user links (breadth first)."""
    start = module.instructions[name]
    comp = module.computation_of[name]
    users = _users(comp)
    members = {i.id for i in comp.instructions}
    dist = {start.id: 0}
    queue = deque([start.id])
    while queue:
        iid = queue.popleft()
        if dist[iid] >= hops:
            continue
        instr = module.by_id[iid]
        for nid in list(instr.operand_ids) + users.get(iid, []):
            if nid in members and nid not in dist:
                dist[nid] = dist[iid] + 1
                queue.append(nid)
    return {module.by_id[i].name: d for i, d in dist.items()}


def _fused(module, instr) -> list:
    """The fused computations of a fusion instruction (none for other opcodes)."""
    return module.called(instr) if instr.opcode == "fusion" else []


def _node(module, instr, hops, parent: str, center: str) -> dict:
    fused = _fused(module, instr)
    return {"node": instr.name, "opcode": instr.opcode, "category": category(module, instr),
            "shape": shape_text(instr.shape, layout=False),
            "computation": module.computation_of[instr.name].name, "parent": parent,
            "hops": hops, "center": instr.name == center, "is_fusion": bool(fused),
            "fused_instructions": sum(len(c.instructions) for c in fused)}


def _edges_of(module, instr, inside: set, parent: str) -> list[dict]:
    out = []
    for k, op in enumerate(module.operands(instr)):
        if op is not None and op.name in inside:
            out.append({"source": op.name, "target": instr.name, "operand": k,
                        "shape": shape_text(op.shape, layout=False), "parent": parent})
    return out


def _expand(module, fusion, center: str, nodes: list, edges: list, depth: int = 0) -> None:
    """Add the fused computations of ``fusion`` (recursively) to ``nodes`` and ``edges``."""
    if depth > _MAX_NESTING:
        return
    for comp in _fused(module, fusion):
        inside = {i.name for i in comp.instructions}
        for instr in comp.instructions:
            nodes.append(_node(module, instr, np.nan, fusion.name, center))
            edges += _edges_of(module, instr, inside, fusion.name)
            _expand(module, instr, center, nodes, edges, depth + 1)


def _with_stats(nodes: pd.DataFrame, stats: pd.DataFrame, program_id) -> pd.DataFrame:
    """``nodes`` with HLO stats' columns of the program's rows of the same op name."""
    rows = stats[[int(p) == int(program_id) for p in stats.program_id]] if len(stats) else stats
    rows = rows.drop_duplicates("hlo_op_name").set_index("hlo_op_name")
    for col, src in _STAT_COLUMNS.items():
        values = rows[src] if src in rows else pd.Series(dtype=float)
        nodes[col] = nodes.node.map(values)
    nodes["occurrences"] = nodes.occurrences.astype("Int64")
    return nodes


def graph_frames(module, program_id, name: str, hops: int, stats: pd.DataFrame):
    """(nodes, edges) of the graph around ``name`` (see the module's text)."""
    near = neighbourhood(module, name, hops)
    comp = module.computation_of[name]
    order = [i for i in module.schedule(comp) if i.name in near] or \
        [i for i in comp.instructions if i.name in near]
    nodes, edges = [], []
    for instr in order:
        nodes.append(_node(module, instr, near[instr.name], "", name))
        edges += _edges_of(module, instr, set(near), "")
    for instr in order:
        _expand(module, instr, name, nodes, edges)
    frame = pd.DataFrame(nodes, columns=NODE_COLUMNS[:10]).drop_duplicates("node")
    frame["hops"] = frame.hops.astype(float)
    edges = pd.DataFrame(edges, columns=EDGE_COLUMNS).drop_duplicates(
        ["source", "target", "operand"])
    return (_with_stats(frame.reset_index(drop=True), stats, program_id),
            edges.reset_index(drop=True))


def _program_matches(cand: Candidate, program) -> bool:
    if program is None:
        return True
    if isinstance(program, tuple):
        return (cand[0], int(cand[1])) == (program[0], int(program[1]))
    if isinstance(program, str) and not program.isdigit():
        return cand[2] == program
    return int(cand[1]) == int(program)


def find_op(programs: dict, op: str, program=None) -> list[Candidate]:
    """The programs among ``programs`` ({host: ({program id: HloModule}, {id: name})}) holding
    an instruction ``op`` (``program``: an id, a module name or (host, id) narrows them); one
    program's copies on several hosts count once when their modules have the same
    instructions."""
    found, seen = [], set()
    for host in sorted(programs):
        modules, names = programs[host]
        for pid, module in modules.items():
            if op not in module.instructions:
                continue
            cand = Candidate(host, pid, module.name, module)
            if not _program_matches(cand, program):
                continue
            key = (int(pid), module.name, len(module.instructions))
            if key not in seen:
                seen.add(key)
                found.append(cand)
    return found


def kernel_ops(events: pd.DataFrame, buffer_kernels: pd.DataFrame, hlo_op: pd.Series,
               kernel: str) -> list[str]:
    """The HLO ops the GPU kernel named ``kernel`` ran for: the command-buffer attribution of
    its events inside command buffers, the ``hlo_op`` stat (its last ``::`` part) of the
    others; sorted."""
    rows = events.index[(events.name == kernel).to_numpy()]
    if not len(rows):
        return []
    inside = buffer_kernels[buffer_kernels.event.isin(rows)]
    ops = set(inside.hlo_op.astype(str))
    rest = rows.difference(pd.Index(inside.event))
    values = hlo_op.reindex(rest).dropna()
    ops |= {str(v).rsplit("::", 1)[-1] for v in pd.unique(values.astype(str))}
    return sorted(ops)


def event_ops(buffer_kernels: pd.DataFrame, hlo_op: pd.Series) -> pd.Series:
    """The HLO op each event of ``hlo_op`` (a stat series, indexed by rows of
    ``prof.events``) and of ``buffer_kernels`` ran for, as text: inside a command buffer the
    kernel's own instruction (the attribution; its ``hlo_op`` stat names the buffer), else
    its ``hlo_op`` stat's last ``::`` part."""
    ops = hlo_op.dropna().astype(str).str.rsplit("::", n=1).str[-1]
    inside = pd.Series(buffer_kernels.hlo_op.astype(str).to_numpy(),
                       index=pd.Index(buffer_kernels.event, name=ops.index.name))
    inside = inside[~inside.index.duplicated()]  # (the first attribution, as event_op took)
    return pd.concat([ops[~ops.index.isin(inside.index)], inside]).sort_index()


def event_op(buffer_kernels: pd.DataFrame, hlo_op: pd.Series, event: int) -> str | None:
    """The HLO op the event (a row of ``prof.events``) ran for (:func:`event_ops`); None
    without one."""
    ops = event_ops(buffer_kernels[buffer_kernels.event == event],
                    hlo_op.reindex(pd.Index([event], name=hlo_op.index.name)))
    return str(ops.iloc[0]) if len(ops) else None
