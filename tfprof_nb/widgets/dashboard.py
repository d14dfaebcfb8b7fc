"""The dashboard: every view of a profile in tabs, built from the widget manifest.

The manifest (``manifest.py``) lists the views in tab order.  A dashboard's traits are the
views' own synced traits under the prefix ``<tab>__`` (taken from the view classes, never
declared by hand); ``views`` tells the front-end, in order, each tab's title, view kind and
prefix, and why a tab is empty or what went wrong building it (with the traceback).  A view
that fails shows its error in its tab; the other tabs still work.
"""

from __future__ import annotations

import copy
import importlib
import traceback

import traitlets

from ._base import BaseWidget
from .manifest import view_entries
from .overview import profile_header

__all__ = ["Dashboard", "prefix_of", "view_classes"]


def prefix_of(tab: str) -> str:
    """The prefix of a tab's traits in the dashboard's state."""
    return f"{tab}__"


def view_classes() -> list[type]:
    """The dashboard's view classes, in tab order (as the manifest lists them)."""
    return [getattr(importlib.import_module(e["module"]), e["name"]) for e in view_entries()]


def _prefixed_traits(classes) -> dict:
    return {prefix_of(cls.tab) + name: copy.deepcopy(trait)
            for cls in classes for name, trait in cls.synced().items()}


def _entry(cls) -> dict:
    return {"tab": cls.tab, "title": cls.title, "kind": cls.__name__,
            "prefix": prefix_of(cls.tab), "zoomable": bool(cls.zoomable), "reason": "",
            "error": "", "traceback": ""}


class Dashboard(BaseWidget):
    """Every view of a profile in one tabbed widget; ``prof.show()`` and ``display(prof)``
    give it.  Tabs: the views the widget manifest lists (overview, trace viewer, TensorFlow
    stats, GPU kernel stats, GPU utilisation, XLA ops, memory, input pipeline, tf.data, pod
    viewer).  Tabs
    without data say why; a tab whose view fails shows its error and traceback."""

    bundle = "dashboard"
    header = traitlets.List().tag(sync=True)
    views = traitlets.List().tag(sync=True)

    def __init__(self, prof, **kwargs):
        self._prof = prof
        self._classes = {cls.tab: cls for cls in view_classes()}
        self._controllers: dict[str, object] = {}
        entries, values = [], {}
        for cls in self._classes.values():
            entries.append(self._build(cls, prof, values))
        # the views' traits, on this dashboard only (as anywidget adds its own)
        traitlets.HasTraits.add_traits(self, **_prefixed_traits(self._classes.values()))
        super().__init__(header=profile_header(prof), views=entries, **values, **kwargs)
        for tab, controller in self._controllers.items():
            names = [prefix_of(tab) + n for n in self._classes[tab].synced()]
            self.observe(self._routed(tab, controller), names=names)
        self.on_msg(self._on_message)

    def _build(self, cls, prof, values: dict) -> dict:
        """The tab entry of view ``cls``; its trait values go into ``values``."""
        entry = _entry(cls)
        try:
            entry["title"] = cls.title_for(prof)
            reason = cls.reason(prof)
            if reason:
                entry["reason"] = reason
                return entry
            state = cls.state(prof)
            values.update({prefix_of(cls.tab) + k: v for k, v in state.values.items()})
            if state.controller is not None:
                self._controllers[cls.tab] = state.controller
        except Exception as exc:  # shown in its tab, traceback included; the others work
            entry["error"] = f"{type(exc).__name__}: {exc}"
            entry["traceback"] = traceback.format_exc()
        return entry

    def _answer(self, content, buffers) -> tuple[dict, list] | None:
        """A view's request (its prefix in ``view``) goes to the view's controller; the answer
        carries the prefix back (None: no view answers requests under that prefix)."""
        prefix = content.get("view") if isinstance(content, dict) else None
        tab = next((t for t in self._controllers if prefix_of(t) == prefix), None)
        controller = self._controllers.get(tab)
        if controller is None or not hasattr(controller, "on_message"):
            return None
        reply, out = controller.on_message(content, buffers)
        return {**reply, "view": prefix}, out

    @property
    def reasons(self) -> dict[str, str]:
        """{tab: why it is empty} of the tabs without data."""
        return {v["tab"]: v["reason"] for v in self.views if v["reason"]}

    @property
    def errors(self) -> dict[str, str]:
        """{tab: what failed} of the tabs whose view could not be built (the tab shows the
        message and, folded, its traceback)."""
        return {v["tab"]: v["error"] for v in self.views if v["error"]}

    def _routed(self, tab: str, controller):
        prefix = prefix_of(tab)

        def on_change(change):
            def apply():
                name = change["name"][len(prefix):]
                for key, value in (controller.on_change(name, change["new"]) or {}).items():
                    setattr(self, prefix + key, value)
            self._safely(apply)
        return on_change

    def _timeline_source(self):
        return next((c for c in self._controllers.values() if hasattr(c, "offline_state")),
                    None)

    def _timeline_prefix(self) -> str:
        return next((prefix_of(t) for t, c in self._controllers.items()
                     if hasattr(c, "offline_state")), "")
