"""Per-op time inside XLA command buffers (CUDA graphs, HIP graphs).

With command buffers on (XLA's default on NVIDIA GPUs), XLA records a sequence of kernels as
one graph and launches it as one; the profiler's ``hlo_op`` stat of every kernel in it names
the buffer (``command_buffer_1``: a thunk, no HLO instruction), not the op that launched the
kernel.  The kernels keep their own names, though, and the program's HLO proto holds the
instructions the buffer runs, in the module's schedule.  This module attributes each such
kernel to its HLO instruction, per execution of the buffer (the kernels sharing one
``correlation_id``, the graph launch, in start order; one line's run of the buffer's kernels
where the launch has no id):

* ``name``: XLA names a fusion's kernel after the instruction, its characters outside
  ``[A-Za-z0-9_]`` written ``_`` (``loop_add_fusion.3`` -> ``loop_add_fusion_3``; a trailing
  ``.kd`` on AMD).  Identical fusions share one kernel, named after one of them; where their
  ``deduplicated_name`` metadata makes them one class, the kernel goes to the class's first
  member at or after the previous match that has not run yet in this execution (the
  schedule's order), so each layer's copy gets its own run.
* ``position``: the kernels left over, per run between two matched neighbours, go to the
  instructions scheduled between those neighbours that have not run: kernels named after an
  instruction whose class ran already (a fusion sharing another's kernel without metadata
  saying so) to the fusions there, library kernels (cuBLAS/cuBLASLt ``nvjet_*``, cutlass,
  cuDNN: no instruction name) to the instructions that can run library code (custom-calls,
  custom fusions, every non-fusion op that launches work), all to the one such instruction or
  one each when the counts agree.  A memset goes with the library call it precedes in its
  run, else to the one instruction not run between its neighbours, else to the op that
  follows (XLA initialises a reduction's or a scatter's output with one).  A named kernel
  still without a place (a loop in the buffer running its body again) goes to its class's
  next member (``name``).
* ``unresolved``: kernels with no place (no candidate, or counts that do not agree) stay in
  the buffer's own row; the reasons say how much time that is.

Kernels outside command buffers keep the op their ``hlo_op`` stat names (``stat``).
The kernels attributed here are listed by the ``command_buffer_kernels`` unit
(:mod:`.command_buffer_kernels`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..runtime.hostdata.host import HostData

__all__ = ["ATTRIBUTION", "STAT", "NAME", "POSITION", "UNRESOLVED", "Attribution",
           "attribute_kernels", "kernel_plan", "align", "kernel_key", "is_buffer_op",
           "buffer_reasons"]

ATTRIBUTION = ("stat", "name", "position", "unresolved")  # (weakest last)
STAT, NAME, POSITION, UNRESOLVED = range(4)

# opcodes that run no kernel of their own; control flow is walked into instead
_NO_WORK = frozenset({
    "parameter", "constant", "get-tuple-element", "tuple", "bitcast", "after-all",
    "add-dependency", "opt-barrier", "domain", "partition-id", "replica-id", "iota-start"})
_WALK_INTO = frozenset({"call", "while", "conditional", "async-start"})
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
_UNIQUIFIED = re.compile(r"\A(.+)_\d+\Z")
_MEMSET = re.compile(r"\A(?:Memset|memset|__amd_rocclr_fillBuffer)")


def kernel_key(name: str) -> str:
    """The instruction name a kernel name would spell: AMD's ``.kd`` suffix dropped."""
    return name[:-3] if name.endswith(".kd") else name


def _sanitized(name: str) -> str:
    """An instruction name as XLA spells its kernel (``.`` and ``-`` written ``_``)."""
    return _UNSAFE.sub("_", name)


def is_buffer_op(module, op: str) -> bool:
    """Whether kernels whose ``hlo_op`` is ``op`` ran inside a command buffer of ``module``:
    ``op`` names no instruction (a command-buffer thunk), or a ``call`` (a command-buffer
    computation outlined in the HLO, as older XLA versions do)."""
    instr = module.instructions.get(op)
    return instr is None or instr.opcode == "call"


