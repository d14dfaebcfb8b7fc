"""The HLO graph around an op (``prof.hlo_graph(op)``): the result object and its view.

:func:`hlo_graph` finds the op among every host's XLA programs (a GPU kernel's name is
resolved to the HLO op it ran for), builds the graph with :mod:`..analysis.xla.hlo_graph` and
returns an :class:`HloGraph`; ``.show()`` draws it (``js/src/hlograph.ts``: layered left to
right, coloured by self time, fusions expanding on a click), live or from packed state.
:class:`GraphRequests` (:func:`graph_answer`) answers the views' "graph" actions (the XLA
tab, op stats, the Source view, a trace event's details) with the same frames.
"""

from __future__ import annotations

import math

import pandas as pd
import traitlets

from .._words import counted
from ..analysis.xla.hlo_graph import (HloGraphData, event_op, find_op, graph_frames,
                                      kernel_ops)
from ..xspace.hlo_proto import programs_of_space
from ._view import View, ViewState
from .traits import TableData, TableTrait

__all__ = ["HloGraph", "HloGraphView", "GraphRequests", "hlo_graph", "graph_record",
           "graph_answer"]


class HloGraph(HloGraphData):
    """The HLO graph around an op: ``nodes`` and ``edges`` (DataFrames), ``center`` (the op),
    ``program_id``, ``module``, ``host`` and ``hops``; ``show()`` draws it."""

    def show(self) -> "HloGraphView":
        """The graph as a widget (offline too: reports and exported notebooks draw it)."""
        return HloGraphView(self)

    def _ipython_display_(self):
        self.show()._ipython_display_()

    def __repr__(self) -> str:
        return (f"<HloGraph {self.center!r} of program {self.program_id} ({self.module}): "
                f"{counted(int((self.nodes.parent == '').sum()), 'node')} within "
                f"{counted(self.hops, 'hop')}, "
                f"{counted(int((self.nodes.parent != '').sum()), 'fused instruction')}>")


def _programs(prof) -> dict:
    """{host: ({program id: HloModule}, {program id: name})}, read once per profile."""
    def build():
        out = {}
        for host in prof.hosts:
            modules, names, _ = programs_of_space(prof.spaces[host])
            out[host] = (modules, names)
        return out
    return prof._results.cached("hlo_graph_programs", build)


def _candidates(prof, programs: dict, op: str, program) -> tuple[str, list]:
    """(op name, programs holding it); a kernel's name stands for the HLO op it ran for."""
    found = find_op(programs, op, program)
    if found:
        return op, found
    ops = kernel_ops(prof.events, prof.result("command_buffer_kernels"), prof.stat("hlo_op"),
                     op)
    hits = [(name, find_op(programs, name, program)) for name in ops]
    hits = [(name, c) for name, c in hits if c]
    spelled = [h for h in hits if h[0].replace(".", "_").replace("-", "_") == op]
    hits = spelled or hits  # XLA names a kernel after its op ("fusion.2" -> "fusion_2")
    if len(hits) > 1:
        raise ValueError(f"kernel {op!r} ran for several HLO ops: "
                         f"{', '.join(n for n, _ in hits)}; pass one of them")
    if not hits:
        where = "" if program is None else f" in program {program!r}"
        raise ValueError(f"no HLO op or GPU kernel named {op!r}{where} in this profile's "
                         "HLO protos")
    return hits[0]


def hlo_graph(prof, op: str, hops: int = 2, program=None) -> HloGraph:
    """The HLO graph around ``op`` (an HLO instruction name, or a GPU kernel's name): its
    computation's instructions within ``hops`` operand/user steps, fusions with their fused
    computations, times from ``prof.hlo_stats``.  ``program`` (an id, a module name or
    (host, id)) picks the program when several hold the name (a ValueError names them)."""
    if int(hops) < 0:
        raise ValueError(f"hops must be 0 or more, not {hops!r}")
    name, found = _candidates(prof, _programs(prof), str(op), program)
    if len(found) > 1:
        raise ValueError(f"HLO op {name!r} is in {len(found)} programs: "
                         f"{'; '.join(c.label() for c in found)}; pass program= (an id, a "
                         "module name or (host, id))")
    host, pid, module_name, module = found[0]
    nodes, edges = graph_frames(module, pid, name, int(hops), prof.hlo_stats)
    return HloGraph(nodes, edges, name, pid, module_name, host, int(hops))


def _heading(graph: HloGraphData) -> str:
    return (f"HLO graph around {graph.center} ({graph.hops} hops), program {graph.program_id} "
            f"({graph.module}), host {graph.host}")


