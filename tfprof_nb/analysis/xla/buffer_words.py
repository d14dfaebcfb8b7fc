"""What XProf's own tables show where GPU kernels ran inside XLA's command buffers.

Such a kernel's ``hlo_op`` stat names the buffer, not the op that launched it, and XProf 2.24.2
files it under no op: its HLO stats list none of them, its op stats count their time as the
devices' IDLE, and its kernel stats name their op ``XlaModule`` (an op no Tensor Core is
eligible for).  Our tables attribute each kernel to its HLO op (:mod:`.command_buffers`), so
every table that shows them says, beside them, what XProf's shows instead (one sentence per
table, from the HLO table's rows: the kernels and their time)."""

from __future__ import annotations

import pandas as pd

__all__ = ["buffered_kernels", "xprof_buffer_words"]

# the rows of prof.hlo_stats whose kernels ran inside a command buffer (the others: "stat",
# the kernel's own hlo_op)
_BUFFERED = ("name", "position", "unresolved")
_WHERE = {"op_stats": "the XLA ops tab says how", "hlo_stats": "the notes here say how",
          "kernel_stats": "the XLA ops tab says how",
          "summary": "prof.hlo_stats.attrs['reasons'] say how"}


def buffered_kernels(hlo_stats: pd.DataFrame) -> tuple[int, float]:
    """(device ops run inside command buffers, their time in us) by the HLO table's rows."""
    if not len(hlo_stats) or "attribution" not in hlo_stats:
        return 0, 0.0
    rows = hlo_stats[hlo_stats.attribution.isin(_BUFFERED)]
    return int(rows.occurrences.sum()), float(rows.total_time_us.sum())


def xprof_buffer_words(hlo_stats: pd.DataFrame, table: str) -> str:
    """The sentence a table (``table``: "op_stats", "hlo_stats", "kernel_stats" or
    "summary", the top ops) shows beside its rows where kernels ran inside command buffers:
    what XProf's table shows instead; "" where none did."""
    n, us = buffered_kernels(hlo_stats)
    if not n:
        return ""
    ran = (f"the {n:,} device ops (kernels, memsets; {us / 1e3:,.3f} ms) run inside XLA's "
           "command buffers")
    why = "their kernels name the buffer, not their op"
    ours = f"here each is attributed to its HLO op ({_WHERE[table]})"
    if table == "hlo_stats":
        return f"XProf's HLO stats have no row for {ran}: {why}; {ours}."
    if table == "kernel_stats":
        return ("XProf's kernel stats name no op for the kernels run inside XLA's command "
                f"buffers: {why}, so their op reads XlaModule, which no Tensor Core is eligible "
                f"for; {ours}, and the op name and eligible columns are that op's.")
    return (f"XProf's op stats count the time of {ran} as the devices' IDLE: {why}, and XProf "
            f"files them under none; {ours}.")
