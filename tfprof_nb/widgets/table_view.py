"""Table views: any DataFrame, kernel stats or op stats as a sortable, filterable, paged table
with CSV export."""

from __future__ import annotations

import pandas as pd

from .._deprecated import renamed
from ._base import BaseWidget
from .traits import TableData, TableTrait

__all__ = ["KernelTable", "KernelTableView", "OpStatsTable", "OpStatsTableView",
           "TableView"]


class TableView(BaseWidget):
    """Any DataFrame as a sortable, filterable, paged table with an "Export as CSV" button."""

    bundle = "table"
    table = TableTrait()

    def __init__(self, df: pd.DataFrame, title: str = "", filter_column: str | None = None,
                 **kwargs):
        super().__init__(table=TableData(df, title, filter_column), **kwargs)


class KernelTableView(TableView):
    """GPU kernel stats as a table (filter by kernel name)."""

    def __init__(self, prof, **kwargs):
        super().__init__(prof.kernel_stats, "GPU kernel stats", "kernel_name", **kwargs)


class OpStatsTableView(TableView):
    """Op stats ("TensorFlow stats" on TensorFlow profiles) as a table (filter by op name),
    device ops typed by the profile's HLO where XProf says "Unknown"."""

    def __init__(self, prof, include_idle: bool = True, **kwargs):
        from .op_stats_view import op_stats_title, typed_op_stats

        super().__init__(typed_op_stats(prof, include_idle), op_stats_title(prof),
                         "operation", **kwargs)


KernelTable = KernelTableView  # their names in DESIGN.md's contract: aliases, without a warning
OpStatsTable = OpStatsTableView


def __getattr__(name: str):
    if name == "Table":  # renamed TableView; the old name goes in the next release
        return renamed(f"{__name__}.Table", "TableView", TableView)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
