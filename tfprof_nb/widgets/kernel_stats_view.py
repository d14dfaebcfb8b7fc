"""The GPU kernel stats view: the top kernels by total time (a chart) and the kernel stats
table, with each kernel's hardware counters where the profile has them."""

from __future__ import annotations

from ._view import View, ViewState
from .op_counter_columns import with_op_counters
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["KernelStatsView"]


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
