"""Table views: sortable, filterable, paged, with CSV export (kernel stats, TF stats, ...)."""

from __future__ import annotations

import pandas as pd

from .._deprecated import renamed
from ._base import BaseWidget
from ._view import View, ViewState
from .op_counter_columns import with_op_counters
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["KernelStatsView", "KernelTable", "KernelTableView", "OpStatsTable", "OpStatsTableView",
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
        from .opstats import op_stats_title, typed_op_stats

        super().__init__(typed_op_stats(prof, include_idle), op_stats_title(prof),
                         "operation", **kwargs)


class KernelStatsView(View):
    """The top GPU kernels by total time (a chart) and the kernel stats table."""

    tab, title, bundle, position = "kernels", "GPU kernel stats", "kernel_stats", 40
    figure = FigureTrait()
    table = TableTrait()

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.kernel_stats) else \
            "No GPU in this profile: there are no kernels to show."

    @classmethod
    def state(cls, prof) -> ViewState:
        table = TableData(prof.kernel_stats, "GPU kernel stats", "kernel_name")
        return ViewState({"figure": prof.plot.kernels(),
                          "table": with_op_counters(table, prof, "kernel", {"op": "kernel_name"})})


KernelTable = KernelTableView  # their names in DESIGN.md's contract: aliases, without a warning
OpStatsTable = OpStatsTableView


def __getattr__(name: str):
    if name == "Table":  # renamed TableView; the old name goes in the next release
        return renamed(f"{__name__}.Table", "TableView", TableView)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
