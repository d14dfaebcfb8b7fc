"""``tp.compare``: differences between two profiles, displayed as a comparison view."""

from __future__ import annotations

from .analysis.findings.compare import COMPARED, Comparison
from .analysis.findings.compare import compare as _compare

__all__ = ["compare", "DisplayedComparison"]


class DisplayedComparison(Comparison):
    """A :class:`Comparison` that shows itself as the comparison view in a notebook."""

    def plot(self, theme: str = "light"):
        """Mean step time per category of both profiles side by side (a plotly figure)."""
        from .plot.compare import compare_figure

        return compare_figure(self, theme)

    def show(self):
        """The comparison view (a widget); ``display(cmp)`` shows the same."""
        from .widgets.compare import ComparisonView

        return ComparisonView(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from ._display import view_bundle

        return view_bundle(self.show, self.__repr__, include, exclude)

    def to_html(self, path, title: str | None = None):
        """Write the comparison view as one self-contained offline HTML page."""
        return self.show().to_html(path, title or "tfprof_nb comparison")

    def _ipython_display_(self):
        from ._display import display_view

        display_view(self.show, self.__repr__)


def compare(a, b, labels=("a", "b")) -> DisplayedComparison:
    """Differences ``b - a`` between profiles: step time and categories, ops, kernels."""
    c = _compare({n: a.result(n) for n in COMPARED}, {n: b.result(n) for n in COMPARED},
                 labels)
    return DisplayedComparison(c.steps, c.ops, c.kernels, c.labels)
