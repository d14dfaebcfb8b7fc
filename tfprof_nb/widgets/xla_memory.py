"""The program memory section of the XLA view (XProf's memory viewer): every XLA program with
its peak heap, and for the selected one the heap over its program order, the buffers live at
the peak, or why it has none.

The first programs' charts and tables travel with the view's state (at most
:data:`STATE_PROGRAMS` of them in about :data:`STATE_BYTES`, the first one always), so a
page without a kernel shows them; a live view asks the kernel for the others
(:meth:`ProgramMemorySource.on_message`).  Program ids are sent as text: TPU ids are 64-bit
and would lose digits as JavaScript numbers.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .traits import TableData

__all__ = ["STATE_BYTES", "STATE_PROGRAMS", "ProgramMemorySource", "memory_notes", "memory_state",
           "program_detail", "program_list"]

# the programs' details in the view's state: at most this many, in about this many bytes (the
# first always); a chart takes about 0.1 s to build and 10-20 kB
STATE_PROGRAMS = 10
STATE_BYTES = 2 * 2**20
MEMORY_SPACE = 0  # the device's default memory: the one XProf's memory viewer shows first
_LIST_COLUMNS = ["program_id", "module", "program", "peak_heap_bytes", "buffers_at_peak",
                 "has_buffer_assignment"]
_BUFFER_COLUMNS = ["hlo_op_name", "shape_index", "opcode", "framework_op", "buffer_shape",
                   "size_bytes", "unpadded_size_bytes", "padding_bytes", "allocation_type",
                   "logical_buffer_id", "alloc_position", "free_position", "indefinite",
                   "source"]


def program_list(prof) -> pd.DataFrame:
    """The programs in memory space 0: those with a buffer assignment first, the largest
    peak first; ``program_id`` as text."""
    table = prof.program_memory(memory_space=MEMORY_SPACE)
    table = table.sort_values(["has_buffer_assignment", "peak_heap_bytes", "program"],
                              ascending=[False, False, True], kind="stable",
                              na_position="last")
    out = table[_LIST_COLUMNS].reset_index(drop=True)
    out["program_id"] = out.program_id.astype(str)
    return out


def program_detail(prof, program_id: str) -> dict:
    """What the section shows of one program: its name, peak, why parts are missing, the
    chart (``{}``: none) and the buffers live at the peak (a table as sent)."""
    mem = prof.program_memory(int(program_id), MEMORY_SPACE)
    empty = mem.heap.empty and mem.buffers.empty
    figure = {} if empty else json.loads(prof.plot.program_memory(
        int(program_id), MEMORY_SPACE).to_json())
    peak = mem.peak_heap_bytes
    return {"program_id": str(program_id), "name": mem.name,
            "peak_heap_bytes": None if np.isnan(peak) else float(peak),
            "reasons": [str(r) for r in mem.reasons], "figure": figure,
            "buffers": TableData(_shown_buffers(mem.buffers),
                                 f"Buffers live at the peak of {mem.name}",
                                 "hlo_op_name").wire()}


def _shown_buffers(buffers: pd.DataFrame) -> pd.DataFrame:
    """The buffers table's columns; a buffer live through the whole program (``indefinite``:
    parameters, constants, outputs) leaves its positions blank (its -1 is no position)."""
    table = buffers[_BUFFER_COLUMNS].copy()
    for col in ("alloc_position", "free_position"):
        table[col] = table[col].where(~table.indefinite.astype(bool))
    return table


def memory_notes(prof, programs: pd.DataFrame) -> list[str]:
    """Why memory is missing: for the whole profile (no HLO protos, ...) and how many
    programs have no buffer assignment."""
    notes = [str(r) for r in prof.result("program_memory").reasons]
    bare = int((~programs.has_buffer_assignment).sum())
    if bare:
        notes.append(f"{bare} of {len(programs)} programs have no buffer assignment in their "
                     "HLO proto (JAX modules serialized on their own have none): no memory "
                     "to show for them.")
    return notes


def _size(detail: dict) -> int:
    """About how many bytes a detail takes in the state (its figure's JSON and its table)."""
    table = detail["buffers"]
    return len(json.dumps(detail["figure"])) + sum(b.nbytes for b in table["buffers"]) + \
        len(json.dumps(table["schema"]))


def memory_state(prof, budget: int | None = None,
                 count: int | None = None) -> tuple[pd.DataFrame, dict]:
    """The program list and the details of its first ``count`` programs (default
    :data:`STATE_PROGRAMS`) in about ``budget`` bytes (default :data:`STATE_BYTES`; the first
    program always)."""
    programs = program_list(prof)
    budget = STATE_BYTES if budget is None else budget
    count = STATE_PROGRAMS if count is None else count
    details, used = {}, 0
    for pid in programs.program_id[:max(count, 1)]:
        detail = program_detail(prof, pid)
        used += _size(detail)
        if details and used > budget:
            break
        details[pid] = detail
    return programs, details


class ProgramMemorySource:
    """Answers the XLA view's requests for a program's memory (the live view only)."""

    def __init__(self, prof, known: set[str]):
        self.prof = prof
        self.known = known

    def on_change(self, name: str, value) -> dict:
        """Nothing follows a trait change."""
        return {}

    def on_message(self, content: dict, buffers=None) -> tuple[dict, list]:
        """``{"kind": "program_memory", "program": id as text, "id"}`` gets ``detail`` (its
        table's buffers apart, as the message's buffers); bad requests get ``error``."""
        content = content if isinstance(content, dict) else {}
        base = {"kind": content.get("kind"), "id": content.get("id"),
                "program": content.get("program")}
        if base["kind"] != "program_memory":
            return {**base, "error": f"unknown request {base['kind']!r}"}, []
        if str(base["program"]) not in self.known:
            return {**base, "error": f"unknown program {base['program']!r}"}, []
        detail = program_detail(self.prof, str(base["program"]))
        table = detail.pop("buffers")
        wire = {k: v for k, v in table.items() if k != "buffers"}  # its buffers go apart
        return {**base, "detail": {**detail, "buffers": wire}}, list(table["buffers"])
