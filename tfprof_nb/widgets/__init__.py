"""Notebook widgets (anywidget): each view of a profile is also its own widget."""

from __future__ import annotations

__all__ = ["TraceTimeline"]


def __getattr__(name: str):
    if name == "TraceTimeline":
        from .timeline import TraceTimeline

        return TraceTimeline
    raise AttributeError(f"module 'tfprof_nb.widgets' has no attribute {name!r}")
