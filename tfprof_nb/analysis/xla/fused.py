"""The instructions inside fusions, for the op profile's fused-instruction nodes.

XProf's op profile lists, under each TPU fusion op, the instructions of its fused computation
(parameters and tuples left out), nested fusions recursively; they carry no time (the fusion
runs as one op).  Their category and text come from the program's HLO proto; their framework
op is the instruction's ``op_name:op_type`` as is (":" when both are empty).
"""

from __future__ import annotations

import pandas as pd

from .hlo_text import category, expression

__all__ = ["FUSED_COLUMNS", "fused_children"]

FUSED_COLUMNS = ["program_id", "op", "parent", "path", "name", "category", "expression",
                 "provenance"]
_SKIPPED = ("parameter", "tuple")


def _walk(module, instr, op: str, parent: str, out: list, depth: int = 0) -> None:
    if instr.opcode != "fusion" or depth > 32:
        return
    for comp in module.called(instr):
        for child in comp.instructions:
            if child.opcode in _SKIPPED:
                continue
            path = f"{parent}/{child.name}"
            md = child.metadata
            out.append({"op": op, "parent": parent, "path": path, "name": child.name,
                        "category": category(module, child),
                        "expression": expression(module, child),
                        "provenance": f"{md.op_name}:{md.op_type}"})
            _walk(module, child, op, path, out, depth + 1)


def fused_children(ops: pd.DataFrame, modules: dict) -> pd.DataFrame:
    """FUSED_COLUMNS: the fused instructions of the fusion ops in ``ops`` (``program_id``,
    ``hlo_op``) found in their programs' HLO protos ``modules``; ``path`` names the chain
    from the op down (``op/child/grandchild``), ``parent`` the chain above."""
    rows: list[dict] = []
    for pid, name in zip(ops.program_id.tolist(), ops.hlo_op.tolist()):
        module = modules.get(pid)
        instr = module.instructions.get(name) if module is not None else None
        if instr is None:
            continue
        found: list[dict] = []
        _walk(module, instr, name, name, found)
        rows += [dict(r, program_id=pid) for r in found]
    return pd.DataFrame(rows, columns=FUSED_COLUMNS)
