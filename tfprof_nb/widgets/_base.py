"""The private base of tfprof_nb's widgets: the JS module a class names, error reporting and
the offline copy every displayed view carries (made by ``tfprof_nb.offline``)."""

from __future__ import annotations

import difflib
import inspect

import anywidget
import ipywidgets
import traitlets

from .. import offline
from ..offline import WidgetBundleMissing, bundle
from ..offline.bundles import bundle_text
from ._shared_module import SharedModule, loader_esm, shared_module

__all__ = ["BaseWidget", "WidgetBundleMissing", "bundle"]


class _Module:
    """A widget class's ES module as anywidget syncs it (``_esm``): a small loader that
    imports the source of the class's ``bundle`` from the kernel's shared model of it (see
    ``_shared_module``), read when a widget is made, so that classes import before their
    bundle is built (a missing bundle then says how to build it)."""

    def __get__(self, obj, cls):
        if obj is None:  # the class's attribute: this descriptor (nothing is read)
            return self
        return loader_esm(bundle_text(cls.bundle)) if cls.bundle else None


class BaseWidget(anywidget.AnyWidget):
    """Common traits: ``error`` carries a message the view shows instead of failing;
    ``_tfprof_view`` names the view so offline pages find tfprof_nb's widgets, and
    ``_tfprof_timelines`` the trait prefixes of the trace viewers inside it (whose selected
    events an offline page answers with the details it embeds).

    A subclass names its JS module with ``bundle`` (``js/src/<bundle>.ts``, built into
    ``tfprof_nb/static``); the widget manifest lists every such class.
    """

    bundle = ""
    _esm = _Module()
    error = traitlets.Unicode("").tag(sync=True)
    _tfprof_view = traitlets.Unicode("").tag(sync=True)
    _tfprof_timelines = traitlets.List(traitlets.Unicode()).tag(sync=True)
    _tfprof_code = traitlets.Instance(SharedModule, allow_none=True).tag(
        sync=True, **ipywidgets.widget_serialization)

    def __init__(self, *args, **kwargs):
        self._refuse_unknown(kwargs)
        kwargs.setdefault("_tfprof_view", type(self).__name__)
        if self.bundle:
            kwargs.setdefault("_tfprof_code", shared_module(self._module_source))
        if "_tfprof_timelines" not in kwargs:
            has_timeline = self._timeline_source() is not None
            kwargs["_tfprof_timelines"] = [self._timeline_prefix()] if has_timeline else []
        super().__init__(*args, **kwargs)

    @property
    def _module_source(self) -> str:
        """The source of this widget's ES module (what its ``_esm`` loads)."""
        return bundle_text(type(self).bundle)

    def _refuse_unknown(self, kwargs: dict) -> None:
        """A TypeError naming the close match for a keyword that is neither a trait nor an
        argument of the class (traitlets would only warn, hidden, and drop it)."""
        unknown = [k for k in kwargs if not self.has_trait(k) and k not in ("_esm", "_css")]
        if not unknown:
            return
        known = {n for n in self.trait_names() if not n.startswith("_")}
        for cls in type(self).__mro__:
            if "__init__" in vars(cls):
                known.update(p.name for p in inspect.signature(cls.__init__).parameters.values()
                             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        known.discard("self")
        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                        f"{unknown[0]!r}{hint}")

    def _safely(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # a widget must never take the kernel down: shown instead
            self.error = f"{type(exc).__name__}: {exc}"
            return None

    def _offline_state(self) -> dict:
        """The state an offline page needs (a widget that builds parts when its page asks
        for them builds them all into it)."""
        return self.get_state()

    def _timeline_source(self):
        """The TimelineSource of a view with a trace timeline (its events' details are
        embedded offline), else None."""
        return None

    def _timeline_prefix(self) -> str:
        """The prefix of the timeline's traits in this widget's state ("" for a timeline)."""
        return ""

    def _answer(self, content, buffers) -> tuple[dict, list] | None:
        """The reply (content, buffers) to a custom message from the front-end (None: no
        reply)."""
        return None

    def _on_message(self, _widget, content, buffers) -> None:
        """Reply to a custom message (register with ``self.on_msg(self._on_message)``)."""
        def answer():
            reply = self._answer(content, buffers)
            if reply is not None:
                self.send(*reply)
        self._safely(answer)

    def _offline(self, make):
        """``make(self)`` (offline fallback pieces), or a note saying why there are none."""
        try:
            return make(self)
        except Exception as exc:  # the live view must still display; the note says why
            import html

            return (f'<p class="tfprof-offline-note">tfprof_nb: no offline copy of this view '
                    f'({html.escape(type(exc).__name__)}: {html.escape(str(exc))})</p>')

    def to_html(self, path, title: str | None = None):
        """Write this view as one self-contained offline HTML page (no network needed to
        open it, from ``file://`` too); returns the file's path."""
        page = offline.widget_page(self, title or f"tfprof_nb {type(self).__name__}")
        return offline.write_page(page, path, f"tfprof_{type(self).__name__.lower()}.html")

    def _repr_mimebundle_(self, **kwargs):
        """The widget view plus a self-contained offline fallback (``text/html``)."""
        return self._bundle(self._offline(offline.fallback_html), **kwargs)

    def _bundle(self, fallback: str, **kwargs):
        out = super()._repr_mimebundle_(**kwargs)
        data, meta = out if isinstance(out, tuple) else (out, {})
        return {**data, "text/html": fallback}, meta

    def _ipython_display_(self):
        """Display the view (its ``text/html`` is the view's place), then the loader: the
        view's offline copy, rendered wherever no live widget shows (exports, reopened
        notebooks).  The view goes first: the page draws it while the copy is packed."""
        from IPython.display import display

        data, meta = self._bundle(offline.placeholder_html(self))
        display(data, metadata=meta, raw=True)
        offline.display_loader(self, self._offline)
