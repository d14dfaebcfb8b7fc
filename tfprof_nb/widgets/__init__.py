"""Notebook widgets (anywidget): each view of a profile is also its own widget.

The dashboard (``prof.show()``) is the list of views the widget manifest names
(``manifest.py``, generated from the classes); every view is a class with its own traits
(``_view.View``) and one TS module under ``js/src``.  Names here load lazily: importing this
package loads no widget.
"""

from __future__ import annotations

import importlib

# not widgets, exported too
_OTHER = {"WidgetBundleMissing": "tfprof_nb.offline.bundles"}


def _exports() -> dict[str, str]:
    from .manifest import load

    return {**{w["name"]: w["module"] for w in load()["widgets"]}, **_OTHER}


def __getattr__(name: str):
    if name == "__all__":
        return sorted(_exports())
    module = _exports().get(name)
    if module is None:
        raise AttributeError(f"module 'tfprof_nb.widgets' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__():
    return sorted(set(globals()) | set(_exports()))
