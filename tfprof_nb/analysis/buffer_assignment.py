"""One XLA program's memory from its buffer assignment, as XProf's memory viewer reads it.

An ``HloProto`` compiled by XLA carries a ``BufferAssignmentProto``: the logical buffers (one
per instruction output, with size and memory space "colour"), the buffer allocations they are
packed into (parameters, outputs, constants, thread-local and temporary allocations) and the
heap simulator's traces (ALLOC / FREE / SHARE_WITH events in the compiler's program order).
:func:`program_memory_of` follows XProf's rules (``hlo_proto_to_memory_visualization_utils``):

* the trace of a memory space is the one of its temporary allocation (found from the trace's
  first buffer), else the trace with the most events of buffers of that space;
* the heap is simulated with reference counts per canonical buffer (a SHARE_WITH reuses the
  canonical buffer's memory; memory is freed when the last sharer is freed, and a share after
  that brings it back);
* parameters, constants and outputs ("indefinite" allocations) live for the whole program: their
  sizes are added to every heap value and, in memory space 0, their largest buffer is listed
  among the buffers live at the peak;
* the peak is the first event where the heap is highest; the buffers live there are listed in
  program order (XProf collapses those under 16 KiB into one entry; here each has its row).

The simulation is vectorised: roots of the SHARE_WITH chains by pointer jumping, reference
counts as a grouped cumulative sum, the heap as a cumulative sum of the size changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .hlo_cost import shape_bytes
from .hlo_proto import HloModule
from .hlo_text import shape_text
from .xla_ops import source_of

__all__ = ["ALLOC", "BUFFER_COLUMNS", "FREE", "HEAP_COLUMNS", "SHARE_WITH", "ProgramMemory",
           "TraceError", "empty_program_memory", "memory_spaces", "no_assignment_reason",
           "program_memory_of"]

ALLOC, FREE, SHARE_WITH = 0, 1, 2
_EVENT_NAMES = np.array(["alloc", "free", "share_with"], dtype=object)
BUFFER_COLUMNS = ["logical_buffer_id", "hlo_op_name", "shape_index", "opcode", "framework_op",
                  "buffer_shape", "size_bytes", "unpadded_size_bytes", "padding_bytes",
                  "allocation_type", "allocation_index", "offset_bytes", "indefinite",
                  "alloc_position", "free_position", "source", "source_stack"]
HEAP_COLUMNS = ["position", "event", "hlo_op_name", "computation", "logical_buffer_id",
                "delta_bytes", "heap_bytes", "unpadded_heap_bytes"]


@dataclass
class ProgramMemory:
    """The memory of one XLA program in one memory space (``memory_space`` 0: device HBM).

    ``buffers``: the buffers live at the peak (BUFFER_COLUMNS), largest first; ``heap``: the
    heap after each heap-simulator event in program order (HEAP_COLUMNS), the program's
    parameters, constants and outputs included.  ``peak_position`` is the heap row of the peak
    (-1 without a heap simulator trace).  Sizes are bytes; ``reasons`` says what is missing.
    """

    program_id: int
    module: str
    memory_space: int = 0
    peak_heap_bytes: float = float("nan")
    peak_unpadded_heap_bytes: float = float("nan")
    peak_position: int = -1
    indefinite_bytes: float = float("nan")
    entry_parameters_bytes: float = float("nan")
    maybe_live_out_bytes: float = float("nan")
    non_reusable_bytes: float = float("nan")
    total_allocation_bytes: float = float("nan")
    buffers: pd.DataFrame = field(default_factory=lambda: _empty(BUFFER_COLUMNS))
    heap: pd.DataFrame = field(default_factory=lambda: _empty(HEAP_COLUMNS))
    reasons: list = field(default_factory=list)

    @property
    def name(self) -> str:
        """XProf's name of the program: ``module(program_id)``."""
        return f"{self.module}({self.program_id})"

    def __repr__(self) -> str:
        peak = "unknown" if np.isnan(self.peak_heap_bytes) else f"{self.peak_heap_bytes:,.0f} B"
        return (f"<ProgramMemory {self.name} memory_space={self.memory_space} peak={peak} "
                f"buffers_at_peak={len(self.buffers)} heap_events={len(self.heap)}>")


def _empty(columns) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def empty_program_memory(program_id: int, module: str, memory_space: int,
                         reason: str) -> ProgramMemory:
    """A result without data, saying why."""
    return ProgramMemory(int(program_id), module, int(memory_space), reasons=[reason])


