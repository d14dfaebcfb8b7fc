"""The memory view: memory in use over time per allocator (stack, heap, free, fragmentation),
every allocation hoverable, the peak marked, and the breakdown of what is live at the peak."""

from __future__ import annotations

from ._view import View, ViewState
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["MemoryTimeline"]


class MemoryTimeline(View):
    """Memory in use over time (``prof.plot.memory()``: a menu picks the allocator) and the
    allocations live at each allocator's peak (``prof.memory_breakdown``)."""

    tab, title, bundle, position = "memory", "Memory", "memory", 60
    figure = FigureTrait()
    breakdown = TableTrait()

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
        return ViewState({"figure": prof.plot.memory(),
                          "breakdown": TableData(breakdown.drop(columns=["host"]),
                                                 "Memory breakdown at peak", "tf_op")})