def _statements(graph: HloGraphData) -> list[str]:
    nodes = graph.nodes
    top = nodes[nodes.parent == ""]
    timed = top.self_time_us.notna()
    n_timed = int(timed.sum())
    rows = "op has an HLO stats row, its" if n_timed == 1 else \
        "ops have HLO stats rows, their"
    return [f"{counted(len(top), 'op')} within {counted(graph.hops, 'hop')} of "
            f"{graph.center}, {counted(len(nodes) - len(top), 'fused instruction')} inside "
            f"{'their fusions' if len(top) != 1 else 'its fusion'}; {n_timed} {rows} self time "
            f"{top.self_time_us.sum():,.1f} us (summed over hosts and devices as HLO stats)."]


def _wire_frames(graph: HloGraphData) -> tuple[pd.DataFrame, pd.DataFrame]:
    nodes = graph.nodes.copy()
    nodes["occurrences"] = nodes.occurrences.astype(float)
    return nodes, graph.edges


class HloGraphView(View):
    """The HLO graph around an op (``prof.hlo_graph(op).show()``): boxes with the op's name,
    opcode and self time, coloured by self time, the centre op outlined, layered left to
    right along the data flow; a fusion's box expands to its fused computation on a click."""

    bundle = "hlograph"
    heading = traitlets.Unicode("").tag(sync=True)
    center = traitlets.Unicode("").tag(sync=True)
    statements = traitlets.List().tag(sync=True)
    nodes = TableTrait()
    edges = TableTrait()

    @classmethod
    def state(cls, graph) -> ViewState:
        nodes, edges = _wire_frames(graph)
        return ViewState({"heading": _heading(graph), "center": graph.center,
                          "statements": _statements(graph),
                          "nodes": TableData(nodes, "HLO graph nodes", "node"),
                          "edges": TableData(edges, "HLO graph edges", "source")})


def _json_value(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    return v.item() if hasattr(v, "item") else v


def graph_record(graph: HloGraphData) -> dict:
    """The graph as a JSON message: heading, center, statements, nodes and edges (records)."""
    nodes, edges = _wire_frames(graph)
    rec = [{k: _json_value(v) for k, v in row.items()} for row in nodes.to_dict("records")]
    return {"heading": _heading(graph), "center": graph.center,
            "statements": _statements(graph), "nodes": rec,
            "edges": [{k: _json_value(v) for k, v in r.items()}
                      for r in edges.to_dict("records")]}


def _target(prof, content: dict) -> tuple[str, object]:
    """(op, program) a request names: a trace event's (``event``: a row of ``prof.events``,
    inside a command buffer its own instruction, its ``program_id`` stat), else ``op`` and
    ``program`` (an id as text, else a module name, "" for any)."""
    event = content.get("event")
    if event is not None and str(event).isdigit():
        event = int(event)
        op = event_op(prof.result("command_buffer_kernels"), prof.stat("hlo_op"), event)
        if op is None:
            raise ValueError(f"event {event} ran for no HLO op")
        pid = prof.stat("program_id").get(event)
        return op, None if pid is None or pid != pid else int(pid)
    program = str(content.get("program") or "")
    return str(content.get("op")), int(program) if program.isdigit() else program or None


def graph_answer(prof, content: dict) -> tuple[dict, list]:
    """The answer to ``{"kind": "hlo_graph", "op", "program" (id as text), "event" (a trace
    event's id, instead of op and program), "hops", "id"}``: ``graph``
    (:func:`graph_record`) or ``error``."""
    base = {"kind": "hlo_graph", "id": content.get("id"), "op": content.get("op"),
            "program": content.get("program")}
    try:
        op, program = _target(prof, content)
        graph = hlo_graph(prof, op, int(content.get("hops", 2)), program)
    except (ValueError, KeyError, TypeError) as exc:
        return {**base, "error": str(exc)}, []
    return {**base, "op": op, "graph": graph_record(graph)}, []


class GraphRequests:
    """Answers a view's ``{"kind": "hlo_graph", ...}`` requests (:func:`graph_answer`); the
    view's other requests and trait changes go to its ``inner`` controller (None: none)."""

    def __init__(self, prof, inner=None):
        self.prof = prof
        self.inner = inner

    def on_change(self, name: str, value) -> dict:
        return self.inner.on_change(name, value) if self.inner is not None else {}

    def on_message(self, content: dict, buffers=None) -> tuple[dict, list]:
        content = content if isinstance(content, dict) else {}
        if content.get("kind") == "hlo_graph":
            return graph_answer(self.prof, content)
        if self.inner is None:
            return {"kind": content.get("kind"), "id": content.get("id"),
                    "error": f"unknown request {content.get('kind')!r}"}, []
        return self.inner.on_message(content, buffers)