def no_assignment_reason(program_id: int, module: str) -> str:
    """Why a program without a buffer assignment has no memory tables."""
    return (f"program {program_id} ({module}): its HLO proto has no buffer assignment (XLA "
            "wrote the module without it), so its memory is unknown")


# ---- tables of the proto ---------------------------------------------------------------------
def _allocations(ba) -> pd.DataFrame:
    """One row per buffer allocation: index, size, colour, flags, category, indefinite."""
    allocs = list(ba.buffer_allocations)
    frame = pd.DataFrame({
        "index": [a.index for a in allocs], "size": [a.size for a in allocs],
        "color": [a.color for a in allocs],
        "thread_local": [a.is_thread_local for a in allocs],
        "tuple": [a.is_tuple for a in allocs],
        "parameter": [a.is_entry_computation_parameter for a in allocs],
        "constant": [a.is_constant for a in allocs],
        "live_out": [a.maybe_live_out for a in allocs]},
        columns=["index", "size", "color", "thread_local", "tuple", "parameter", "constant",
                 "live_out"])
    frame = frame.astype({"index": np.int64, "size": np.int64, "color": np.int64,
                          **{c: bool for c in frame.columns[3:]}})
    frame["category"] = np.select(
        [frame.parameter, frame.live_out, frame.thread_local, frame.constant],
        ["Parameter", "Output", "Thread-local", "Constant"], "Temporary").astype(object)
    frame["indefinite"] = frame.parameter | frame.constant | frame.live_out
    return frame


def _logical_buffers(module: HloModule, ba) -> pd.DataFrame:
    """One row per assigned logical buffer whose instruction the module has, by id: its
    place in the assignment (``seq``), id, size, colour, allocation, offset, instruction id
    and shape index (a tuple)."""
    proto = {lb.id: lb for lb in ba.logical_buffers}
    rows = []
    for alloc in ba.buffer_allocations:
        for assigned in alloc.assigned:
            lb = proto.get(assigned.logical_buffer_id)
            if lb is None or lb.defined_at.instruction_id not in module.by_id:
                continue
            rows.append((lb.id, lb.size, lb.color, alloc.index, assigned.offset,
                         lb.defined_at.instruction_id, tuple(lb.defined_at.shape_index)))
    frame = pd.DataFrame(rows, columns=["id", "size", "color", "allocation", "offset",
                                        "instruction_id", "shape_index"])
    frame.insert(0, "seq", np.arange(len(frame)))
    frame = frame.drop_duplicates("id", keep="last").sort_values("id", kind="stable")
    return frame.astype({c: np.int64 for c in frame.columns[:-1]}).reset_index(drop=True)


def memory_spaces(ba) -> list[int]:
    """The memory spaces (colours) the buffer allocations use, 0 (HBM) always included."""
    return sorted({0} | {int(a.color) for a in ba.buffer_allocations})


# ---- shapes ----------------------------------------------------------------------------------
def _display_shape(shape, index: tuple):
    """The shape XProf shows for a buffer: the tuple element of the index's LAST entry (its
    historical rule), else the instruction's shape."""
    if index and index[-1] < len(shape.tuple_shapes):
        return shape.tuple_shapes[index[-1]]
    return shape


def _subshape(shape, index: tuple):
    """The shape at ``index`` (the whole path; the deepest reachable shape)."""
    for i in index:
        if i >= len(shape.tuple_shapes):
            break
        shape = shape.tuple_shapes[i]
    return shape


def _unpadded_bytes(module: HloModule, instruction_ids, indices) -> np.ndarray:
    """Bytes of each buffer's shape without layout padding (tuples: 8 bytes per element)."""
    cache: dict = {}
    out = np.zeros(len(instruction_ids), np.int64)
    for k, key in enumerate(zip(instruction_ids, indices)):
        if key not in cache:
            cache[key] = shape_bytes(_subshape(module.by_id[key[0]].shape, key[1]))
        out[k] = cache[key]
    return out


