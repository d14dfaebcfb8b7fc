"""The comparison chart of two profiles (``tp.compare(a, b).plot()``)."""

from __future__ import annotations

from ..constants import CATEGORY_COLUMNS
from ._style import CATEGORY_LABELS, new_figure, plain

__all__ = ["compare_figure"]


def compare_figure(comparison, theme: str = "light"):
    """Mean step time per category of both profiles side by side (ms), the speed-up of the
    median step time in the title (the statistic ``tp.check`` and ``tfprof diff`` judge)."""
    a, b = (plain(label) for label in comparison.labels)
    steps = comparison.steps
    cats = [c for c in CATEGORY_COLUMNS if c in steps.index and
            (steps.loc[c, "a"] or steps.loc[c, "b"])]
    speedup = comparison.speedup
    title = f"{a} vs {b}" + (f": {speedup:.2f}x (median step time)" if speedup else "")
    fig = new_figure(theme=theme, barmode="group", title={"text": title},
                     xaxis={"title": {"text": "Step-time category"}, "type": "category"},
                     yaxis={"title": {"text": "Mean time per step (ms)"}, "rangemode": "tozero"},
                     meta={"kind": "compare"})
    labels = [CATEGORY_LABELS[c] for c in cats]
    for key, name, color in (("a", a, "#4e79a7"), ("b", b, "#f28e2b")):
        fig.add_bar(x=labels, y=[float(steps.loc[c, key]) for c in cats], name=name,
                    marker={"color": color},
                    hovertemplate="%{x}: %{y:.3f} ms<extra>" + name + "</extra>")
    return fig
