"""The TensorFlow stats view: where self time goes by op and type (pies, idle in or out), the
name-scope icicle, and the table."""

from __future__ import annotations

import traitlets

from ._base import bundle
from ._view import View, ViewState, figure_json
from .tables import table_spec

__all__ = ["OpStatsView"]


def _scopes(prof) -> list:
    table = prof.scope_stats(side="all")
    return [{"scope": str(r.scope), "parent": None if r.parent is None or
             (isinstance(r.parent, float)) else str(r.parent), "name": str(r.name),
             "time": float(r.self_time_us), "bytes": float(r.allocated_bytes)}
            for r in table.itertuples()]


class OpStatsView(View):
    """Self time by op and op type on the host and the devices, idle time in or out, the
    name-scope hierarchy by time or memory, and the sortable TensorFlow stats table."""

    tab, title = "ops", "TensorFlow stats"
    _esm = bundle("opstats")
    pies = traitlets.Dict().tag(sync=True)  # {"with_idle": figure, "without_idle": figure}
    scopes = traitlets.List().tag(sync=True)
    table = traitlets.Dict().tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.op_stats) else "No TensorFlow ops in this profile."

    @classmethod
    def state(cls, prof) -> ViewState:
        return ViewState({
            "pies": {"with_idle": figure_json(prof.plot.op_stats(include_idle=True)),
                     "without_idle": figure_json(prof.plot.op_stats(include_idle=False))},
            "scopes": _scopes(prof),
            "table": table_spec(prof.op_stats, "TensorFlow stats", "operation")})