# ---- the heap simulator trace ----------------------------------------------------------------
def _trace_of(ba, allocs: pd.DataFrame, buffers: pd.DataFrame, color: int) -> int:
    """Index of the heap simulator trace of memory space ``color`` (-1: none).  A trace
    belongs to the allocation of its first event's buffer; the space's first temporary
    allocation with a trace wins, else the trace with the most events of that space."""
    alloc_of = dict(zip(buffers.id.tolist(), buffers.allocation.tolist()))
    color_of = dict(zip(buffers.id.tolist(), buffers.color.tolist()))
    trace_of_alloc: dict = {}
    traces = list(ba.heap_simulator_traces)
    for i, trace in enumerate(traces):
        if len(trace.events) and trace.events[0].buffer_id in alloc_of:
            trace_of_alloc[alloc_of[trace.events[0].buffer_id]] = i
    own = allocs[(allocs.color == color) & ~allocs.indefinite].sort_values("index")
    for index in own["index"].tolist():
        if index in trace_of_alloc:
            return trace_of_alloc[index]
    best, best_count = -1, 0
    for i, trace in enumerate(traces):
        count = sum(color_of.get(e.buffer_id) == color for e in trace.events)
        if count > best_count:
            best, best_count = i, count
    return best


def _events(trace) -> dict:
    """The trace's events as columns."""
    events = list(trace.events)
    return {"kind": np.fromiter((e.kind for e in events), np.int64, len(events)),
            "buffer": np.fromiter((e.buffer_id for e in events), np.int64, len(events)),
            "canonical": np.fromiter((e.share_with_canonical_id for e in events), np.int64,
                                     len(events)),
            "instruction": [e.instruction_name for e in events],
            "computation": [e.computation_name for e in events]}


class TraceError(ValueError):
    """A heap simulator trace XProf's rules cannot replay (the memory viewer fails on it)."""


def _roots(parent: np.ndarray) -> np.ndarray:
    """The root of every node of a forest given by ``parent`` (pointer jumping)."""
    root = parent.copy()
    for _ in range(64):
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root
        root = nxt
    raise TraceError("SHARE_WITH events form a cycle")


def _simulate(ev: dict, ids: np.ndarray, allocation: np.ndarray, size: np.ndarray,
              unpadded: np.ndarray) -> dict:
    """Replay the trace (buffers as positions in the sorted ``ids``): per event the change of
    the heap (bytes, unpadded bytes), whether it made its root live (``increase``) or freed it
    (``decrease``), its root, and the event's buffer position."""
    kind, n = ev["kind"], len(ev["kind"])
    if np.any((kind < ALLOC) | (kind > SHARE_WITH)):
        raise TraceError(f"unhandled event kind {int(kind[(kind < 0) | (kind > 2)][0])}")
    pos = np.minimum(np.searchsorted(ids, ev["buffer"]), max(len(ids) - 1, 0))
    known = (ids[pos] == ev["buffer"]) if len(ids) else np.zeros(n, bool)
    cpos = np.minimum(np.searchsorted(ids, ev["canonical"]), max(len(ids) - 1, 0))
    share = kind == SHARE_WITH
    valid = known & ~(share & ~((ids[cpos] == ev["canonical"]) if len(ids) else False))
    seen = np.unique(allocation[pos[known]])
    if len(seen) != 1:
        raise TraceError("all heap simulation should work out of a single buffer allocation, "
                         f"this trace uses {len(seen)}")
    parent = np.arange(len(ids))
    linked = valid & share
    parent[pos[linked]] = cpos[linked]
    root = np.where(valid, _roots(parent)[pos], -1)
    step = np.where(kind == FREE, -1, 1) * valid
    count = pd.Series(step).groupby(root).cumsum().to_numpy()
    if np.any(valid & (count < 0)):
        bad = int(ev["buffer"][np.flatnonzero(valid & (count < 0))[0]])
        raise TraceError(f"buffer {bad} is freed more times than it is allocated")
    increase = valid & ((kind == ALLOC) | (share & (count == 1)))
    decrease = valid & (kind == FREE) & (count == 0)
    changed = np.where(kind == ALLOC, pos, np.maximum(root, 0))
    sign = increase.astype(np.int64) - decrease.astype(np.int64)
    delta = sign * size[changed]
    heap = np.cumsum(delta)
    if np.any(heap < 0):
        raise TraceError("the heap size becomes negative")
    return {"delta": delta, "heap": heap, "unpadded": np.cumsum(sign * unpadded[changed]),
            "increase": increase, "decrease": decrease, "root": root, "pos": pos,
            "valid": valid}


