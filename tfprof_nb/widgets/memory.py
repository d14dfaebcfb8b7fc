"""The memory view: memory in use over time per allocator (stack, heap, free, fragmentation),
every allocation hoverable, the peak marked, and the breakdown of what is live at the peak."""

from __future__ import annotations

import traitlets

from ._base import bundle
from ._view import View, ViewState, figure_json
from .tables import table_spec

__all__ = ["MemoryTimeline"]


class MemoryTimeline(View):
    """Memory in use over time (``prof.plot.memory()``: a menu picks the allocator) and the
    allocations live at each allocator's peak (``prof.memory_breakdown``)."""

    tab, title = "memory", "Memory"
    _esm = bundle("memory")
    figure = traitlets.Dict().tag(sync=True)
    breakdown = traitlets.Dict().tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.memory_timeline) else (
            "No memory events in this profile (on CPU only some allocators and workloads "
            "record them; TF_CPU_ALLOCATOR_USE_BFC=true makes TensorFlow's do).")

    @classmethod
    def state(cls, prof) -> ViewState:
        breakdown = prof.memory_breakdown.copy()
        if breakdown.host.nunique() > 1:
            breakdown["allocator"] = breakdown.host + " " + breakdown.allocator
        return ViewState({"figure": figure_json(prof.plot.memory()),
                          "breakdown": table_spec(breakdown.drop(columns=["host"]),
                                                  "Memory breakdown at peak", "tf_op")})