@dataclass
class KernelPlan:
    """The instructions a command buffer runs, in execution order: ``names``, whether each
    may run a kernel (``works``) or library code (``library``), and the positions of each
    kernel name's class (``classes``; by sanitized instruction name)."""

    names: list
    works: np.ndarray
    library: np.ndarray
    classes: dict = field(default_factory=dict)

    def positions(self, kernel: str) -> list:
        """The positions a kernel named ``kernel`` may have run at (empty: a library
        kernel).  A name not found may be one fusion's second kernel (``name_1``)."""
        key = kernel_key(kernel)
        found = self.classes.get(key)
        if found is None:
            match = _UNIQUIFIED.match(key)
            found = self.classes.get(match.group(1)) if match else None
        return found or []


def _walk(module, comp, out: list, seen: set, depth: int = 0) -> None:
    """``out`` += the instructions of ``comp`` in schedule order, control flow walked into
    (each computation once)."""
    if comp.id in seen or depth > 32:
        return
    seen.add(comp.id)
    for instr in module.schedule(comp):
        called = [c for c in module.called(instr) if not c.is_fusion_computation]
        if instr.opcode in _WALK_INTO and called:
            for c in called:
                _walk(module, c, out, seen, depth + 1)
        else:
            out.append(instr)


def _is_library(instr) -> bool:
    """May ``instr`` run a kernel not named after it (a custom-call, a custom fusion such as
    cuDNN's or cuBLAS's, a copy, a sort, a collective ...)."""
    return instr.opcode != "fusion" or instr.fusion_kind in ("kCustom", "custom")


def kernel_plan(module, op: str) -> KernelPlan:
    """The plan of the command buffer ``op`` of ``module``: the computation an outlined
    ``call`` calls, else the entry computation (XLA converts the entry's thunk sequence)."""
    instr = module.instructions.get(op)
    comps = module.called(instr) if instr is not None and instr.opcode == "call" else []
    if not comps and module.entry_id in module.computations:
        comps = [module.computations[module.entry_id]]
    order: list = []
    seen: set = set()
    for comp in comps:
        _walk(module, comp, order, seen)
    classes: dict = {}
    cls_of = {}
    for pos, ins in enumerate(order):
        cls = ins.metadata.deduplicated_name or ins.name
        classes.setdefault(cls, []).append(pos)
        cls_of[_sanitized(ins.name)] = cls
        cls_of.setdefault(_sanitized(cls), cls)
    return KernelPlan(names=[i.name for i in order],
                      works=np.array([i.opcode not in _NO_WORK for i in order], dtype=bool),
                      library=np.array([_is_library(i) and i.opcode not in _NO_WORK
                                        for i in order], dtype=bool),
                      classes={k: classes[c] for k, c in cls_of.items()})


def _match_names(kernels: list, plan: KernelPlan) -> tuple[np.ndarray, set]:
    """(position per kernel, -1 where not matched; the positions matched): each named kernel
    to the first member of its class after the previous match (the matches only move forward,
    so no member there has run yet)."""
    pos = np.full(len(kernels), -1, dtype=np.int64)
    ptr = 0
    for i, k in enumerate(kernels):
        cands = plan.positions(k)
        at = bisect_left(cands, ptr) if cands else 0
        if at < len(cands):
            pos[i] = ptr = cands[at]
            ptr += 1
    return pos, set(pos[pos >= 0].tolist())


def _spread(items: list, targets: list) -> dict:
    """{item: target}: all to the one target, or one each in order when the counts agree;
    empty otherwise."""
    if len(targets) == 1:
        return {i: targets[0] for i in items}
    if items and len(items) == len(targets):
        return dict(zip(items, targets))
    return {}


def _place_run(kernels: list, run: list, span: tuple, plan: KernelPlan, used: set) -> dict:
    """{kernel index: position} for a run of unmatched kernels between matched neighbours at
    positions ``span`` (-1 / len(plan.names) at the ends): kernels named after an instruction
    whose class ran already (a fusion sharing another's kernel without saying so) to the
    fusions not run yet, library kernels to the library calls, memsets as the module says."""
    before, after = span
    if after <= before:
        return {}
    free = [q for q in range(before + 1, after) if plan.works[q] and q not in used]
    library = [q for q in free if plan.library[q]]
    named = [i for i in run if plan.positions(kernels[i])]
    unnamed = [i for i in run if not plan.positions(kernels[i])]
    fills = [i for i in unnamed if _MEMSET.match(kernels[i])]
    compute = [i for i in unnamed if not _MEMSET.match(kernels[i])]
    placed = _spread(named, [q for q in free if not plan.library[q]])
    placed.update(_spread(compute, library))
    for i in fills:
        at = bisect_left(compute, i)
        if at < len(compute) and compute[at] in placed:
            placed[i] = placed[compute[at]]
        elif len(free) == 1:
            placed[i] = free[0]
        elif not compute and after < len(plan.names):
            placed[i] = after
    used.update(placed.values())
    return placed


