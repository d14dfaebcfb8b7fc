"""Table views: sortable, filterable, paged, with CSV export (kernel stats, TF stats, ...)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from ._base import BaseWidget, bundle

__all__ = ["Table", "KernelTable", "OpStatsTable", "table_spec"]


def _json_values(series: pd.Series) -> list:
    if pd.api.types.is_bool_dtype(series):
        return [bool(v) for v in series]
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=float)
        return [None if not np.isfinite(v) else (int(v) if float(v).is_integer() and
                                                 abs(v) < 2**53 else float(v))
                for v in values]
    return [None if pd.isna(v) else str(v) for v in series]


def table_spec(df: pd.DataFrame, title: str = "", filter_column: str | None = None,
               page_size: int = 100) -> dict:
    """A DataFrame as the columnar table payload the view reads (no per-row objects)."""
    columns = []
    for name in df.columns:
        s = df[name]
        kind = "boolean" if pd.api.types.is_bool_dtype(s) else \
            "number" if pd.api.types.is_numeric_dtype(s) else "string"
        columns.append({"name": str(name), "label": str(name).replace("_", " "), "type": kind})
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