def _live_at(sim: dict, kind: np.ndarray, peak: int) -> pd.DataFrame:
    """The heap buffers live after event ``peak``, in program order: the event that made each
    live (``at``), the buffer shown (``pos``: the sharer when a share brought the memory
    back) and, as XProf draws its lifetime, the event that ends it (``end``: a sharer's own
    FREE, an allocated buffer's first release; the last event if none)."""
    n = len(kind)
    change = np.flatnonzero(sim["increase"] | sim["decrease"])
    before = change[change <= peak]
    frame = pd.DataFrame({"at": before, "root": sim["root"][before],
                          "live": sim["increase"][before]})
    last = frame.drop_duplicates("root", keep="last")
    last = last[last.live].sort_values("at")
    released = change[sim["decrease"][change]]
    first_release = pd.Series(released, index=sim["root"][released]).groupby(level=0).first()
    frees = np.flatnonzero(sim["valid"] & (kind == FREE))
    own_free = pd.Series(frees, index=sim["pos"][frees]).groupby(level=0).last()
    out = last.reset_index(drop=True)
    out["pos"] = sim["pos"][out["at"].to_numpy()]
    allocated = kind[out["at"].to_numpy()] == ALLOC
    end = np.where(allocated, first_release.reindex(out.root.to_numpy()).to_numpy(),
                   own_free.reindex(out.pos.to_numpy()).to_numpy())
    out["end"] = np.where(np.isnan(end), n - 1, end).astype(np.int64)
    return out


def _indefinite_rows(allocs: pd.DataFrame, buffers: pd.DataFrame, color: int):
    """(bytes, rows): the indefinite allocations of ``color`` that hold a buffer, their total
    size, and for each its largest buffer (the first of equal ones)."""
    ind = allocs[(allocs.color == color) & allocs.indefinite]
    held = buffers[buffers.allocation.isin(ind["index"]) & (buffers["size"] > 0)]
    held = held.sort_values("seq", kind="stable")
    best = held.loc[held.groupby("allocation", sort=True)["size"].idxmax()] \
        if len(held) else held
    total = int(ind.set_index("index").loc[best.allocation.to_numpy(), "size"].sum())
    return total, best


def _buffer_rows(module: HloModule, rows: pd.DataFrame, allocs: pd.DataFrame) -> pd.DataFrame:
    """BUFFER_COLUMNS for logical buffer ``rows`` (columns of :func:`_logical_buffers` plus
    ``indefinite``, ``alloc_position``, ``free_position``)."""
    names, opcodes, ops, shapes, sources, stacks = [], [], [], [], [], []
    for iid, index in zip(rows.instruction_id.tolist(), rows.shape_index.tolist()):
        instr = module.by_id[iid]
        names.append(instr.name)
        opcodes.append(instr.opcode)
        ops.append(instr.metadata.op_name)
        shapes.append(shape_text(_display_shape(instr.shape, index)))
        file, line, stack = source_of(module, instr)
        sources.append(f"{file}:{line}" if file else "")
        stacks.append(stack)
    unpadded = _unpadded_bytes(module, rows.instruction_id.tolist(), rows.shape_index.tolist())
    category = allocs.set_index("index")["category"]
    return pd.DataFrame({
        "logical_buffer_id": rows["id"].to_numpy(np.int64), "hlo_op_name": names,
        "shape_index": ["{" + ",".join(map(str, i)) + "}" if i else ""
                        for i in rows.shape_index],
        "opcode": opcodes, "framework_op": ops, "buffer_shape": shapes,
        "size_bytes": rows["size"].to_numpy(np.int64), "unpadded_size_bytes": unpadded,
        "padding_bytes": rows["size"].to_numpy(np.int64) - unpadded,
        "allocation_type": category.reindex(rows.allocation.to_numpy()).to_numpy(object),
        "allocation_index": rows.allocation.to_numpy(np.int64),
        "offset_bytes": rows.offset.to_numpy(np.int64),
        "indefinite": rows.indefinite.to_numpy(bool),
        "alloc_position": rows.alloc_position.to_numpy(np.int64),
        "free_position": rows.free_position.to_numpy(np.int64),
        "source": sources, "source_stack": stacks}, columns=BUFFER_COLUMNS)