def _repeats(kernels: list, pos: np.ndarray, how: np.ndarray, plan: KernelPlan) -> None:
    """Named kernels still unplaced (their class ran already: a loop inside the buffer runs
    its body again): to the first member of the class after the previous kernel's position,
    else the first (in place)."""
    for i in np.flatnonzero(pos < 0).tolist():
        cands = plan.positions(kernels[i])
        if cands:
            prev = int(pos[i - 1]) if i > 0 else -1
            at = bisect_left(cands, prev + 1)
            pos[i], how[i] = cands[at] if at < len(cands) else cands[0], NAME


def _narrowed(span: tuple, n: int, plan: KernelPlan) -> tuple:
    """``span`` of a run of ``n`` unmatched kernels, its open end (a run before the first
    match or after the last) moved to the ``n`` working instructions next to the matched
    neighbour: a command buffer runs a contiguous stretch of the schedule, so the kernels
    before its first match are the instructions just before it, never some op of another
    buffer or outside every buffer earlier in the program."""
    before, after = span
    works = np.flatnonzero(plan.works).tolist()
    if before < 0 <= after < len(plan.names):
        inner = [q for q in works if q < after][-n:]
        return (inner[0] - 1 if inner else after - 1, after)
    if before >= 0 and after >= len(plan.names):
        inner = [q for q in works if q > before][:n]
        return (before, inner[-1] + 1 if inner else before + 1)
    if before < 0 and after >= len(plan.names):
        return (0, 0)  # no kernel of this execution matched by name: nothing to place by
    return span


def align(kernels: list, plan: KernelPlan) -> tuple[np.ndarray, np.ndarray]:
    """(position in ``plan.names`` per kernel, -1 where unplaced; attribution code per kernel)
    for one execution of a command buffer (``kernels``: kernel names in start order)."""
    pos, used = _match_names(kernels, plan)
    how = np.where(pos >= 0, NAME, UNRESOLVED).astype(np.int8)
    lone = np.flatnonzero(pos < 0)
    if len(lone):
        # runs of consecutive unmatched kernels, each between its matched neighbours
        for run in np.split(lone, np.flatnonzero(np.diff(lone) > 1) + 1):
            first, last = int(run[0]), int(run[-1])
            span = _narrowed((int(pos[first - 1]) if first > 0 else -1,
                              int(pos[last + 1]) if last + 1 < len(kernels) else len(plan.names)),
                             len(run), plan)
            for i, p in _place_run(kernels, run.tolist(), span, plan, used).items():
                pos[i], how[i] = p, POSITION
        _repeats(kernels, pos, how, plan)
    return pos, how


@dataclass
class Attribution:
    """Per kernel row: the op it is attributed to (``op``) and how (``how``, codes into
    :data:`ATTRIBUTION`); ``buffers``: one dict per command buffer (program, op, kernels and
    time per attribution) for the reasons; ``rows``: the kernels' rows; ``inside``: the
    indices of those that ran inside command buffers."""

    op: np.ndarray
    how: np.ndarray
    rows: np.ndarray
    buffers: list = field(default_factory=list)
    inside: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))


def _executions(hd: HostData, rows: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, list]:
    """(order of ``rows`` by buffer, launch and start; the [start, end) of each execution):
    a launch is the kernels' ``correlation_id``, else their line."""
    corr, has = hd.int_stat("correlation_id").lookup(rows)
    line = hd.space.events.line[rows].astype(np.int64)
    launch = np.where(has, corr.astype(np.int64), -1 - line)
    order = np.lexsort((hd.begin[rows], launch, keys))
    k, lch = keys[order], launch[order]
    cut = np.flatnonzero((k[1:] != k[:-1]) | (lch[1:] != lch[:-1])) + 1
    bounds = np.concatenate([[0], cut, [len(rows)]])
    return order, list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def _pairs(pids: np.ndarray, ops: np.ndarray) -> tuple[np.ndarray, list]:
    """(code per row, the distinct (program, op) pairs)."""
    codes, uniq = pd.factorize(pd.MultiIndex.from_arrays([np.asarray(pids, np.int64), ops]))
    return codes, list(uniq)


