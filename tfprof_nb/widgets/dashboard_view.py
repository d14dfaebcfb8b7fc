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
from .overview_view import profile_header
from .trace_view import TraceView

__all__ = ["Dashboard", "DashboardView", "prefix_of", "view_classes"]


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
            "error": "", "traceback": "", "pending": False}


def _failed(entry: dict, exc: Exception) -> dict:
    """``entry`` saying what failed (shown in its tab, traceback folded; the others work)."""
    return {**entry, "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(), "pending": False}


def _timelines(entries: list[dict]) -> list[dict]:
    """The entries of trace viewers with data (their events' details go offline)."""
    return [e for e in entries if e["kind"] == TraceView.__name__ and not e["reason"]
            and not e["error"]]


class DashboardView(BaseWidget):
    """Every view of a profile in one tabbed widget; ``prof.show()`` and ``display(prof)``
    give it.  Tabs: the views the widget manifest lists (overview, trace viewer, TensorFlow
    stats or op stats, GPU kernel stats, GPU or device utilisation, XLA ops, memory, input
    pipeline, tf.data, pod viewer; each names itself for the profile: ``title_for``).  Tabs
    without data say why; a tab whose view fails shows its error and traceback.

    The first tab with data is built at once; the others (``pending``) when the page opens
    them (it asks the kernel); an offline copy builds them all into its own state, not the
    live page's: a dashboard shows in the time of its overview, not of every view."""

    bundle = "dashboard"
    header = traitlets.List().tag(sync=True)
    views = traitlets.List().tag(sync=True)

    def __init__(self, prof, **kwargs):
        self._prof = prof
        self._classes = {cls.tab: cls for cls in view_classes()}
        self._controllers: dict[str, object] = {}
        self._built: dict[str, tuple[dict, dict]] = {}
        entries = [self._entry(cls, prof) for cls in self._classes.values()]
        # the views' traits, on this dashboard only (as anywidget adds its own)
        traitlets.HasTraits.add_traits(self, **_prefixed_traits(self._classes.values()))
        first = next((i for i, e in enumerate(entries) if e["pending"]), None)
        values: dict = {}
        if first is not None:
            entries[first], values = self._state_of(entries[first])
        kwargs.setdefault("_tfprof_timelines", [e["prefix"] for e in _timelines(entries)])
        super().__init__(header=profile_header(prof), views=entries, **values, **kwargs)
        self._observe_controllers(list(self._controllers))
        self.on_msg(self._on_message)

    def _entry(self, cls, prof) -> dict:
        """The tab entry of view ``cls``: its title, and why it is empty (or what failed
        finding out); a tab with data is ``pending`` until built."""
        entry = _entry(cls)
        try:
            entry["title"] = cls.title_for(prof)
            entry["reason"] = cls.reason(prof) or ""
        except Exception as exc:  # shown in its tab, traceback included; the others work
            return _failed(entry, exc)
        entry["pending"] = not entry["reason"]
        return entry

    def _state_of(self, entry: dict) -> tuple[dict, dict]:
        """(the entry built, its view's trait values under the tab's prefix), built once (an
        offline copy may build a tab the page opens later)."""
        tab = entry["tab"]
        if tab not in self._built:
            try:
                state = self._classes[tab].state(self._prof)
            except Exception as exc:
                self._built[tab] = (_failed(entry, exc), {})
            else:
                if state.controller is not None:
                    self._controllers[tab] = state.controller
                self._built[tab] = ({**entry, "pending": False},
                                    {prefix_of(tab) + k: v for k, v in state.values.items()})
        return self._built[tab]

    def _offline_state(self) -> dict:
        """The state an offline page needs: every tab built, its traits serialised as they
        would sync, without sending the live page the tabs it has not opened."""
        state = self.get_state()
        views = []
        for entry in self.views:
            if entry["pending"]:
                entry, values = self._state_of(entry)
                traits = self.traits()
                for name, value in values.items():  # (as setting, then syncing, would do)
                    to_json = self.trait_metadata(name, "to_json", self._trait_to_json)
                    state[name] = to_json(traits[name].validate(self, value), self)
            views.append(entry)
        state["views"] = views
        return state

    def open_tab(self, tab: str) -> None:
        """Build tab ``tab`` when it is pending (the page asks for it when it is opened)."""
        views = list(self.views)
        i = next((k for k, e in enumerate(views) if e["tab"] == tab and e["pending"]), None)
        if i is None:
            return
        views[i], values = self._state_of(views[i])
        with self.hold_sync():
            for name, value in values.items():
                setattr(self, name, value)
            self.views = views
        self._observe_controllers([tab] if tab in self._controllers else [])

    def _complete(self) -> None:
        """Build every pending tab (an offline page has no kernel to ask)."""
        for entry in list(self.views):
            if entry["pending"]:
                self.open_tab(entry["tab"])

    def _observe_controllers(self, tabs: list[str]) -> None:
        for tab in tabs:
            names = [prefix_of(tab) + n for n in self._classes[tab].synced()]
            self.observe(self._routed(tab, self._controllers[tab]), names=names)

    def _answer(self, content, buffers) -> tuple[dict, list] | None:
        """``{"kind": "tab", "tab"}`` builds that tab (its traits answer); another view's
        request (its prefix in ``view``) goes to the view's controller, and the answer
        carries the prefix back (None: no view answers requests under that prefix)."""
        if isinstance(content, dict) and content.get("kind") == "tab":
            self.open_tab(str(content.get("tab", "")))
            return None
        prefix = content.get("view") if isinstance(content, dict) else None
        for entry in self.views:  # (a view asks from its page: its tab is built there)
            if entry["prefix"] == prefix and entry["pending"]:
                self.open_tab(entry["tab"])
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
        message and, folded, its traceback); every tab is built to know."""
        self._complete()
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
        for entry in _timelines(self.views):
            self._state_of(entry)  # (built, not opened: the live page opens it when shown)
        return next((c for c in self._controllers.values() if hasattr(c, "offline_state")),
                    None)

    def _timeline_prefix(self) -> str:
        return next((prefix_of(t) for t, c in self._controllers.items()
                     if hasattr(c, "offline_state")), "")


Dashboard = DashboardView  # its name in DESIGN.md's contract: an alias, without a warning
