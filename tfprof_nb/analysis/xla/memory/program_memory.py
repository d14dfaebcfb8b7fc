"""Program memory (XProf's memory viewer): each XLA program's peak heap, the buffers live at
the peak and the heap over the program order, from the buffer assignment its HLO proto carries.

This is the memory tool of JAX and of TPUs, whose profiles record no allocation events: what
the compiler planned, not what ran.  The per-host step parses the host's HLO protos with their
buffer assignments and computes every program's memory in every memory space it uses
(:func:`.buffer_assignment.program_memory_of`); the combine step keeps each program once (the
first host that has it).  :func:`program_memory_for` answers ``prof.program_memory(...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ....xspace.hlo_proto import programs_of_space
from ...runtime.hostdata.host import HostData
from ...runtime.unit import Analysis
from .buffer_assignment import (ProgramMemory, empty_program_memory, no_assignment_reason,
                                program_memories)

__all__ = ["ANALYSES", "PROGRAM_COLUMNS", "ProgramMemoryData", "combine_program_memory",
           "host_program_memory", "program_memory_for", "programs_table"]

PROGRAM_COLUMNS = ["program_id", "module", "program", "memory_space", "peak_heap_bytes",
                   "peak_unpadded_heap_bytes", "peak_position", "heap_simulator_events",
                   "buffers_at_peak", "indefinite_bytes", "entry_parameters_bytes",
                   "maybe_live_out_bytes", "non_reusable_bytes", "total_allocation_bytes",
                   "has_buffer_assignment"]
_NO_PROTOS = ("no HLO protos in the profile (no 'Hlo Proto' stats in a /host:metadata "
              "plane): program memory comes from the buffer assignments XLA stores there")


@dataclass
class ProgramMemoryData:
    """Every program's memory: ``programs`` {program id: {"module": name, "spaces":
    {memory space: ProgramMemory}, "buffer_assignment": bool}} and ``reasons``."""

    programs: dict = field(default_factory=dict)
    reasons: list = field(default_factory=list)


def host_program_memory(hd: HostData, shift_ps: int = 0) -> ProgramMemoryData:
    """The memory of every program whose HLO proto this host's metadata plane carries."""
    modules, _, reasons = programs_of_space(hd.space, buffers=True)
    out = ProgramMemoryData(reasons=list(reasons))
    for pid, module in modules.items():
        out.programs[pid] = {"module": module.name, "spaces": program_memories(module, pid),
                             "buffer_assignment": module.buffer_assignment is not None}
    return out


def combine_program_memory(parts: dict) -> ProgramMemoryData:
    """The hosts' programs, each once (the first host that has it)."""
    out = ProgramMemoryData()
    for part in parts.values():
        for pid, program in part.programs.items():
            out.programs.setdefault(pid, program)
        out.reasons += [r for r in part.reasons if r not in out.reasons]
    if not out.programs and not out.reasons:
        out.reasons.append(_NO_PROTOS)
    return out


def _no_assignment(pid: int, program: dict, memory_space: int) -> ProgramMemory:
    return empty_program_memory(pid, program["module"], memory_space,
                                no_assignment_reason(pid, program["module"]))


def _result(pid: int, program: dict, memory_space: int) -> ProgramMemory:
    if not program["buffer_assignment"]:
        return _no_assignment(pid, program, memory_space)
    found = program["spaces"].get(memory_space)
    if found is None:
        return empty_program_memory(
            pid, program["module"], memory_space,
            f"program {pid} ({program['module']}) has no buffer allocation in memory space "
            f"{memory_space}; it uses {sorted(program['spaces'])}")
    return found


def programs_table(data: ProgramMemoryData, memory_space: int = 0) -> pd.DataFrame:
    """One row per program (PROGRAM_COLUMNS) in ``memory_space``, the highest peak first;
    ``attrs["reasons"]`` says what is missing."""
    rows = []
    for pid, program in data.programs.items():
        r = _result(pid, program, memory_space)
        rows.append([pid, r.module, r.name, memory_space, r.peak_heap_bytes,
                     r.peak_unpadded_heap_bytes, r.peak_position, len(r.heap), len(r.buffers),
                     r.indefinite_bytes, r.entry_parameters_bytes, r.maybe_live_out_bytes,
                     r.non_reusable_bytes, r.total_allocation_bytes,
                     program["buffer_assignment"]])
    table = pd.DataFrame(rows, columns=PROGRAM_COLUMNS)
    table = table.astype({"program_id": np.uint64 if len(table) and
                          (table.program_id > np.iinfo(np.int64).max).any() else np.int64,
                          "memory_space": np.int64, "peak_position": np.int64,
                          "heap_simulator_events": np.int64, "buffers_at_peak": np.int64,
                          "has_buffer_assignment": bool,
                          **{c: float for c in PROGRAM_COLUMNS if c.endswith("_bytes")}})
    table = table.sort_values(["peak_heap_bytes", "program"], ascending=[False, True],
                              kind="stable", na_position="last").reset_index(drop=True)
    table.attrs["reasons"] = list(data.reasons) + [
        _no_assignment(pid, p, memory_space).reasons[0]
        for pid, p in data.programs.items() if not p["buffer_assignment"]]
    return table


def _match(data: ProgramMemoryData, program) -> int:
    """The program id that ``program`` (an id, a module name or XProf's ``name(id)``) names."""
    if not data.programs:
        raise ValueError("no XLA programs in this profile: " + "; ".join(data.reasons))
    known = ", ".join(f"{p['module']}({pid})" for pid, p in data.programs.items())
    if isinstance(program, (int, np.integer)) and not isinstance(program, bool):
        if int(program) in data.programs:
            return int(program)
        raise ValueError(f"unknown program id {program}; the programs are: {known}")
    if not isinstance(program, str):
        raise TypeError(f"program must be a program id or a module name, not "
                        f"{type(program).__name__}")
    hits = [pid for pid, p in data.programs.items()
            if program in (p["module"], f"{p['module']}({pid})")]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ValueError(f"unknown program {program!r}; the programs are: {known}")
    raise ValueError(f"{len(hits)} programs are named {program!r} "
                     f"({', '.join(f'{program}({h})' for h in hits)}): pass the program id or "
                     "'name(id)'")


def program_memory_for(data: ProgramMemoryData, program=None, memory_space: int = 0):
    """``program`` None: :func:`programs_table`; else that program's
    :class:`~.buffer_assignment.ProgramMemory` in ``memory_space``."""
    if program is None:
        return programs_table(data, memory_space)
    pid = _match(data, program)
    return _result(pid, data.programs[pid], memory_space)


ANALYSES = (Analysis("program_memory", host=host_program_memory,
                     combine=combine_program_memory, shifted=False, host_cost=0.5),)