def _buffer_pairs(ops: np.ndarray, pids: np.ndarray, modules: dict) -> np.ndarray:
    """bool per row: its (program, op) is a command buffer of a program with an HLO proto."""
    codes, pairs = _pairs(pids, ops)
    flags = np.array([p in modules and is_buffer_op(modules[p], o) for p, o in pairs], bool)
    return flags[codes]


def attribute_kernels(hd: HostData, rows: np.ndarray, ops: np.ndarray, pids: np.ndarray,
                      modules: dict) -> Attribution:
    """The op and attribution of each kernel ``rows`` (GPU events with an ``hlo_op``: its
    instruction name ``ops``, program ``pids``), given the programs' HLO ``modules``."""
    ops = np.asarray(ops, dtype=object)
    out_op, how = ops.copy(), np.full(len(rows), STAT, dtype=np.int8)
    inside = _buffer_pairs(ops, np.asarray(pids), modules) if len(rows) else \
        np.zeros(0, dtype=bool)
    sel = np.flatnonzero(inside)
    if not len(sel):
        return Attribution(out_op, how, rows)
    keys = _pairs(pids[sel], ops[sel])[0]
    order, spans = _executions(hd, rows[sel], keys.astype(np.int64))
    sel = sel[order]
    codes = hd.name_code[rows[sel]]
    plans: dict = {}
    cache: dict = {}
    for start, end in spans:
        i0 = sel[start]
        pair = (int(pids[i0]), ops[i0])
        seq = codes[start:end]
        key = (pair, seq.tobytes())
        if key not in cache:
            if pair not in plans:
                plans[pair] = kernel_plan(modules[pair[0]], pair[1])
            plan = plans[pair]
            pos, h = align([str(n) for n in hd.names[seq]], plan)
            names = np.array([plan.names[p] if p >= 0 else pair[1] for p in pos.tolist()],
                             dtype=object)
            cache[key] = (names, h)
        names, h = cache[key]
        out_op[sel[start:end]], how[sel[start:end]] = names, h
    att = Attribution(out_op, how, rows, inside=np.sort(sel))
    att.buffers = _summaries(hd, rows, sel, pids, ops, how)
    return att


def _summaries(hd: HostData, rows, sel, pids, ops, how) -> list:
    """One dict per command buffer: program, op, kernels and time (ps) per attribution."""
    frame = pd.DataFrame({"p": pids[sel], "o": ops[sel], "h": how[sel],
                          "t": hd.duration[rows[sel]]})
    out = []
    for (p, o), g in frame.groupby(["p", "o"], sort=True):
        by = g.groupby("h").t.agg(["size", "sum"])
        out.append({"program_id": int(p), "op": o,
                    **{f"{ATTRIBUTION[c]}_kernels": int(by["size"].get(c, 0))
                       for c in (NAME, POSITION, UNRESOLVED)},
                    **{f"{ATTRIBUTION[c]}_ps": int(by["sum"].get(c, 0))
                       for c in (NAME, POSITION, UNRESOLVED)}})
    return out


def buffer_reasons(buffers: list, program_names: dict) -> list[str]:
    """Sentences on the kernels run inside command buffers: how they were attributed and how
    much time stayed unresolved."""
    out = []
    for b in buffers:
        total = b["name_ps"] + b["position_ps"] + b["unresolved_ps"]
        if not total:
            continue
        kernels = b["name_kernels"] + b["position_kernels"] + b["unresolved_kernels"]
        pct = {k: 100.0 * b[f"{k}_ps"] / total for k in ("name", "position", "unresolved")}
        name = program_names.get(b["program_id"], "?")
        # (what a buffer runs is kernels and memsets alike: the device ops on its stream)
        text = (f"program {b['program_id']} ({name}) ran {kernels:,} device ops (kernels, "
                f"memsets) inside the XLA "
                f"command buffer {b['op']} (CUDA or HIP graphs: their hlo_op names the buffer): "
                f"attributed to HLO ops by kernel name ({pct['name']:.1f}% of its "
                f"{total / 1e6:,.1f} us) and by position between matched neighbours in the "
                f"schedule ({pct['position']:.1f}%); ")
        if b["unresolved_kernels"]:
            text += (f"{b['unresolved_kernels']:,} of them ({b['unresolved_ps'] / 1e6:,.1f} us, "
                     f"{pct['unresolved']:.1f}%) could not be placed and stay in the "
                     f"unresolved row {b['op']}")
        else:
            text += "every one was placed (0% unresolved)"
        out.append(text)
    return out
