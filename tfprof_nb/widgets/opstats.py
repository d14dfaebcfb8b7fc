"""The op stats view ("TensorFlow stats" on TensorFlow profiles, "Op stats" on others): where
self time goes by op and type (pies, idle in or out), the name-scope icicle, and the table.
Device ops XProf types "Unknown" (HLO ops with no framework op) show their HLO category."""

from __future__ import annotations

import pandas as pd

from ..analysis.tf.op_stats import typed_by_hlo
from ..plot.ops import op_stats_figure
from ._view import View, ViewState
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["OpStatsView", "op_stats_title", "typed_op_stats"]


def op_stats_title(prof) -> str:
    """"TensorFlow stats" on a TensorFlow profile, "Op stats" on any other (JAX)."""
    return "TensorFlow stats" if prof.framework.name == "tensorflow" else "Op stats"


def typed_op_stats(prof, include_idle: bool = True) -> pd.DataFrame:
    """The op stats table with its device ops typed by the profile's HLO where XProf says
    "Unknown" (:func:`~tfprof_nb.analysis.tf.op_stats.typed_by_hlo`)."""
    return typed_by_hlo(prof.op_stats_table(include_idle=include_idle), prof.hlo_stats)


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
    def title_for(cls, prof) -> str:
        return op_stats_title(prof)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.op_stats) else "No ops in this profile."

    @classmethod
    def state(cls, prof) -> ViewState:
        ops = typed_op_stats(prof)
        return ViewState({
            "pie_with_idle": op_stats_figure(ops),
            "pie_without_idle": op_stats_figure(typed_op_stats(prof, include_idle=False)),
            "scopes": _scopes(prof),
            "table": TableData(ops, op_stats_title(prof), "operation")})
