"""``tp.compare``: differences between two profiles, displayed as a comparison view."""

from __future__ import annotations

from .analysis.compare import Comparison
from .analysis.compare import compare as _compare

__all__ = ["compare", "DisplayedComparison"]


class DisplayedComparison(Comparison):
    """A :class:`Comparison` that shows itself as the comparison view in a notebook."""

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            from .widgets.compare import ComparisonView

            return ComparisonView(self)._repr_mimebundle_(include=include, exclude=exclude)
        except Exception:  # no widget support: the text form
            return {"text/plain": repr(self)}

    def to_html(self, path, title: str | None = None):
        """Write the comparison view as one self-contained offline HTML page."""
        from .widgets.compare import ComparisonView

        return ComparisonView(self).to_html(path, title or "tfprof_nb comparison")

    def _ipython_display_(self):
        try:
            from .widgets.compare import ComparisonView

            view = ComparisonView(self)
        except Exception:  # no widget support: the text form
            from IPython.display import display

            display({"text/plain": repr(self)}, raw=True)
            return
        view._ipython_display_()


def compare(a, b, labels=("a", "b")) -> DisplayedComparison:
    """Differences ``b - a`` between profiles: step time and categories, ops, kernels."""
    c = _compare(a, b, labels)
    return DisplayedComparison(c.steps, c.ops, c.kernels, c.labels)
