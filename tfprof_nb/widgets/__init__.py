"""Notebook widgets (anywidget): each view of a profile is also its own widget."""

from __future__ import annotations

__all__ = ["ComparisonView", "Dashboard", "KernelTable", "MemoryTimeline", "OpStatsTable",
           "PipelineGraph", "PodView", "StepTimeGraph", "Table", "TraceTimeline"]

_LAZY = {"TraceTimeline": "timeline", "Dashboard": "dashboard", "StepTimeGraph": "stepgraph",
         "Table": "tables", "KernelTable": "tables", "OpStatsTable": "tables",
         "MemoryTimeline": "memory", "ComparisonView": "compare",
         "PipelineGraph": "pipeline", "PodView": "pipeline"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'tfprof_nb.widgets' has no attribute {name!r}")
