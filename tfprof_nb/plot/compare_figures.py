"""The comparison chart of two profiles (``tp.compare(a, b).plot()``)."""

from __future__ import annotations

from ..analysis.findings.comparison import MEANS_SCOPE
from ..constants import CATEGORY_COLUMNS
from ._style import CATEGORY_LABELS, new_figure, plain, titled_with_note

__all__ = ["compare_figure", "waterfall_figure"]


def compare_figure(comparison, theme: str = "light"):
    """Mean step time per category of both profiles side by side (ms), the speed-up of the
    median step time in the title (the statistic ``tp.check`` and ``tfprof diff`` judge)."""
    a, b = (plain(label) for label in comparison.labels)
    steps = comparison.steps
    cats = [c for c in CATEGORY_COLUMNS if c in steps.index and
            (steps.loc[c, "a"] or steps.loc[c, "b"])]
    title = titled_with_note(f"{a} vs {b}" + _speed_words(comparison, b),
                             f"bars: mean time per step in each category, {MEANS_SCOPE}")
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


def _speed_words(comparison, b: str) -> str:
    """": median step time 2.876 -> 3.259 ms (b 13.3% slower)": the statistic ``tp.check``
    and ``tfprof diff`` judge, both runs' figures and which way it went ("" without one; the
    means' where no median was given)."""
    st, steps = comparison.step_time, comparison.steps
    if st.get("base") and st.get("new"):
        x, y, what = float(st["base"]), float(st["new"]), "median step time"
    elif not steps.empty and "duration_ms" in steps.index and steps.loc["duration_ms", "a"]:
        x, y = float(steps.loc["duration_ms", "a"]), float(steps.loc["duration_ms", "b"])
        what = "mean step time"
    else:
        return ""
    pct = 100 * (y - x) / x
    way = "slower" if pct > 0 else "faster"
    return f": {what} {x:,.3f} -> {y:,.3f} ms ({b} {abs(pct):.1f}% {way})"


_MEASURE_COLORS = {"increasing": "#e15759", "decreasing": "#59a14f", "totals": "#4e79a7"}


def _steps(rows) -> tuple[list[float], list[float], list[str]]:
    """(base, height, colour) of each waterfall bar: a total from 0, a change from the
    running sum before it (a negative height draws down from there)."""
    base, height, color, level = [], [], [], 0.0
    for value, measure in zip(rows.delta_ms.astype(float), rows.measure):
        if measure == "relative":
            base.append(level)
            height.append(value)
            color.append(_MEASURE_COLORS["increasing" if value >= 0 else "decreasing"])
            level += value
        else:
            level = value
            base.append(0.0)
            height.append(value)
            color.append(_MEASURE_COLORS["totals"])
    return base, height, color


def waterfall_figure(comparison, top: int = 10, theme: str = "light"):
    """The median step time's change as a waterfall (ms): the base run's median step, the
    ``top`` op changes of the side that explains the steps (``Comparison.waterfall``), the
    other ops' sum, the unexplained rest, and the new run's median step; each change a bar
    from the running sum before it (bars with a ``base``: the views' plotly bundle has bar
    charts).  Hover text says each op's change, category and whether it is beyond noise."""
    rows = comparison.waterfall(top)
    a, b = (plain(label) for label in comparison.labels)
    change = comparison.step_time.get("pct")
    title = f"Median step time {a} -> {b}" + (f": {change:+.1f} %" if change is not None
                                              else "")
    fig = new_figure(theme=theme, title={"text": title}, showlegend=False,
                     xaxis={"title": {"text": ""}, "type": "category", "tickangle": -30},
                     yaxis={"title": {"text": "Time per step (ms)"}},
                     meta={"kind": "compare_waterfall", "measure": rows.measure.tolist()})
    if rows.empty:
        return fig
    base, height, color = _steps(rows)
    hover = [" · ".join(plain(p) for p in (c, n) if p) for c, n in zip(rows.category, rows.noise)]
    fig.add_bar(x=[plain(x) for x in rows.label], y=height, base=base, customdata=hover,
                marker={"color": color}, name="step time change",
                hovertemplate="%{x}: %{y:+.4f} ms<br>%{customdata}<extra></extra>")
    return fig
