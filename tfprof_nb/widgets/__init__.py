"""Notebook widgets (anywidget): each view of a profile is also its own widget.

The dashboard (``prof.show()``) is the list of views in ``dashboard.VIEWS``; every view is a
class with its own traits (``_view.View``) and one TS module under ``js/src``.
"""

from __future__ import annotations

__all__ = ["ComparisonView", "Dashboard", "InputPipelineView", "KernelStatsView", "KernelTable",
           "MemoryTimeline", "OpStatsTable", "OpStatsView", "OverviewView", "PipelineGraph",
           "PodView", "StepTimeGraph", "Table", "TraceTimeline", "XlaView"]

_LAZY = {"TraceTimeline": "timeline", "Dashboard": "dashboard", "StepTimeGraph": "stepgraph",
         "Table": "tables", "KernelTable": "tables", "OpStatsTable": "tables",
         "KernelStatsView": "tables", "MemoryTimeline": "memory", "ComparisonView": "compare",
         "PipelineGraph": "pipeline", "PodView": "pipeline", "OverviewView": "overview",
         "OpStatsView": "opstats", "InputPipelineView": "input", "XlaView": "xla"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'tfprof_nb.widgets' has no attribute {name!r}")
