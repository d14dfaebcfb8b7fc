"""Step charts: the step-time breakdown per step, and input wait per step."""

from __future__ import annotations


import numpy as np
import pandas as pd

from ..analysis.steps.xprof_counted import xprof_count
from ..constants import CATEGORY_COLUMNS
from ._style import (CATEGORY_COLORS, CATEGORY_LABELS, MULTILINE_TITLE, new_figure, plain,
                     plain_all, subplots, titled_with_note)
from .step_bars import MAX_STEP_TICKS

__all__ = ["MAX_BARS", "STEP_TIME_TITLE", "step_time_figure", "input_pipeline_figure",
           "say_the_pages_input_wait"]

# Past this many steps a per-step chart stacks areas (one path per category) instead of bars:
# plotly draws each bar as an SVG element, and 2,500 steps of 9 categories took 2 s to draw.
MAX_BARS = 300
# the step-time chart's title: its categories are XProf's rule (the headline measures that read
# the devices' own time, input wait among them, may give another figure: the page says whose)
STEP_TIME_TITLE = "Step-time breakdown (XProf's rule)"


def _add_stacked(fig, x, y, name: str, color: str, index, hover: str, **where) -> None:
    """One stacked category per step: a bar each, or past MAX_BARS steps a filled area (the
    same hover, customdata and click)."""
    common = {"x": x, "y": y, "name": name, "customdata": index, "hovertemplate": hover}
    if len(x) <= MAX_BARS:
        fig.add_bar(marker={"color": color}, **common, **where)
    else:
        fig.add_scatter(mode="lines", stackgroup=where.get("col", 1), fillcolor=color,
                        line={"width": 0.5, "color": color}, **common, **where)


def _step_labels(steps: pd.DataFrame) -> list[str]:
    """x labels: step numbers, prefixed with the host when there are several."""
    numbers = [str(s) for s in steps.index]
    if steps.host.nunique() > 1:
        return [f"{plain(h)} {n}" for h, n in zip(steps.host, numbers)]
    return numbers


def _step_meta(steps: pd.DataFrame) -> dict:
    """What a click on a bar needs to find the step: host, start and end (us) per bar."""
    return {"kind": "steps", "hosts": [str(h) for h in steps.host],
            "steps": [int(s) for s in steps.index],
            "start_us": [float(v) for v in steps.start_us],
            "end_us": [float(s + d * 1e3) for s, d in zip(steps.start_us, steps.duration_ms)]}


def _left_out_words(counted: np.ndarray, steps: pd.DataFrame, marked: bool) -> str:
    """The subtitle of a step-time chart some of whose steps XProf's figures leave out."""
    n, k = len(counted), int(counted.sum())
    if steps.host.nunique() < 2:
        if marked:
            return f"faded: the {n - k} of {n} steps XProf's figures leave out (the first and last)"
        return (f"XProf's figures count {k} of these {n} steps (they leave out the first and "
                "last)")
    # (a pod: XProf's step times are its aligned steps' slowest host's; its breakdown's shares
    # read the first host's steps alone)
    why = "each host's first and last, and those not aligned across the hosts"
    read = pd.unique(xprof_count(steps).rows.host.astype(str))
    first = f"; its breakdown reads {plain(read[0])}'s alone" if len(read) == 1 else ""
    if marked:
        return f"faded: the {n - k} of {n} steps XProf's step times leave out ({why}){first}"
    return f"XProf's step times count {k} of these {n} steps (they leave out {why}){first}"


def step_time_figure(steps: pd.DataFrame, theme: str = "light", title: str | None = None,
                     counted: np.ndarray | None = None):
    """Stacked step-time categories per step (``prof.steps``): one trace per category, step
    numbers on x, milliseconds on y; hovering a step shows its whole breakdown.  ``counted``
    (a bool per step): the steps XProf's figures count; the others are drawn faded and the
    subtitle says so (past MAX_BARS steps, areas: the subtitle alone)."""
    x = _step_labels(steps)
    heading = {"text": plain(title) if title else STEP_TIME_TITLE}
    if not title and len(steps) and str(steps.source.iloc[0]).startswith("inferred"):
        n = len(x)
        heading["text"] = (f"{STEP_TIME_TITLE[:-1]}, on the {n} step{'s' * (n != 1)} inferred "
                           "here: XProf itself finds none)")
    out = None if counted is None or counted.all() else ~np.asarray(counted, bool)
    if out is not None:
        heading["subtitle"] = {"text": _left_out_words(~out, steps, len(x) <= MAX_BARS)}
    fig = new_figure(theme=theme, barmode="stack", hovermode="x unified", title=heading,
                     xaxis={"title": {"text": "Step"}, "type": "category",
                            "nticks": MAX_STEP_TICKS},  # (plotly spaces them)
                     yaxis={"title": {"text": "Time (ms)"}, "rangemode": "tozero"},
                     meta=_step_meta(steps))
    index = np.arange(len(steps))
    faded = {} if out is None else {"marker_opacity": np.where(out, 0.35, 1.0)}
    if not len(steps):  # (no steps: a sentence, not an empty chart of ten legend entries)
        fig.add_annotation(text="No steps in this profile", showarrow=False, xref="paper",
                           yref="paper", x=0.5, y=0.5, font={"size": 14})
        return fig
    for col in CATEGORY_COLUMNS:
        values = steps[col].to_numpy(dtype=float) if len(steps) else np.empty(0)
        if len(values) and not values.any():
            continue  # a category no step has stays out of the legend
        _add_stacked(fig, x, values, CATEGORY_LABELS[col], CATEGORY_COLORS[col], index,
                     "%{y:.3f} ms<extra>" + CATEGORY_LABELS[col] + "</extra>")
        if faded and len(x) <= MAX_BARS:
            fig.data[-1].update(faded)
    if len(steps):
        note = np.where(out, " (not in XProf's figures)", "") if out is not None else \
            np.full(len(steps), "")
        fig.add_scatter(x=x, y=steps.duration_ms.to_numpy(dtype=float), mode="markers",
                        name="Step time", marker={"symbol": "line-ew", "size": 1,
                                                  "opacity": 0}, customdata=index,
                        showlegend=False, text=note.tolist(),
                        hovertemplate="<b>%{y:.3f} ms</b>%{text}<extra>Step time</extra>")
    return fig


