"""A view of a profile as a unit: its traits, how they are built from a profile, what it does
when the front-end changes one, and why it would be empty.

A view class is all the dashboard needs: its tab, title, place among the tabs and JS module
are class attributes; the widget manifest (``manifest.py``) lists every view class, and the
dashboard takes each view's synced traits under the tab's prefix.  A new view is one Python
class (in a module of this package) and one TS module, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._base import BaseWidget

__all__ = ["View", "ViewState"]


@dataclass
class ViewState:
    """What a view shows (trait values) and, for interactive views, the object answering the
    front-end (``controller.on_change(trait, value) -> {trait: value}``)."""

    values: dict
    controller: object | None = None
    extra: dict = field(default_factory=dict)


class View(BaseWidget):
    """A view of a profile.  Subclasses set ``bundle`` (their JS module) and, to be a tab of
    the dashboard, ``tab`` (its key), ``title`` and ``position`` (tabs go by position); a
    ``zoomable`` view has a ``view`` trait ([start, end] in us) the dashboard sets to show a
    time range.  They declare their synced traits and implement :meth:`state` (and
    :meth:`reason` when they can be empty)."""

    tab = ""
    title = ""
    position = 0
    zoomable = False

    @classmethod
    def reason(cls, prof) -> str | None:
        """Why this view would be empty for ``prof`` (None: it has something to show)."""
        return None

    @classmethod
    def title_for(cls, prof) -> str:
        """The tab's label for ``prof`` (names follow the profile: a view may say "Op stats"
        on a JAX profile where it says "TensorFlow stats" on a TensorFlow one)."""
        return cls.title

    @classmethod
    def state(cls, prof) -> ViewState:
        """The view's trait values for ``prof``."""
        raise NotImplementedError

    @classmethod
    def synced(cls) -> dict:
        """The view's own synced traits (not the base widget's)."""
        base = set(BaseWidget.class_traits(sync=True))
        return {k: t for k, t in cls.class_traits(sync=True).items()
                if k not in base and not k.startswith("_")}

    def __init__(self, prof, **kwargs):
        state = self.state(prof)
        self._prof = prof
        self._controller = state.controller
        super().__init__(**state.values, **kwargs)
        if self._controller is not None:
            self.observe(self._on_change, names=list(self.synced()))
            if hasattr(self._controller, "on_message"):
                self.on_msg(self._on_message)

    def _answer(self, content, buffers) -> tuple[dict, list] | None:
        """The reply (content, buffers) to a custom message from the front-end."""
        return self._controller.on_message(content, buffers)

    def _on_change(self, change) -> None:
        def apply():
            for name, value in (self._controller.on_change(change["name"], change["new"])
                                or {}).items():
                setattr(self, name, value)
        self._safely(apply)
