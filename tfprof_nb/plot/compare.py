"""The comparison chart of two profiles (``tp.compare(a, b).plot()``)."""

from __future__ import annotations

from ..constants import CATEGORY_COLUMNS
from ._style import CATEGORY_LABELS, new_figure, plain

__all__ = ["compare_figure", "waterfall_figure"]


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


_MEASURE_COLORS = {"increasing": "#e15759", "decreasing": "#59a14f", "totals": "#4e79a7"}


def waterfall_figure(comparison, top: int = 10, theme: str = "light"):
    """The median step time's change as a waterfall (ms): the base run's median step, the
    ``top`` op changes of the side that explains the steps (``Comparison.waterfall``), the
    other ops' sum, the unexplained rest, and the new run's median step.  Hover text says
    each op's category and whether its change is beyond noise."""
    rows = comparison.waterfall(top)
    a, b = (plain(label) for label in comparison.labels)
    change = comparison.step_time.get("pct")
    title = f"Median step time {a} -> {b}" + (f": {change:+.1f} %" if change is not None
                                              else "")
    fig = new_figure(theme=theme, title={"text": title}, showlegend=False,
                     xaxis={"title": {"text": ""}, "type": "category", "tickangle": -30},
                     yaxis={"title": {"text": "Time per step (ms)"}},
                     meta={"kind": "compare_waterfall"})
    if rows.empty:
        return fig
    labels = [plain(x) for x in rows.label]
    hover = [" · ".join(plain(p) for p in (c, n) if p) for c, n in zip(rows.category, rows.noise)]
    fig.add_waterfall(
        x=labels, y=rows.delta_ms.astype(float).tolist(), measure=rows.measure.tolist(),
        customdata=hover, name="step time change",
        hovertemplate="%{x}: %{y:+.4f} ms<br>%{customdata}<extra></extra>",
        increasing={"marker": {"color": _MEASURE_COLORS["increasing"]}},
        decreasing={"marker": {"color": _MEASURE_COLORS["decreasing"]}},
        totals={"marker": {"color": _MEASURE_COLORS["totals"]}},
        connector={"line": {"width": 1}})
    return fig