# what the host-side chart says where it has no input time (the breakdown reads tf.data's
# events only)
NO_HOST_SIDE_INPUT = "No tf.data events: the host-side<br>analysis reads tf.data's events,<br>" \
    "which this profile has none of"

def input_pipeline_figure(ip, steps: pd.DataFrame, theme: str = "light",
                          wait: np.ndarray | None = None, source: str = ""):
    """Input wait per step (stacked with the rest of the step) and the host-side breakdown of
    input time (``prof.input_pipeline``); ``wait``: the input wait of each step in ms (by
    default the step breakdown's ``input_ms``), ``source``: whose rule it is, in the title."""
    title = f"Input wait per step ({source})" if source else "Input wait per step"
    fig = subplots(theme, rows=1, cols=2, column_widths=[0.68, 0.32], horizontal_spacing=0.12,
                   subplot_titles=(title, "Host-side input time (whole profile)"))
    # the legend at the foot of the figure (above the chart it would cover the subplot
    # titles; just under the axis, the tick labels of a pod's steps, "host step", run into it)
    fig.update_layout(barmode="stack", meta={**fig.layout.meta, **_step_meta(steps)},
                      legend={"orientation": "h", "x": 0, "yref": "container", "y": 0,
                              "yanchor": "bottom"},
                      margin={"b": 140})
    x = _step_labels(steps)
    if wait is None:
        wait = steps.input_ms.to_numpy(dtype=float) if len(steps) else np.empty(0)
    index = np.arange(len(steps))
    if len(steps) and np.isnan(wait).all():  # unknown: the steps alone, no 0 ms input bars
        _add_stacked(fig, x, steps.duration_ms.to_numpy(dtype=float),
                     "Step time (input unknown)", "#bab0ac", index,
                     "%{y:.3f} ms<extra>step</extra>", row=1, col=1)
    else:
        rest = np.maximum(steps.duration_ms.to_numpy(dtype=float) - wait, 0.0) \
            if len(steps) else np.empty(0)
        _add_stacked(fig, x, wait, "Waiting for input", CATEGORY_COLORS["input_ms"], index,
                     "%{y:.3f} ms<extra>input</extra>", row=1, col=1)
        _add_stacked(fig, x, rest, "Rest of the step", "#bab0ac", index,
                     "%{y:.3f} ms<extra>rest</extra>", row=1, col=1)
    host = ip.host_side
    fig.add_bar(x=plain_all(host.category), y=(host.time_us / 1e3).tolist(),
                name="Host-side input", marker={"color": "#4e79a7"}, showlegend=False,
                hovertemplate="%{x}: %{y:.3f} ms<extra></extra>", row=1, col=2)
    if not (host.time_us > 0).any():  # (bars of 0 ms would read as an input of no cost)
        fig.add_annotation(text=NO_HOST_SIDE_INPUT, xref="x2 domain", yref="y2 domain",
                           x=0.5, y=0.6, showarrow=False, font={"size": 12})
    fig.update_xaxes(title_text="Step", type="category", nticks=MAX_STEP_TICKS, row=1, col=1)
    if len(steps) and steps.host.nunique() > 1:  # long "host step" labels: slanted to the
        # left, as the right chart's, so that the last one stays clear of that chart's first
        fig.update_xaxes(tickangle=-30, row=1, col=1)
    fig.update_yaxes(title_text="Time (ms)", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="Time (ms)", rangemode="tozero", row=1, col=2)
    fig.update_xaxes(tickangle=-30, row=1, col=2)
    return fig


def say_the_pages_input_wait(fig, wait: np.ndarray, steps: pd.DataFrame, row):
    """``fig`` (:func:`input_pipeline_figure`) titled with the bars' share and the page's
    input-wait measure (``row``, prof.measures') with its scope, where the two differ (every
    step drawn, the measure over the steps XProf counts or, in a pod, aligns)."""
    total = float(steps.duration_ms.sum()) if len(steps) else 0.0
    if row is None or total <= 0:
        return fig
    drawn = 100 * float(np.nansum(wait)) / total
    if f"{drawn:.1f}" == f"{row['value']:.1f}":
        return fig
    whose = " of every host" if steps.host.nunique() > 1 else ""
    text = titled_with_note(f"These bars, every step{whose}: {drawn:.1f}% waiting for input",
                            f"The overview's {row['value']:.1f}% is over {row['scope']}")
    fig.update_layout(title={"text": text, **MULTILINE_TITLE},
                      margin={"t": 90 + 16 * text.count("<br>")})
    return fig
