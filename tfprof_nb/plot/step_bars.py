"""Stacked bars per device and step (the GPU and TPU charts): each device's steps side by
side on one numeric axis, their names above them, at most MAX_STEP_TICKS step numbers on
the bottom one (a multicategory axis writes every step number: hundreds of them collide), and
the time outside every step apart, on its own scale (seconds beside steps of milliseconds)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import subplots

__all__ = ["MAX_STEP_TICKS", "stacked_per_step", "step_ticks", "step_word"]

MAX_STEP_TICKS = 20  # step numbers on the axis, at most
OUTSIDE_TITLE = "Outside the steps"


def step_word(step: int, windows: dict) -> str:
    """A step's number, or the words of a window (``windows``: {negative step: words})."""
    return str(step) if step >= 0 else windows.get(step, str(step))


def _nice_stride(span: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, ... at least ``span``."""
    scale = 1
    while True:
        for n in (1, 2, 2.5, 5):
            if n * scale >= span and float(n * scale).is_integer():
                return int(n * scale)
        scale *= 10


def device_x(labels: np.ndarray) -> tuple[np.ndarray, list, np.ndarray]:
    """Where each row's bar stands (rows of one device in their order, the devices one after
    the other with a gap of 2 % of the bars), the devices in order and each one's centre."""
    codes, devices = pd.factorize(labels)
    sizes = np.bincount(codes, minlength=len(devices))
    gap = max(1, int(round(0.02 * len(labels))))
    starts = np.concatenate([[0], np.cumsum(sizes + gap)[:-1]]).astype(float)
    within = pd.Series(codes).groupby(codes).cumcount().to_numpy()
    return starts[codes] + within, list(devices), starts + (sizes - 1) / 2


def step_ticks(x: np.ndarray, steps: np.ndarray, windows: dict) -> tuple[list, list]:
    """Ticks (x, words) of bars at ``x`` for ``steps``: left to right, a device's first bar
    or a step number that is a multiple of a round stride, each at least the span over
    MAX_STEP_TICKS from the one before, so never more than MAX_STEP_TICKS + 1 of them and
    none crowding another across two devices."""
    if not len(x):
        return [], []
    spacing = (float(x.max()) - float(x.min()) + 1) / MAX_STEP_TICKS
    stride = _nice_stride(spacing)
    order = np.argsort(x, kind="stable")
    first = np.r_[True, np.diff(x[order]) != 1]
    vals, words, last = [], [], -np.inf
    for i, starts in zip(order, first):
        wanted = starts or (steps[i] >= 0 and steps[i] % stride == 0)
        if wanted and x[i] - last >= spacing:
            vals.append(float(x[i]))
            words.append(step_word(int(steps[i]), windows))
            last = x[i]
    return vals, words


def stacked_per_step(table: pd.DataFrame, labels: pd.Series, parts, outside_step: int,
                     windows: dict, theme: str = "light"):
    """Stacked bars of ``table``'s rows (``labels``: their devices' names, escaped): a trace
    per (column in us, label, colour) of ``parts``, in ms; rows of step ``outside_step``
    apart on the right (their own y axis), the others per device and step on the left."""
    away = (table.step == outside_step).to_numpy() if len(table) else np.zeros(0, bool)
    cols = 2 if away.any() else 1
    fig = subplots(theme, rows=1, cols=cols, horizontal_spacing=0.1,
                   column_widths=[0.8, 0.2] if cols == 2 else None,
                   subplot_titles=("", OUTSIDE_TITLE) if cols == 2 else None)
    fig.update_layout(barmode="stack", legend={"orientation": "h", "x": 0, "y": -0.2,
                                               "yanchor": "top"}, margin={"b": 96})
    inside, names = table[~away], labels[~away].to_numpy(dtype=object)
    x, devices, centres = device_x(names)
    steps = inside.step.to_numpy()
    said = [f"step {s}" if s >= 0 else step_word(int(s), windows) for s in steps]
    custom = np.column_stack([names, said]) if len(inside) else None
    for col, label, color in parts:
        fig.add_bar(x=x, y=(inside[col] / 1e3).to_numpy(float), name=label, legendgroup=label,
                    marker={"color": color}, customdata=custom, width=0.8, row=1, col=1,
                    hovertemplate="%{customdata[0]}, %{customdata[1]}: %{y:.3f} ms"
                    "<extra>" + label + "</extra>")
    _step_axes(fig, x, steps, windows, devices, centres)
    if cols == 2:
        _outside_bars(fig, table[away], labels[away], parts)
    return fig


def _step_axes(fig, x, steps, windows, devices, centres) -> None:
    """The per-step bars' axes: the bounded step numbers below, the devices' names above
    their bars."""
    vals, words = step_ticks(x, steps, windows)
    fig.update_xaxes(tickmode="array", tickvals=vals, ticktext=words, showgrid=False,
                     zeroline=False, title_text="Step" if (steps >= 0).any() else "",
                     row=1, col=1,
                     range=[float(x.min()) - 0.6, float(x.max()) + 0.6] if len(x) else None)
    fig.update_yaxes(title_text="Time (ms)", rangemode="tozero", row=1, col=1)
    shown = _device_names(devices)
    for name, centre in zip(shown, centres):
        if name:
            fig.add_annotation(text=name, x=float(centre), xref="x", y=1.0, yref="paper",
                               yanchor="bottom", showarrow=False, font={"size": 11})


def _device_names(devices: list) -> list:
    """The devices' names as the chart writes them above their bars ("/device:" left out):
    all of them where they fit across about 650 px of 7 px letters, else every k-th one
    ("" for the others)."""
    names = [str(d).replace("/device:", "") for d in devices]
    widest = max((len(n) for n in names), default=0) * 7 + 12
    every = max(1, int(np.ceil(len(names) * widest / 650)))
    return [n if i % every == 0 else "" for i, n in enumerate(names)]


def _outside_bars(fig, outside: pd.DataFrame, labels: pd.Series, parts) -> None:
    """Each device's time outside every step, stacked by the same parts, on its own axis."""
    names = labels.str.replace("/device:", "", regex=False).tolist()  # (escaped)
    for col, label, color in parts:
        fig.add_bar(x=names, y=(outside[col] / 1e3).to_numpy(float), name=label,
                    legendgroup=label, showlegend=False, marker={"color": color},
                    hovertemplate="%{x}: %{y:,.3f} ms<extra>" + label + "</extra>",
                    row=1, col=2)
    fig.update_xaxes(type="category", row=1, col=2)
    fig.update_yaxes(title_text="Time (ms)", rangemode="tozero", row=1, col=2)