def _sizes(module: HloModule, buffers: pd.DataFrame, ev: dict) -> tuple:
    """(ids, allocation, size, unpadded) arrays by buffer id; unpadded sizes only for the
    buffers the trace names."""
    ids = buffers["id"].to_numpy(np.int64)
    unpadded = np.zeros(len(ids), np.int64)
    named = np.isin(ids, np.concatenate([ev["buffer"], ev["canonical"]]))
    unpadded[named] = _unpadded_bytes(module, buffers.instruction_id[named].tolist(),
                                      buffers.shape_index[named].tolist())
    return ids, buffers.allocation.to_numpy(np.int64), buffers["size"].to_numpy(np.int64), \
        unpadded


def _heap_table(ev: dict, sim: dict, base: int) -> pd.DataFrame:
    n = len(ev["kind"])
    return pd.DataFrame({
        "position": np.arange(n, dtype=np.int64), "event": _EVENT_NAMES[ev["kind"]],
        "hlo_op_name": pd.Categorical(ev["instruction"]),
        "computation": pd.Categorical(ev["computation"]),
        "logical_buffer_id": ev["buffer"], "delta_bytes": sim["delta"],
        "heap_bytes": sim["heap"] + base, "unpadded_heap_bytes": sim["unpadded"] + base},
        columns=HEAP_COLUMNS)


def _summary(allocs: pd.DataFrame, color: int) -> dict:
    """XProf's totals of a memory space (thread-local allocations are not counted in the
    total and indefinite bytes, as XLA counts them)."""
    a = allocs[allocs.color == color]
    return {"entry_parameters_bytes": float(a["size"][a.parameter].sum()),
            "maybe_live_out_bytes": float(a["size"][a.live_out].sum()),
            "non_reusable_bytes": float(a["size"][a.thread_local | a["tuple"]].sum()),
            "total_allocation_bytes": float(a["size"][~a.thread_local].sum()),
            "indefinite_bytes": float(a["size"][a.indefinite & ~a.thread_local].sum())}


def program_memory_of(module: HloModule, program_id: int, memory_space: int = 0,
                      ba=None) -> ProgramMemory:
    """The memory of ``module`` (parsed with its buffer assignment) in ``memory_space``:
    peak heap, buffers live at the peak, heap over the program order (see the module doc)."""
    ba = module.buffer_assignment if ba is None else ba
    if ba is None:
        return empty_program_memory(program_id, module.name, memory_space,
                                    no_assignment_reason(program_id, module.name))
    allocs, buffers = _allocations(ba), _logical_buffers(module, ba)
    out = ProgramMemory(int(program_id), module.name, int(memory_space),
                        **_summary(allocs, memory_space))
    base, held = _indefinite_rows(allocs, buffers, memory_space)
    held = held.assign(indefinite=True, alloc_position=-1, free_position=-1)
    trace = _trace_of(ba, allocs, buffers, memory_space)
    heap_rows = buffers.iloc[:0].assign(indefinite=False, alloc_position=0, free_position=0)
    peak = peak_unpadded = 0
    if trace >= 0:
        ev = _events(ba.heap_simulator_traces[trace])
        ids, allocation, size, unpadded = _sizes(module, buffers, ev)
        try:
            sim = _simulate(ev, ids, allocation, size, unpadded)
        except TraceError as exc:
            out.reasons.append(f"program {program_id} ({module.name}): heap simulator trace "
                               f"{trace} cannot be replayed ({exc}); XProf's memory viewer "
                               "fails on it too")
            return out
        out.heap = _heap_table(ev, sim, base)
        if len(sim["heap"]) and sim["heap"].max() > 0:
            out.peak_position = int(np.argmax(sim["heap"]))
            peak = int(sim["heap"][out.peak_position])
            peak_unpadded = int(sim["unpadded"][out.peak_position])
            live = _live_at(sim, ev["kind"], out.peak_position)
            heap_rows = buffers.iloc[live.pos.to_numpy()].assign(
                indefinite=False, alloc_position=live["at"].to_numpy(),
                free_position=live.end.to_numpy())
    else:
        out.reasons.append(f"program {program_id} ({module.name}): no heap simulator trace "
                           f"for memory space {memory_space}; only the buffers that live for "
                           "the whole program are counted")
    rows = pd.concat([held if memory_space == 0 else held.iloc[:0], heap_rows],
                     ignore_index=True)
    table = _buffer_rows(module, rows, allocs)
    out.buffers = table.sort_values("size_bytes", ascending=False, kind="stable") \
        .reset_index(drop=True)
    out.peak_heap_bytes = float(peak + base)
    out.peak_unpadded_heap_bytes = float(peak_unpadded + base)
    return out
