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

The trace is replayed by :mod:`.heap_simulator` (vectorised).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ....xspace.hlo_proto import HloModule
from ..hlo_cost import shape_bytes
from ..hlo_text import shape_text
from ..ops import source_of
from .heap_simulator import TraceError, events_of, live_at, simulate, trace_of

__all__ = ["BUFFER_COLUMNS", "HEAP_COLUMNS", "ProgramMemory", "empty_program_memory",
           "memory_spaces", "no_assignment_reason", "program_memories", "program_memory_of"]

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


_TEMPLATES: dict = {}


def _empty(columns) -> pd.DataFrame:
    """An empty table of ``columns`` (a copy of one made once)."""
    key = tuple(columns)
    if key not in _TEMPLATES:
        _TEMPLATES[key] = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return _TEMPLATES[key].copy()


def empty_program_memory(program_id: int, module: str, memory_space: int,
                         reason: str) -> ProgramMemory:
    """A result without data, saying why."""
    return ProgramMemory(int(program_id), module, int(memory_space), reasons=[reason])


def no_assignment_reason(program_id: int, module: str) -> str:
    """Why a program without a buffer assignment has no memory tables."""
    return (f"program {program_id} ({module}): its HLO proto has no buffer assignment (XLA "
            "wrote the module without it), so its memory is unknown")


# ---- tables of the proto ---------------------------------------------------------------------
def _ints(items, field: str) -> np.ndarray:
    return np.fromiter((getattr(x, field) for x in items), np.int64, len(items))


def _flags(items, field: str) -> np.ndarray:
    return np.fromiter((getattr(x, field) for x in items), bool, len(items))


def _allocations(ba) -> pd.DataFrame:
    """One row per buffer allocation: index, size, colour, flags, category, indefinite."""
    allocs = list(ba.buffer_allocations)
    cols = {"index": _ints(allocs, "index"), "size": _ints(allocs, "size"),
            "color": _ints(allocs, "color"), "thread_local": _flags(allocs, "is_thread_local"),
            "tuple": _flags(allocs, "is_tuple"),
            "parameter": _flags(allocs, "is_entry_computation_parameter"),
            "constant": _flags(allocs, "is_constant"), "live_out": _flags(allocs, "maybe_live_out")}
    cols["category"] = np.select(
        [cols["parameter"], cols["live_out"], cols["thread_local"], cols["constant"]],
        ["Parameter", "Output", "Thread-local", "Constant"], "Temporary").astype(object)
    cols["indefinite"] = cols["parameter"] | cols["constant"] | cols["live_out"]
    return pd.DataFrame(cols)


def _logical_buffers(module: HloModule, ba) -> pd.DataFrame:
    """One row per assigned logical buffer whose instruction the module has, by id: its
    place in the assignment (``seq``), id, allocation, offset, size, colour, instruction id,
    unpadded size and shape index (a tuple)."""
    lbs = ba.logical_buffers
    where = [b.defined_at for b in lbs]
    lb_id = _ints(lbs, "id")
    pairs = [(x, a.index) for a in ba.buffer_allocations for x in a.assigned]
    assigned = [x for x, _ in pairs]
    frame = pd.DataFrame({"seq": np.arange(len(pairs), dtype=np.int64),
                          "id": _ints(assigned, "logical_buffer_id"),
                          "allocation": np.fromiter((i for _, i in pairs), np.int64, len(pairs)),
                          "offset": _ints(assigned, "offset")})
    frame = frame.drop_duplicates("id", keep="last").sort_values("id", kind="stable")
    first = pd.Series(np.arange(len(lb_id)))[~pd.Series(lb_id).duplicated()]
    row_of = pd.Series(first.to_numpy(), index=lb_id[first.to_numpy()])
    rows = row_of.reindex(frame["id"].to_numpy()).to_numpy()
    frame = frame[~np.isnan(rows)]
    rows = rows[~np.isnan(rows)].astype(np.int64)
    frame = frame.assign(size=_ints(lbs, "size")[rows], color=_ints(lbs, "color")[rows],
                         instruction_id=_ints(where, "instruction_id")[rows],
                         shape_index=[tuple(i) if i else () for i in
                                      (where[r].shape_index for r in rows)])
    frame = frame[frame.instruction_id.isin(np.fromiter(module.by_id, np.int64,
                                                        len(module.by_id)))]
    frame = frame.reset_index(drop=True)
    frame["unpadded"] = _unpadded_bytes(module, frame.instruction_id.tolist(),
                                        frame.shape_index.tolist())
    return frame


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


def _indefinite_rows(allocs: pd.DataFrame, buffers: pd.DataFrame, color: int):
    """(bytes, rows): the indefinite allocations of ``color`` that hold a buffer, their total
    size, and for each its largest buffer (the first in assignment order of equal ones)."""
    mine = (allocs.color.to_numpy() == color) & allocs.indefinite.to_numpy()
    alloc = buffers.allocation.to_numpy()
    size = buffers["size"].to_numpy()
    cand = np.flatnonzero(np.isin(alloc, allocs["index"].to_numpy()[mine]) & (size > 0))
    cand = cand[np.lexsort((buffers.seq.to_numpy()[cand], -size[cand], alloc[cand]))]
    best = cand[np.unique(alloc[cand], return_index=True)[1]]
    held = np.isin(allocs["index"].to_numpy(), alloc[best])
    return int(allocs["size"].to_numpy()[held].sum()), buffers.iloc[best]


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
    unpadded = rows.unpadded.to_numpy(np.int64)
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


