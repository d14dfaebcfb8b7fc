"""What each XLA instruction computes, independent of its name: ``tp.compare`` matches ops of
two runs by it, and the HLO diff counts programs' fusions, copies and collectives by it.

One row per instruction of every program's HLO proto outside fused computations (the ops
that run): ``opcode``, ``kind`` (a fusion's kind), ``category`` (XLA's, as ``hlo_stats``
has it), ``shape`` and ``operands`` (shapes without layout), ``framework_op`` (metadata
``op_name``), ``source`` (``file:line``), ``root`` (a fusion's root opcode, else the
opcode), ``fused_ops`` (the framework ops of a fusion's instructions, sorted, one a line)
and ``fingerprint``: a hash of the instruction's computation with every name left out
(opcodes, shapes, operands by position, parameter numbers, dimensions, and the called
computations' fingerprints in turn), so a fusion renumbered by a recompile
(``loop_add_fusion.3`` -> ``.7``) keeps its fingerprint while an edit of what it fuses
changes it.  ``module_key`` is the module's name with its digits left out (recompiles
renumber those too); ``position`` the instruction's place in its computation.
"""

from __future__ import annotations

import hashlib
import re

import pandas as pd

from ...xspace.hlo_proto import programs_of_space
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..xla.hlo_text import category, shape_text
from ..xla.ops import source_of

__all__ = ["ANALYSES", "IDENTITY_COLUMNS", "host_hlo_identity", "combine_hlo_identity",
           "module_key"]

IDENTITY_COLUMNS = ["program_id", "module", "module_key", "hlo_op", "position", "opcode",
                    "kind", "category", "shape", "operands", "framework_op", "source", "root",
                    "fused_ops", "fingerprint"]
_DEPTH = 16


def module_key(name: str) -> str:
    """A module's name with its digit runs as ``#`` (``jit_f.12`` -> ``jit_f.#``)."""
    return re.sub(r"\d+", "#", str(name))


def _instr_text(instr, index: dict, called: list[str]) -> str:
    """One instruction without names: opcode, shape, operands by position, attributes."""
    operands = ",".join(str(index.get(i, "?")) for i in instr.operand_ids)
    parts = [instr.opcode, shape_text(instr.shape, layout=False), operands,
             ",".join(str(d) for d in instr.dimensions), instr.fusion_kind,
             str(instr.parameter_number) if instr.opcode == "parameter" else "",
             instr.custom_call_target, instr.comparison_direction, ";".join(called)]
    return "|".join(parts)


def _fingerprints(module) -> dict:
    """{computation id: fingerprint} of every computation of ``module``."""
    done: dict = {}

    def of(comp_id: int, depth: int) -> str:
        if comp_id in done:
            return done[comp_id]
        comp = module.computations.get(comp_id)
        if comp is None or depth > _DEPTH:
            return "?"
        index = {instr.id: k for k, instr in enumerate(comp.instructions)}
        lines = [_instr_text(instr, index, [of(c, depth + 1)
                                            for c in instr.called_computation_ids])
                 for instr in comp.instructions]
        done[comp_id] = hashlib.blake2b("\n".join(lines).encode(), digest_size=8).hexdigest()
        return done[comp_id]

    for comp_id in module.computations:
        of(comp_id, 0)
    return done


def _fused_ops(module, instr) -> tuple[str, str]:
    """(root opcode, the sorted framework ops of the fused instructions) of a fusion."""
    comps = module.called(instr) if instr.opcode == "fusion" else []
    if not comps:
        return instr.opcode, ""
    root = module.root_of(comps[0])
    names = sorted({i.metadata.op_name for c in comps for i in c.instructions
                    if i.metadata.op_name})
    return (root.opcode if root is not None else instr.opcode), "\n".join(names)


def _module_rows(pid: int, module) -> list[dict]:
    fingerprints = _fingerprints(module)
    fused = {c for instr in module.instructions.values() if instr.opcode == "fusion"
             for c in instr.called_computation_ids}
    rows = []
    for comp_id, comp in module.computations.items():
        if comp_id in fused:
            continue
        index = {instr.id: k for k, instr in enumerate(comp.instructions)}
        for k, instr in enumerate(comp.instructions):
            called = [fingerprints.get(c, "?") for c in instr.called_computation_ids]
            text = _instr_text(instr, index, called).split("|", 3)
            own = "|".join([instr.opcode, text[1], ";".join(called), instr.fusion_kind,
                            ",".join(str(d) for d in instr.dimensions)])
            file, line, _ = source_of(module, instr)
            root, fused_ops = _fused_ops(module, instr)
            ops = module.operands(instr)
            rows.append({
                "program_id": int(pid), "module": module.name, "module_key": module_key(
                    module.name), "hlo_op": instr.name, "position": k,
                "opcode": instr.opcode, "kind": instr.fusion_kind,
                "category": category(module, instr), "shape": text[1],
                "operands": ",".join(shape_text(o.shape, layout=False) if o is not None
                                     else "?" for o in ops),
                "framework_op": instr.metadata.op_name,
                "source": f"{file}:{line}" if file else "", "root": root,
                "fused_ops": fused_ops,
                "fingerprint": hashlib.blake2b(own.encode(), digest_size=8).hexdigest()})
    return rows


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="int64" if c in ("program_id", "position")
                                      else object) for c in IDENTITY_COLUMNS})


def host_hlo_identity(hd: HostData, shift_ps: int = 0) -> pd.DataFrame:
    """IDENTITY_COLUMNS of the programs whose HLO protos this host's metadata plane holds."""
    modules, _, _ = programs_of_space(hd.space)
    rows = [r for pid, m in modules.items() for r in _module_rows(pid, m)]
    return pd.DataFrame(rows, columns=IDENTITY_COLUMNS) if rows else _empty()


def combine_hlo_identity(parts: dict) -> pd.DataFrame:
    """Every program once (the first host that has it)."""
    tables = [p for p in parts.values() if len(p)]
    if not tables:
        return _empty()
    out = pd.concat(tables, ignore_index=True)
    return out.drop_duplicates(["program_id", "hlo_op"]).reset_index(drop=True)


ANALYSES = (Analysis("hlo_identity", host=host_hlo_identity, combine=combine_hlo_identity,
                     shifted=False, host_cost=0.3),)
