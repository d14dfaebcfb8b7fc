"""How profiles and comparisons show themselves in IPython: as their view, or as text where
widgets are unavailable (no ipywidgets front-end, no built bundle)."""

from __future__ import annotations


def view_bundle(make_view, text, include=None, exclude=None):
    """The mime bundle of ``make_view()``, or ``text()`` as plain text."""
    try:
        return make_view()._repr_mimebundle_(include=include, exclude=exclude)
    except Exception:  # no widget support: plain text is still useful
        return {"text/plain": text()}


def display_view(make_view, text) -> None:
    """Display ``make_view()`` (the view, then its offline loader), or ``text()``."""
    from IPython.display import display

    try:
        view = make_view()
    except Exception:  # no widget support: plain text is still useful
        display({"text/plain": text()}, raw=True)
        return
    view._ipython_display_()