def _heap_table(ev: dict, sim: dict, base: int) -> pd.DataFrame:
    n = len(ev["kind"])
    return pd.DataFrame({
        "position": np.arange(n, dtype=np.int64), "event": _EVENT_NAMES[ev["kind"]],
        "hlo_op_name": pd.Categorical(ev["instruction"]),
        "computation": pd.Categorical(ev["computation"]),
        "logical_buffer_id": ev["buffer"], "delta_bytes": sim["delta"],
        "heap_bytes": sim["heap"] + base, "unpadded_heap_bytes": sim["unpadded"] + base},
        columns=HEAP_COLUMNS)


def _no_trace_reason(program_id: int, name: str, allocs: pd.DataFrame, color: int) -> str:
    """Why a memory space's heap is only its whole-program buffers."""
    a = allocs[allocs.color == color]
    temp = int(a["size"][~a.indefinite & ~a.thread_local].sum())
    why = (f"program {program_id} ({name}): no heap simulator trace for memory space {color}; "
           "only the buffers that live for the whole program are counted")
    if temp:
        why += f" (its temporary allocations, {temp:,} bytes, are not)"
    return why


def _summary(allocs: pd.DataFrame, color: int) -> dict:
    """XProf's totals of a memory space (thread-local allocations are not counted in the
    total and indefinite bytes, as XLA counts them)."""
    a = {c: allocs[c].to_numpy() for c in ("size", "parameter", "live_out", "thread_local",
                                           "tuple", "indefinite")}
    mine = allocs.color.to_numpy() == color

    def total(mask) -> float:
        return float(a["size"][mine & mask].sum())

    return {"entry_parameters_bytes": total(a["parameter"]),
            "maybe_live_out_bytes": total(a["live_out"]),
            "non_reusable_bytes": total(a["thread_local"] | a["tuple"]),
            "total_allocation_bytes": total(~a["thread_local"]),
            "indefinite_bytes": total(a["indefinite"] & ~a["thread_local"])}


def program_memories(module: HloModule, program_id: int) -> dict:
    """{memory space: ProgramMemory} for every memory space ``module``'s buffer assignment
    uses (the proto's tables are read once); {} without a buffer assignment."""
    ba = module.buffer_assignment
    if ba is None:
        return {}
    tables = (_allocations(ba), _logical_buffers(module, ba))
    return {c: program_memory_of(module, program_id, c, tables) for c in memory_spaces(ba)}


def program_memory_of(module: HloModule, program_id: int, memory_space: int = 0,
                      tables: tuple | None = None) -> ProgramMemory:
    """The memory of ``module`` (parsed with its buffer assignment) in ``memory_space``:
    peak heap, buffers live at the peak, heap over the program order (see the module doc).
    ``tables``: the proto's (allocations, logical buffers) when already read."""
    ba = module.buffer_assignment
    if ba is None:
        return empty_program_memory(program_id, module.name, memory_space,
                                    no_assignment_reason(program_id, module.name))
    allocs, buffers = tables or (_allocations(ba), _logical_buffers(module, ba))
    out = ProgramMemory(int(program_id), module.name, int(memory_space),
                        **_summary(allocs, memory_space), buffers=None, heap=None)
    base, held = _indefinite_rows(allocs, buffers, memory_space)
    held = held.assign(indefinite=True, alloc_position=-1, free_position=-1)
    trace = trace_of(ba, allocs, buffers, memory_space)
    heap_rows = buffers.iloc[:0].assign(indefinite=False, alloc_position=0, free_position=0)
    peak = peak_unpadded = 0
    if trace >= 0:
        ev = events_of(ba.heap_simulator_traces[trace])
        try:
            sim = simulate(ev, *(buffers[c].to_numpy(np.int64) for c in
                                 ("id", "allocation", "size", "unpadded")))
        except TraceError as exc:
            out.reasons.append(f"program {program_id} ({module.name}): heap simulator trace "
                               f"{trace} cannot be replayed ({exc}); XProf's memory viewer "
                               "fails on it too")
            out.buffers, out.heap = _empty(BUFFER_COLUMNS), _empty(HEAP_COLUMNS)
            return out
        out.heap = _heap_table(ev, sim, base)
        if len(sim["heap"]) and sim["heap"].max() > 0:
            out.peak_position = int(np.argmax(sim["heap"]))
            peak = int(sim["heap"][out.peak_position])
            peak_unpadded = int(sim["unpadded"][out.peak_position])
            live = live_at(sim, ev["kind"], out.peak_position)
            heap_rows = buffers.iloc[live.pos.to_numpy()].assign(
                indefinite=False, alloc_position=live["at"].to_numpy(),
                free_position=live.end.to_numpy())
    else:
        out.heap = _empty(HEAP_COLUMNS)
        out.reasons.append(_no_trace_reason(program_id, module.name, allocs, memory_space))
    rows = pd.concat([held if memory_space == 0 else held.iloc[:0], heap_rows],
                     ignore_index=True)
    table = _buffer_rows(module, rows, allocs)
    out.buffers = table.sort_values("size_bytes", ascending=False, kind="stable") \
        .reset_index(drop=True)
    out.peak_heap_bytes = float(peak + base)
    out.peak_unpadded_heap_bytes = float(peak_unpadded + base)
    return out
