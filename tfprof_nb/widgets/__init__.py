"""Notebook widgets (anywidget): each view of a profile is also its own widget.

The dashboard (``prof.show()``) is the list of views the widget manifest names
(``manifest.py``, generated from the classes); every view is a class with its own traits
(``_view.View``) and one TS module under ``js/src``.  Every widget is named ``*View``
(``ALIASES``: the contract's earlier names, no warning; ``DEPRECATED``: the others, which
warn).  Names here load lazily: importing this package loads no widget.
"""

from __future__ import annotations

import importlib

# not widgets, exported too
_OTHER = {"WidgetBundleMissing": "tfprof_nb.offline.bundles"}

# every widget is a ``*View`` class; their earlier names that DESIGN.md's contract uses stay as
# aliases, without a warning
ALIASES = {"Dashboard": "DashboardView", "KernelTable": "KernelTableView",
           "MemoryTimeline": "MemoryTimelineView", "OpStatsTable": "OpStatsTableView",
           "PipelineGraph": "PipelineGraphView", "StepTimeGraph": "StepTimeGraphView",
           "TraceTimeline": "TraceView"}
# earlier names outside the contract: they warn (DeprecationWarning), gone in the next release
DEPRECATED = {"Table": "TableView"}


def _exports() -> dict[str, str]:
    from .manifest import load

    modules = {w["name"]: w["module"] for w in load()["widgets"]}
    return {**modules, **{old: modules[new] for old, new in ALIASES.items()}, **_OTHER}


def __getattr__(name: str):
    if name == "__all__":
        return sorted(_exports())
    if name in DEPRECATED:
        from .._deprecated import renamed

        new = DEPRECATED[name]
        return renamed(f"tfprof_nb.widgets.{name}", new, __getattr__(new))
    module = _exports().get(name)
    if module is None:
        raise AttributeError(f"module 'tfprof_nb.widgets' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__():
    return sorted(set(globals()) | set(_exports()))
