"""Table views: sortable, filterable, paged, with CSV export (kernel stats, TF stats, ...)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from ._base import BaseWidget, bundle
from ._view import View, ViewState, figure_json

__all__ = ["Table", "KernelTable", "OpStatsTable", "KernelStatsView", "column_label",
           "table_spec"]


def _json_values(series: pd.Series) -> list:
    if pd.api.types.is_bool_dtype(series):
        return [bool(v) for v in series]
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=float)
        return [None if not np.isfinite(v) else (int(v) if float(v).is_integer() and
                                                 abs(v) < 2**53 else float(v))
                for v in values]
    return [None if pd.isna(v) else str(v) for v in series]


_UNITS = {"us": "us", "ms": "ms", "bytes": "bytes", "pct": "%", "s": "s"}


def column_label(name: str) -> str:
    """A column name as a header: words, the unit in parentheses ("total_time_us" ->
    "total time (us)")."""
    head, _, unit = str(name).rpartition("_")
    if not head and unit in _UNITS:  # a bare unit ("pct") still says what it is
        return f"share ({_UNITS[unit]})" if unit == "pct" else f"value ({_UNITS[unit]})"
    if head and unit in _UNITS:
        return f"{head.replace('_', ' ')} ({_UNITS[unit]})"
    return str(name).replace("_", " ")


def table_spec(df: pd.DataFrame, title: str = "", filter_column: str | None = None,
               page_size: int = 100) -> dict:
    """A DataFrame as the columnar table payload the view reads (no per-row objects)."""
    columns = []
    for name in df.columns:
        s = df[name]
        kind = "boolean" if pd.api.types.is_bool_dtype(s) else \
            "number" if pd.api.types.is_numeric_dtype(s) else "string"
        columns.append({"name": str(name), "label": column_label(name), "type": kind})
    return {"title": title, "columns": columns,
            "data": {str(c): _json_values(df[c]) for c in df.columns},
            "filter_column": filter_column, "page_size": page_size}


class Table(BaseWidget):
    """Any DataFrame as a sortable, filterable, paged table with an "Export as CSV" button."""

    _esm = bundle("table")
    table = traitlets.Dict().tag(sync=True)

    def __init__(self, df: pd.DataFrame, title: str = "", filter_column: str | None = None,
                 **kwargs):
        super().__init__(table=table_spec(df, title, filter_column), **kwargs)


def KernelTable(prof, **kwargs) -> Table:  # noqa: N802 (a view constructor)
    """GPU kernel stats as a table (filter by kernel name)."""
    return Table(prof.kernel_stats, "GPU kernel stats", "kernel_name", **kwargs)


def OpStatsTable(prof, include_idle: bool = True, **kwargs) -> Table:  # noqa: N802
    """TensorFlow stats as a table (filter by op name)."""
    return Table(prof.op_stats_table(include_idle=include_idle), "TensorFlow stats",
                 "operation", **kwargs)


class KernelStatsView(View):
    """The top GPU kernels by total time (a chart) and the kernel stats table."""

    tab, title = "kernels", "GPU kernel stats"
    _esm = bundle("kernels")
    figure = traitlets.Dict().tag(sync=True)
    table = traitlets.Dict().tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.kernel_stats) else \
            "No GPU in this profile: there are no kernels to show."

    @classmethod
    def state(cls, prof) -> ViewState:
        return ViewState({"figure": figure_json(prof.plot.kernels()),
                          "table": table_spec(prof.kernel_stats, "GPU kernel stats",
                                              "kernel_name")})
