"""What a view's "graph" action opens: the HLO ops behind one of its rows, hottest first (an
op of the op stats table: the HLO ops of that framework op, or the HLO op it names; a line of
the Source view: the ops located there), as ``{row key: [[hlo op, program id (text), self
time us], ...]}``, at most :data:`MAX_TARGETS` per row.  The page offers them in a menu and
asks the kernel for the graph of the one chosen (``GraphRequests``)."""

from __future__ import annotations

import pandas as pd

from ..analysis.xla.source_lines import source_line_ops

__all__ = ["MAX_TARGETS", "op_targets", "line_targets"]

MAX_TARGETS = 12


def _grouped(keys, ops: pd.DataFrame, wanted: set) -> dict:
    """{key: its ops' [hlo_op, program_id, self_time_us], hottest first} for keys wanted."""
    frame = pd.DataFrame({"key": list(keys), "op": ops.hlo_op.astype(str).to_numpy(),
                          "program": ops.program_id.astype(str).to_numpy(),
                          "us": ops.self_time_us.astype(float).fillna(0.0).to_numpy()})
    frame = frame[frame.key.isin(wanted)].drop_duplicates(["key", "op", "program"])
    frame = frame.sort_values(["key", "us", "op"], ascending=[True, False, True], kind="stable")
    return {key: [[o, p, round(u, 3)] for o, p, u in
                  group[["op", "program", "us"]].head(MAX_TARGETS).itertuples(index=False)]
            for key, group in frame.groupby("key", sort=False)}


def op_targets(prof, table: pd.DataFrame) -> dict:
    """The HLO ops behind each op stats row (by ``operation``): the ops whose framework op
    it is (``framework_op_name`` is ``name:type``), or the HLO op it names (device ops XProf
    types "Unknown")."""
    hlo = prof.hlo_stats
    if not len(hlo) or "operation" not in table:
        return {}
    ops = pd.DataFrame({"hlo_op": hlo.hlo_op_name, "program_id": hlo.program_id,
                        "self_time_us": hlo.total_self_time_us})
    framework = hlo.framework_op_name.fillna("").astype(str).str.rsplit(":", n=1).str[0]
    wanted = set(table.operation.astype(str))
    both = pd.concat([ops, ops], ignore_index=True)
    keys = list(framework) + list(hlo.hlo_op_name.astype(str))
    return _grouped(keys, both, wanted)


def line_targets(prof) -> dict:
    """The HLO ops at each line of ``prof.source_lines``, keyed ``file:line``."""
    hlo = prof.hlo_stats
    if not len(hlo):
        return {}
    ops = source_line_ops(hlo, prof.result("source_functions"))
    keys = ops.file + ":" + ops.line.astype(str)
    return _grouped(keys, ops, set(keys))
