"""The memory chart: stack, heap and free memory over time per allocator, every allocation
hoverable, the peak marked; long timelines are reduced to the extremes per time bucket."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import new_figure, plain, plain_all

__all__ = ["memory_figure", "reduce_extremes", "human_bytes", "HOVER_FIELDS", "allocator_name",
           "allocator_menu_label"]

_MIB = 2.0**20
# what hovering an allocation or deallocation shows, in order
HOVER_FIELDS = ["event", "tf_op", "requested_bytes", "allocation_bytes", "tensor_shape",
                "region_type", "data_type", "step", "in_use_bytes"]
_HOVER = ("<b>%{customdata[0]}</b> %{customdata[1]}<br>"
          "requested %{customdata[2]:,} B, allocated %{customdata[3]:,} B<br>"
          "shape %{customdata[4]} · region %{customdata[5]} · %{customdata[6]}<br>"
          "allocator step id %{customdata[7]} · in use %{customdata[8]:,} B · t=%{x:.3f} ms"
          "<extra></extra>")  # (the allocator's own step id, not a prof.steps number)
_TEXT_FIELDS = ["event", "tf_op", "tensor_shape", "region_type", "data_type"]  # (escaped)
# free memory is stacked on top but starts hidden (it often dwarfs what is in use)
_AREAS = (("stack_bytes", "Stack", "#f28e2b", True), ("heap_bytes", "Heap", "#4e79a7", True),
          ("free_bytes", "Free", "rgba(89,161,79,0.35)", "legendonly"))


def human_bytes(n: float) -> str:
    """``n`` bytes as B, KiB, MiB or GiB with three significant digits (every digit of a
    whole number from 100 on: 1,000 MiB, not 1e+03), as the pages' JavaScript writes them."""
    for unit, size in (("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10)):
        if abs(n) >= size:
            v = n / size
            return f"{v:,.0f} {unit}" if abs(v) >= 100 else f"{v:.3g} {unit}"
    return f"{n:.0f} B"


def reduce_extremes(time: np.ndarray, value: np.ndarray, max_points: int) -> np.ndarray:
    """Rows to keep so a line of ``value`` over ``time`` (sorted) keeps its shape with at most
    about ``max_points`` points: per time bucket the first, last, lowest and highest rows, and
    the global maximum.  All rows when there are few."""
    n = len(time)
    if n <= max_points:
        return np.arange(n)
    buckets = max(max_points // 4, 1)
    span = float(time[-1] - time[0]) or 1.0
    bucket = np.minimum(((time - time[0]) / span * buckets).astype(np.int64), buckets - 1)
    frame = pd.DataFrame({"b": bucket, "v": value})
    groups = frame.groupby("b", sort=True)["v"]
    keep = np.concatenate([groups.idxmin().to_numpy(), groups.idxmax().to_numpy(),
                           frame.groupby("b").head(1).index.to_numpy(),
                           frame.groupby("b").tail(1).index.to_numpy(),
                           [int(np.argmax(value))]])
    return np.unique(keep)


def memory_figure(timeline: pd.DataFrame, summary: pd.DataFrame, theme: str = "light",
                  max_points: int = 4000):
    """Memory in use of every allocator (``prof.memory_timeline``; a menu picks the
    allocator, the one with the highest peak first): stack, heap and free stacked, in MiB
    over milliseconds, fragmentation on the right axis, each allocation event a point to
    hover, the peak marked."""
    order = summary.sort_values("peak_bytes_in_use", ascending=False, kind="stable")
    fig = new_figure(theme=theme, hovermode="closest",
                     title={"text": "Memory in use"},
                     xaxis={"title": {"text": "Time (ms)"}},
                     yaxis={"title": {"text": "Memory (MiB)"}, "rangemode": "tozero"},
                     yaxis2={"title": {"text": "Fragmentation (%)"}, "overlaying": "y",
                             "side": "right", "range": [0, 100], "dtick": 20,
                             "showgrid": False},
                     meta={"kind": "memory"})
    groups = []
    many = summary.host.nunique() > 1
    for row in order.itertuples():
        name = allocator_menu_label(row.host, row.allocator, many)
        part = timeline[(timeline.host == row.host) & (timeline.allocator == row.allocator)]
        groups.append((name, _allocator_traces(fig, part, row, name, max_points)))
    if len(groups) > 1:
        total = len(fig.data)
        buttons = []
        shown = [t.visible if t.visible is not None else True for t in fig.data]
        for name, (lo, hi) in groups:
            visible = [shown[i] if lo <= i < hi else False for i in range(total)]
            buttons.append({"label": name, "method": "update", "args": [{"visible": visible}]})
        fig.update_layout(updatemenus=[{"buttons": buttons, "x": 1, "xanchor": "right",
                                        "y": 1.15, "yanchor": "top", "showactive": True}])
        first_lo, first_hi = groups[0][1]
        for i, trace in enumerate(fig.data):
            if not first_lo <= i < first_hi:
                trace.visible = False
    return fig


def allocator_name(host: str, allocator: str, many_hosts: bool) -> str:
    """An allocator as the chart's menu names it: with its host when there are several."""
    return f"{host} {allocator}" if many_hosts else str(allocator)


def allocator_menu_label(host: str, allocator: str, many_hosts: bool) -> str:
    """:func:`allocator_name` as the menu's label holds it (plain text where plotly reads
    markup)."""
    return plain(allocator_name(host, allocator, many_hosts))


def _allocator_traces(fig, part: pd.DataFrame, summary_row, name: str, max_points: int):
    """Add one allocator's traces; return the (first, last + 1) trace indices."""
    lo = len(fig.data)
    if part.empty:
        return lo, lo
    part = part.reset_index(drop=True)
    t_ms = part.time_us.to_numpy(dtype=float) / 1e3
    keep = reduce_extremes(t_ms, part.in_use_bytes.to_numpy(dtype=float), max_points)
    sel = part.iloc[keep]
    x = t_ms[keep]
    for col, label, color, visible in _AREAS:
        fig.add_scatter(x=x, y=sel[col].to_numpy(dtype=float) / _MIB, name=label,
                        mode="lines", line={"width": 0.5, "shape": "hv", "color": color},
                        stackgroup=f"mem-{lo}", fillcolor=color, legendgroup=label,
                        visible=visible,
                        hovertemplate=f"{label}: %{{y:.2f}} MiB<extra>{name}</extra>")
    fig.add_scatter(x=x, y=sel.fragmentation_pct.to_numpy(dtype=float), name="Fragmentation",
                    yaxis="y2", mode="lines", line={"width": 1, "dash": "dot",
                                                    "color": "#b07aa1"},
                    hovertemplate="fragmentation %{y:.1f}%<extra></extra>")
    custom = sel[HOVER_FIELDS].astype(object).where(sel[HOVER_FIELDS].notna(), "")
    for col in _TEXT_FIELDS:
        custom[col] = plain_all(custom[col])
    fig.add_scatter(x=x, y=sel.in_use_bytes.to_numpy(dtype=float) / _MIB, mode="markers",
                    name="Allocations", marker={"size": 4, "color": "#222222", "opacity": 0.6},
                    customdata=custom.to_numpy(), hovertemplate=_HOVER)
    peak = part.in_use_bytes.to_numpy()
    at = int(len(peak) - 1 - np.argmax(peak[::-1]))  # the last row at the highest value
    fig.add_scatter(x=[t_ms[at]], y=[peak[at] / _MIB], mode="markers+text", name="Peak",
                    marker={"symbol": "star", "size": 14, "color": "#e15759"},
                    text=[f"peak {human_bytes(peak[at])}"], textposition="top center",
                    hovertemplate=f"peak {int(summary_row.peak_bytes_in_use):,} B in use "
                    f"at %{{x:.3f}} ms, allocator step id {int(summary_row.peak_step)}"
                    "<extra></extra>")
    return lo, len(fig.data)
