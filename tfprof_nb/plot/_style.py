"""The look every tfprof_nb chart shares: colours of the step-time categories, a layout that
reads in light and dark themes, axis titles with units."""

from __future__ import annotations

import html

__all__ = ["CATEGORY_LABELS", "CATEGORY_COLORS", "PALETTE", "base_layout", "new_figure",
           "plain", "plain_all", "styled", "subplots"]

# One colour per step-time category, the same in every chart and view.
CATEGORY_LABELS = {
    "device_compute_ms": "Device compute", "device_to_device_ms": "Device to device",
    "device_collectives_ms": "Device collectives", "host_compute_ms": "Host compute",
    "kernel_launch_ms": "Kernel launch", "input_ms": "Input", "output_ms": "Output",
    "compilation_ms": "Compilation", "other_ms": "All others", "device_idle_ms": "Device idle"}
CATEGORY_COLORS = {
    "device_compute_ms": "#4e79a7", "device_to_device_ms": "#76b7b2",
    "device_collectives_ms": "#59a14f", "host_compute_ms": "#f28e2b",
    "kernel_launch_ms": "#edc948", "input_ms": "#e15759", "output_ms": "#b07aa1",
    "compilation_ms": "#9c755f", "other_ms": "#bab0ac", "device_idle_ms": "#d7d7d7"}
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac"]

_THEMES = {
    "light": {"font": "#222222", "grid": "rgba(128,128,128,0.25)", "line": "#888888",
              "hover_bg": "#ffffff"},
    "dark": {"font": "#dddddd", "grid": "rgba(160,160,160,0.25)", "line": "#999999",
             "hover_bg": "#222222"},
}


def plain(value) -> str:
    """A profile string (an op, kernel, host or allocator name) as plain text where plotly
    reads markup (labels, tick labels, legend and menu entries, titles, hover text): plotly
    reads ``<b>``, ``<a href>``, ``<br>``... there, so ``&``, ``<`` and ``>`` are escaped and
    the string is shown as it is."""
    return html.escape(str(value), quote=False)


def plain_all(values) -> list[str]:
    """:func:`plain` of every value."""
    return [plain(v) for v in values]


def base_layout(theme: str = "light", **extra) -> dict:
    """A layout on a transparent background (the page's colour shows through) with the text
    and grid colours of ``theme`` ("light" or "dark"); the views recolour it to the page."""
    colors = _THEMES.get(theme)
    if colors is None:
        raise ValueError(f"theme must be 'light' or 'dark', not {theme!r}")
    axis = {"gridcolor": colors["grid"], "zerolinecolor": colors["grid"],
            "linecolor": colors["line"], "automargin": True}
    layout = {
        "paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(0,0,0,0)",
        "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 12,
                 "color": colors["font"]},
        "colorway": PALETTE, "margin": {"l": 60, "r": 20, "t": 76, "b": 50},
        "title": {"x": 0, "y": 0.985, "yanchor": "top", "font": {"size": 14}},
        "xaxis": dict(axis), "yaxis": dict(axis),
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.01, "x": 0},
        "hoverlabel": {"bgcolor": colors["hover_bg"], "font": {"color": colors["font"]}},
        "meta": {"tfprof_theme": theme},
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    notes = str(layout["title"].get("text", "")).count("<br>")
    if notes and "y" not in extra.get("title", {}):
        layout["title"].update(MULTILINE_TITLE)
        if "t" not in extra.get("margin", {}):  # (room for every line above the legend)
            layout["margin"]["t"] = max(layout["margin"]["t"], 62 + 15 * notes)
    return layout


# where a title of several lines goes: its first line's top a padding below the figure's top
# (anchored at its top by its first line, such a title rose above the figure and lost half of
# that line)
MULTILINE_TITLE = {"y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 14}}
# characters of a title's note a line (plotly does not wrap a title: a long note ran past the
# figure's right edge)
NOTE_WIDTH = 110


def titled_with_note(title: str, note: str, width: int = NOTE_WIDTH) -> str:
    """``title`` (markup, its texts escaped already) with ``note`` (plain text, escaped here)
    below it in small type, wrapped to lines of ``width`` characters."""
    import textwrap

    lines = textwrap.wrap(note, width, break_long_words=False, break_on_hyphens=False)
    return f"{title}<br><sup>" + "<br>".join(plain(line) for line in lines) + "</sup>"


def new_figure(data=None, theme: str = "light", **layout):
    """A plotly Figure with tfprof_nb's layout."""
    import plotly.graph_objects as go

    return go.Figure(data=data or [], layout=base_layout(theme, **layout))


def styled(fig, theme: str = "light", **layout):
    """``fig`` with tfprof_nb's layout, every axis of every subplot included."""
    base = base_layout(theme, **layout)
    axis = base.pop("xaxis")
    base.pop("yaxis")
    fig.update_layout(base)
    fig.update_xaxes(**axis)
    fig.update_yaxes(**axis)
    return fig


def subplots(theme: str = "light", **kwargs):
    """``plotly.subplots.make_subplots(**kwargs)`` with tfprof_nb's layout."""
    from plotly.subplots import make_subplots

    return styled(make_subplots(**kwargs), theme)
