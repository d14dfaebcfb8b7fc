"""The private base of tfprof_nb's widgets: bundle loading, error reporting and the offline
fallback every displayed view carries."""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

STATIC = Path(__file__).resolve().parent.parent / "static"


class WidgetBundleMissing(RuntimeError):
    """The JavaScript bundle of the widgets was not built."""


def bundle(name: str) -> Path:
    """Path of a built widget module; a clear error when it was not built."""
    path = STATIC / f"{name}.js"
    if not path.is_file():
        raise WidgetBundleMissing(
            f"{path} is missing: build the widget bundle with "
            "`npm --prefix js install && npm --prefix js run build` (make test does this)")
    return path


class BaseWidget(anywidget.AnyWidget):
    """Common traits: ``error`` carries a message the view shows instead of failing;
    ``_tfprof_view`` names the view so offline pages find tfprof_nb's widgets."""

    error = traitlets.Unicode("").tag(sync=True)
    _tfprof_view = traitlets.Unicode("").tag(sync=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("_tfprof_view", type(self).__name__)
        super().__init__(*args, **kwargs)

    def _safely(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # a widget must never take the kernel down
            self.error = f"{type(exc).__name__}: {exc}"
            return None

    def _timeline_source(self):
        """The TimelineSource of a view with a trace timeline (its events' details are
        embedded offline), else None."""
        return None

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

    def _timeline_prefix(self) -> str:
        """The prefix of the timeline's traits in this widget's state ("" for a timeline)."""
        return ""

    def _offline(self, make):
        """``make(self)`` (offline fallback pieces), or a note saying why there are none."""
        try:
            return make(self)
        except Exception as exc:  # the live view must still display
            import html

            return (f'<p class="tfprof-offline-note">tfprof_nb: no offline copy of this view '
                    f'({html.escape(type(exc).__name__)}: {html.escape(str(exc))})</p>')

    def to_html(self, path, title: str | None = None):
        """Write this view as one self-contained offline HTML page (no network needed to
        open it, from ``file://`` too); returns the file's path."""
        from ._page import widget_page, write_page

        return write_page(widget_page(self, title or f"tfprof_nb {type(self).__name__}"),
                          path, f"tfprof_{type(self).__name__.lower()}.html")

    def _repr_mimebundle_(self, **kwargs):
        """The widget view plus a self-contained offline fallback (``text/html``)."""
        from ._offline import fallback_html

        return self._bundle(self._offline(fallback_html), **kwargs)

    def _bundle(self, fallback: str, **kwargs):
        out = super()._repr_mimebundle_(**kwargs)
        data, meta = out if isinstance(out, tuple) else (out, {})
        return {**data, "text/html": fallback}, meta

    def _ipython_display_(self):
        """Display the view (its ``text/html`` is the view's place), then the loader: the
        view's offline copy, rendered wherever no live widget shows (exports, reopened
        notebooks)."""
        from IPython.display import display

        from ._offline import display_outputs, loader_html

        pieces = self._offline(display_outputs)
        fallback, loader = pieces if isinstance(pieces, tuple) else (pieces, loader_html())
        data, meta = self._bundle(fallback)
        display(data, metadata=meta, raw=True)
        display({"text/html": loader}, metadata={"tfprof_nb": "offline-loader"}, raw=True)
