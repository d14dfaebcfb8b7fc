"""The dashboard: every view of a profile in tabs, built from the list of views.

``VIEWS`` lists ``(tab, title, view class)``.  The dashboard's traits are the views' own
synced traits under the prefix ``<tab>__`` (generated from the view classes, never declared by
hand); ``views`` tells the front-end, in order, each tab's title, view kind and prefix, and why
a tab is empty or what went wrong building it.  A view that fails shows its error in its tab;
the other tabs still work.
"""

from __future__ import annotations

import copy
import traceback

import traitlets

from ._base import BaseWidget, bundle
from .input import InputPipelineView
from .memory import MemoryTimeline
from .opstats import OpStatsView
from .overview import OverviewView, profile_header
from .pipeline import PipelineGraph, PodView
from .tables import KernelStatsView
from .timeline import TraceTimeline
from .xla import XlaView

__all__ = ["Dashboard", "VIEWS", "prefix_of"]

VIEWS = [
    ("overview", "Overview", OverviewView),
    ("timeline", "Trace viewer", TraceTimeline),
    ("ops", "TensorFlow stats", OpStatsView),
    ("kernels", "GPU kernel stats", KernelStatsView),
    ("xla", "XLA ops", XlaView),
    ("memory", "Memory", MemoryTimeline),
    ("input", "Input pipeline", InputPipelineView),
    ("tfdata", "tf.data", PipelineGraph),
    ("pod", "Pod viewer", PodView),
]


def prefix_of(tab: str) -> str:
    """The prefix of a tab's traits in the dashboard's state."""
    return f"{tab}__"


class _DashboardBase(BaseWidget):
    """What every dashboard has besides its views' traits."""

    _esm = bundle("dashboard")
    header = traitlets.List().tag(sync=True)
    views = traitlets.List().tag(sync=True)

    def __init__(self, prof, **kwargs):
        self._prof = prof
        self._controllers: dict[str, object] = {}
        self._errors: dict[str, str] = {}  # the traceback of each view that failed
        entries, values = [], {}
        for tab, title, cls in VIEWS:
            entry = {"tab": tab, "title": title, "kind": cls.__name__, "prefix": prefix_of(tab),
                     "reason": "", "error": ""}
            try:
                reason = cls.reason(prof)
                if reason:
                    entry["reason"] = reason
                else:
                    state = cls.state(prof)
                    values.update({prefix_of(tab) + k: v for k, v in state.values.items()})
                    if state.controller is not None:
                        self._controllers[tab] = state.controller
            except Exception as exc:  # shown in its tab; the other views still work
                entry["error"] = f"{type(exc).__name__}: {exc}"
                self._errors[tab] = traceback.format_exc()
            entries.append(entry)
        super().__init__(header=profile_header(prof), views=entries, **values, **kwargs)
        classes = {t: c for t, _, c in VIEWS}
        for tab, controller in self._controllers.items():
            names = [prefix_of(tab) + n for n in classes[tab].synced()]
            self.observe(self._routed(tab, controller), names=names)
        self.on_msg(self._on_message)

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
        """{tab: what failed} of the tabs whose view could not be built."""
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
        return self._controllers.get("timeline")

    def _timeline_prefix(self) -> str:
        return prefix_of("timeline")


def _dashboard_class():
    traits = {}
    for tab, _, cls in VIEWS:
        for name, trait in cls.synced().items():
            traits[prefix_of(tab) + name] = copy.deepcopy(trait)
    doc = ("Every view of a profile in one tabbed widget; ``prof.show()`` and "
           "``display(prof)`` give it.  Tabs: " + ", ".join(t for _, t, _ in VIEWS) +
           ".  Tabs without data say why; a tab whose view fails shows its error.")
    return type("Dashboard", (_DashboardBase,), {"__doc__": doc, "__module__": __name__,
                                                  **traits})


Dashboard = _dashboard_class()
