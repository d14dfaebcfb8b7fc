"""A monitored run (``tp.Monitor``'s history): the median step time of each window over the
run (x: the step each window began at), regressions flagged against the baseline and its
threshold, and the step-time breakdown of each window, stacked (x: the window, so that each
bar shows however far apart the windows are)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..constants import CATEGORY_COLUMNS
from ._style import CATEGORY_COLORS, CATEGORY_LABELS, plain, subplots

__all__ = ["monitor_figure"]

_REGRESSION_COLOR = "#c4432b"


def _hover_rows(done: pd.DataFrame) -> list[list]:
    """customdata of the step-time points: window, last step, % against the baseline, top
    op (profile strings as text: markup escaped)."""
    vs = done.vs_baseline_pct.to_numpy(dtype=float)
    return [[int(w), int(last), "" if not np.isfinite(v) else f" ({v:+.1f} % vs baseline)",
             plain(op) or "none"]
            for w, last, v, op in zip(done.window, done.last_step, vs, done.top_op)]


def _add_step_time(fig, done: pd.DataFrame) -> None:
    x, y = done.first_step.to_numpy(), done.median_step_ms.to_numpy(dtype=float)
    fig.add_scatter(x=x, y=y, mode="lines+markers", name="Median step time",
                    marker={"size": 8, "color": CATEGORY_COLORS["device_compute_ms"]},
                    customdata=_hover_rows(done), row=1, col=1,
                    hovertemplate="Window %{customdata[0]}, steps %{x}-%{customdata[1]}<br>"
                                  "median step %{y:.3f} ms%{customdata[2]}<br>"
                                  "top op: %{customdata[3]}<extra></extra>")
    bad = done[done.regressed]
    fig.add_scatter(x=bad.first_step.to_numpy(), y=bad.median_step_ms.to_numpy(dtype=float),
                    mode="markers", name="Regression", row=1, col=1,
                    marker={"symbol": "x", "size": 14, "color": _REGRESSION_COLOR,
                            "line": {"width": 1, "color": _REGRESSION_COLOR}},
                    customdata=bad.window.to_numpy(), visible=True if len(bad) else
                    "legendonly", hovertemplate="Window %{customdata}: regression"
                                                "<extra></extra>")


def _add_lines(fig, done: pd.DataFrame, baseline_ms, threshold_ms) -> None:
    """The baseline and the threshold above which a window is a regression, across the
    windows' steps."""
    if baseline_ms is None or done.empty:
        return
    ends = [int(done.first_step.min()), int(done.last_step.max())]
    for value, name, dash in ((baseline_ms, "Baseline", "dot"),
                              (threshold_ms, "Regression threshold", "dash")):
        fig.add_scatter(x=ends, y=[value, value], mode="lines", name=name, row=1, col=1,
                        line={"dash": dash, "width": 1.5,
                              "color": _REGRESSION_COLOR if dash == "dash" else "#888888"},
                        hovertemplate=f"{name}: %{{y:.3f}} ms<extra></extra>")


def _add_breakdown(fig, done: pd.DataFrame) -> None:
    for col in CATEGORY_COLUMNS:
        values = done[col].to_numpy(dtype=float)
        if not len(values) or not np.nan_to_num(values).any():
            continue  # a category no window has stays out of the legend
        label = CATEGORY_LABELS[col]
        fig.add_bar(x=[str(w) for w in done.window], y=values, name=label, row=2, col=1,
                    marker={"color": CATEGORY_COLORS[col]},
                    customdata=np.column_stack([done.window, done.first_step,
                                                done.last_step]),
                    hovertemplate="Window %{customdata[0]} (steps %{customdata[1]}-"
                                  "%{customdata[2]}): %{y:.3f} ms<extra>" + label + "</extra>")


def monitor_figure(history: pd.DataFrame, baseline_ms: float | None = None,
                   threshold_ms: float | None = None, theme: str = "light"):
    """The windows of ``history`` that were analysed with steps: median step time per window
    (line and markers over the steps, regressions as red crosses, the baseline and the
    regression threshold as lines) over the mean step-time breakdown per window (stacked
    bars, one per window).  A point's ``customdata`` starts with its window."""
    fig = subplots(theme, rows=2, cols=1, vertical_spacing=0.2,
                   row_heights=[0.55, 0.45],
                   subplot_titles=("Median step time per window",
                                   "Step-time breakdown per window (mean per step)"))
    # the legend under the chart: above it, it would cover the subplot titles
    fig.update_layout(barmode="stack", height=640, uirevision="monitor", hovermode="closest",
                      legend={"orientation": "h", "x": 0, "y": -0.12, "yanchor": "top"},
                      margin={"t": 40, "b": 120})
    fig.update_xaxes(title={"text": "Step (each window's first)"}, row=1, col=1)
    fig.update_xaxes(title={"text": "Window"}, type="category", row=2, col=1)
    fig.update_yaxes(title={"text": "Time (ms)"}, rangemode="tozero")
    done = history[(history.status == "analysed") & history.median_step_ms.notna()] \
        if len(history) else history
    if done.empty:
        fig.add_annotation(text="No window analysed yet", showarrow=False, x=0.5, y=0.5,
                           xref="paper", yref="paper", font={"size": 14})
        return fig
    _add_step_time(fig, done)
    _add_lines(fig, done, baseline_ms, threshold_ms)
    _add_breakdown(fig, done)
    return fig
