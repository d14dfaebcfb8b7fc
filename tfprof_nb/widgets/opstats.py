"""The TensorFlow stats view: where self time goes by op and type (pies, idle in or out), the
name-scope icicle, and the table."""

from __future__ import annotations

import pandas as pd

from ._view import View, ViewState
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["OpStatsView"]


def _scopes(prof) -> pd.DataFrame:
    """The name-scope tree as the icicle reads it: scope, parent (missing at the roots), name,
    self time and allocated bytes."""
    table = prof.scope_stats(side="all")
    parent = table["parent"].where(table["parent"].notna(), None)
    return pd.DataFrame({"scope": table["scope"].astype(str), "parent": parent,
                         "name": table["name"].astype(str),
                         "time": table["self_time_us"].astype(float),
                         "bytes": table["allocated_bytes"].astype(float)})


class OpStatsView(View):
    """Self time by op and op type on the host and the devices, idle time in or out, the
    name-scope hierarchy by time or memory, and the sortable TensorFlow stats table."""

    tab, title, bundle, position = "ops", "TensorFlow stats", "opstats", 30
    pie_with_idle = FigureTrait()
    pie_without_idle = FigureTrait()
    scopes = TableTrait()
    table = TableTrait()

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.op_stats) else "No TensorFlow ops in this profile."

    @classmethod
    def state(cls, prof) -> ViewState:
        return ViewState({
            "pie_with_idle": prof.plot.op_stats(include_idle=True),
            "pie_without_idle": prof.plot.op_stats(include_idle=False),
            "scopes": _scopes(prof),
            "table": TableData(prof.op_stats, "TensorFlow stats", "operation")})
