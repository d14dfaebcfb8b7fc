"""A monitored run (``tp.Monitor``'s history): with the step timer's rows, every step's time
over the whole run (the windows' steps, spikes, recompiles and dropped windows marked); the
median step time of each window over the run (x: the step each window began at),
regressions flagged against the baseline and its threshold; and the step-time breakdown of
each window, stacked (x: the window, so that each bar shows however far apart the windows
are)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..constants import CATEGORY_COLUMNS
from ._style import CATEGORY_COLORS, CATEGORY_LABELS, plain, subplots

__all__ = ["monitor_figure"]

_REGRESSION_COLOR = "#c4432b"
_STEP_COLOR = "#7f8c9a"
_MAX_POINTS = 4000  # a longer run's line shows each bucket's slowest step
_MAX_MARKERS = 2000  # spikes and recompiles drawn: the slowest ones


def _every_step(steps: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The steps the line draws: all, or the slowest of each bucket of ``n`` steps."""
    if len(steps) <= _MAX_POINTS:
        return steps, 1
    n = -(-len(steps) // (_MAX_POINTS // 2))
    slowest = steps.duration_ms.groupby(np.arange(len(steps)) // n).idxmax()
    return steps.loc[slowest.to_numpy()], n


def _step_points(fig, rows: pd.DataFrame, name: str, marker: dict, row: int,
                 mode: str = "markers", **extra) -> None:
    """One trace of steps; a point's ``customdata`` starts with its window (-1: none)."""
    flags = [plain(f) for f in rows["flag"]]
    fig.add_scatter(x=rows.step.to_numpy(), y=rows.duration_ms.to_numpy(dtype=float),
                    mode=mode, name=name, marker=marker, row=row, col=1,
                    customdata=np.column_stack([rows.window.to_numpy(), flags])
                    if len(rows) else None,
                    hovertemplate="Step %{x}: %{y:.3f} ms by the loop's clock<br>"
                                  "%{customdata[1]}"
                                  "<extra>" + name + "</extra>", **extra)


def _add_every_step(fig, steps: pd.DataFrame, history: pd.DataFrame, row: int) -> None:
    """Every step's time; the windows' steps, spikes and recompiles marked; dropped windows
    as crosses on the axis at the step they were due."""
    line, n = _every_step(steps)
    name = "Step time" if n == 1 else f"Step time (slowest of {n})"
    _step_points(fig, line, name, {"color": _STEP_COLOR}, row, mode="lines",
                 line={"width": 1, "color": _STEP_COLOR})
    marks = (("Steps in windows", steps.in_window.to_numpy(),
              {"color": CATEGORY_COLORS["device_compute_ms"], "size": 5}),
             ("Spike", steps["flag"].str.contains("spike").to_numpy(),
              {"color": _REGRESSION_COLOR, "size": 7, "symbol": "circle-open"}),
             ("Compile", steps["flag"].str.contains("compile").to_numpy(),
              {"color": "#8e44ad", "size": 9, "symbol": "triangle-up"}))
    for label, mask, marker in marks:
        rows = steps[mask]
        if len(rows) > _MAX_MARKERS:
            rows = rows.nlargest(_MAX_MARKERS, "duration_ms").sort_values("step")
        if len(rows):
            _step_points(fig, rows, label, marker, row)
    dropped = history[history.status == "dropped"] if len(history) else history
    if len(dropped):
        fig.add_scatter(x=dropped.first_step.to_numpy(), y=np.zeros(len(dropped)),
                        mode="markers", name="Dropped window", row=row, col=1,
                        marker={"symbol": "x", "size": 9, "color": "#888888"},
                        customdata=np.column_stack([np.full(len(dropped), -1),
                                                    dropped.window.to_numpy()]),
                        hovertemplate="Window %{customdata[1]} dropped (due at step %{x})"
                                      "<extra></extra>")


def _hover_rows(done: pd.DataFrame) -> list[list]:
    """customdata of the step-time points: window, last step, % against the baseline, top
    op (profile strings as text: markup escaped)."""
    vs = done.vs_baseline_pct.to_numpy(dtype=float)
    return [[int(w), int(last), "" if not np.isfinite(v) else f" ({v:+.1f} % vs baseline)",
             plain(op) or "none"]
            for w, last, v, op in zip(done.window, done.last_step, vs, done.top_op)]


def _add_step_time(fig, done: pd.DataFrame, row: int) -> None:
    x, y = done.first_step.to_numpy(), done.median_step_ms.to_numpy(dtype=float)
    fig.add_scatter(x=x, y=y, mode="lines+markers", name="Median step time",
                    marker={"size": 8, "color": CATEGORY_COLORS["device_compute_ms"]},
                    customdata=_hover_rows(done), row=row, col=1,
                    hovertemplate="Window %{customdata[0]}, steps %{x}-%{customdata[1]}<br>"
                                  "median step %{y:.3f} ms%{customdata[2]}<br>"
                                  "top op: %{customdata[3]}<extra></extra>")
    bad = done[done.regressed]
    fig.add_scatter(x=bad.first_step.to_numpy(), y=bad.median_step_ms.to_numpy(dtype=float),
                    mode="markers", name="Regression", row=row, col=1,
                    marker={"symbol": "x", "size": 14, "color": _REGRESSION_COLOR,
                            "line": {"width": 1, "color": _REGRESSION_COLOR}},
                    customdata=bad.window.to_numpy(), visible=True if len(bad) else
                    "legendonly", hovertemplate="Window %{customdata}: regression"
                                                "<extra></extra>")


def _add_lines(fig, done: pd.DataFrame, baseline_ms, threshold_ms, row: int) -> None:
    """The baseline and the threshold above which a window is a regression, across the
    windows' steps."""
    if baseline_ms is None or done.empty:
        return
    ends = [int(done.first_step.min()), int(done.last_step.max())]
    for value, name, dash in ((baseline_ms, "Baseline", "dot"),
                              (threshold_ms, "Regression threshold", "dash")):
        fig.add_scatter(x=ends, y=[value, value], mode="lines", name=name, row=row, col=1,
                        line={"dash": dash, "width": 1.5,
                              "color": _REGRESSION_COLOR if dash == "dash" else "#888888"},
                        hovertemplate=f"{name}: %{{y:.3f}} ms<extra></extra>")


def _add_breakdown(fig, done: pd.DataFrame, row: int) -> None:
    for col in CATEGORY_COLUMNS:
        values = done[col].to_numpy(dtype=float)
        if not len(values) or not np.nan_to_num(values).any():
            continue  # a category no window has stays out of the legend
        label = CATEGORY_LABELS[col]
        fig.add_bar(x=[str(w) for w in done.window], y=values, name=label, row=row, col=1,
                    marker={"color": CATEGORY_COLORS[col]},
                    customdata=np.column_stack([done.window, done.first_step,
                                                done.last_step]),
                    hovertemplate="Window %{customdata[0]} (steps %{customdata[1]}-"
                                  "%{customdata[2]}): %{y:.3f} ms<extra>" + label + "</extra>")


def monitor_figure(history: pd.DataFrame, baseline_ms: float | None = None,
                   threshold_ms: float | None = None, theme: str = "light",
                   steps: pd.DataFrame | None = None, period: str = ""):
    """The windows of ``history`` that were analysed with steps: median step time per window
    (line and markers over the steps, regressions as red crosses, the baseline and the
    regression threshold as lines) over the mean step-time breakdown per window (stacked
    bars, one per window; XProf's rule, titled so: the windows' ``input_pct`` may read the
    devices' own time).  With the step timer's ``steps`` (``Monitor.step_times``), a first
    panel shows every step's time (``period``: the spikes' period in words, in its title).
    A point's ``customdata`` starts with its window (-1: none)."""
    timed = steps is not None  # (even empty: a view's figure keeps its height as steps come)
    titles = ("Median step time per window",
              "Step-time breakdown per window (mean per step XProf counts, XProf's rule)")
    if timed:  # (the loop's timer: a window's last step holds its profiler's stop, flagged)
        titles = ("Every step's time, by the loop's clock (the windows' figures below: their "
                  f"profiles'){': ' + period if period else ''}",) + titles
    fig = subplots(theme, rows=len(titles), cols=1, vertical_spacing=0.2 if not timed else 0.12,
                   row_heights=[0.55, 0.45] if not timed else [0.4, 0.33, 0.27],
                   subplot_titles=titles)
    top = 2 if timed else 1  # the row of the median per window
    # the legend under the chart: above it, it would cover the subplot titles
    fig.update_layout(barmode="stack", height=640 if not timed else 900, uirevision="monitor",
                      hovermode="closest",
                      legend={"orientation": "h", "x": 0, "y": -0.12 if not timed else -0.08,
                              "yanchor": "top"},
                      margin={"t": 40, "b": 120})
    fig.update_xaxes(title={"text": "Step (each window's first)"}, row=top, col=1)
    fig.update_xaxes(title={"text": "Window"}, type="category", row=top + 1, col=1)
    fig.update_yaxes(title={"text": "Time (ms)"}, rangemode="tozero")
    done = history[(history.status == "analysed") & history.median_step_ms.notna()] \
        if len(history) else history
    if done.empty:
        fig.add_annotation(text="No window analysed yet", showarrow=False, x=0.5,
                           y=0.5 if not timed else 0.4, xref="paper", yref="paper",
                           font={"size": 14})
    else:
        _add_step_time(fig, done, top)
        _add_lines(fig, done, baseline_ms, threshold_ms, top)
        _add_breakdown(fig, done, top + 1)
    if timed:  # drawn after the windows' traces: the first trace stays the median per window
        fig.update_xaxes(title={"text": "Step"}, row=1, col=1)
        if len(steps):
            _add_every_step(fig, steps, history, 1)
    return fig
