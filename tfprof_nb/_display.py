"""How profiles and comparisons show themselves in IPython: as their view, or as text where
widgets are unavailable (ipywidgets/anywidget not installed, no built bundle).  Any other
error is a bug and is raised, not hidden behind the text (a view that fails inside the
dashboard shows its error in its tab)."""

from __future__ import annotations


def _widget_support_missing(exc: BaseException) -> bool:
    if isinstance(exc, ImportError):
        return True
    from .widgets import WidgetBundleMissing  # importable: the view was made before

    return isinstance(exc, WidgetBundleMissing)


def view_bundle(make_view, text, include=None, exclude=None):
    """The mime bundle of ``make_view()``, or ``text()`` as plain text without widgets."""
    try:
        view = make_view()
    except Exception as exc:
        if not _widget_support_missing(exc):
            raise
        return {"text/plain": text()}
    return view._repr_mimebundle_(include=include, exclude=exclude)


def display_view(make_view, text) -> None:
    """Display ``make_view()`` (the view, then its offline loader), or ``text()``."""
    from IPython.display import display

    try:
        view = make_view()
    except Exception as exc:
        if not _widget_support_missing(exc):
            raise
        display({"text/plain": text()}, raw=True)
        return
    view._ipython_display_()
