"""The roofline chart, XProf's: each HLO op's achieved FLOP rate against its bottleneck
arithmetic intensity (FLOPs per byte of the memory that bounds it), under the device's
rooflines (HBM's, and the on-chip memories' XProf draws: a bandwidth slope, then peak
compute), so that an op's height under the roof of its bound is its roofline efficiency."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.xla.device_peaks import counted_on_chip
from ._style import PALETTE, new_figure, plain, plain_all

__all__ = ["roofline_figure", "roofs"]

_GIGA = 1e9
_MAX_CATEGORIES = 9
_ROOF_COLOURS = ("#e15759", "#b07aa1", "#76b7b2", "#9c755f", "#f28e2b")  # HBM's first
_HOVER = ("<b>%{customdata[0]}</b> (%{customdata[1]})<br>"
          "%{customdata[2]:,} device events (XProf's occurrences), self time "
          "%{customdata[3]:,.1f} us<br>"
          "%{customdata[7]} %{x:.3g} FLOP/byte, %{y:.4g} GFLOP/s<br>"
          "bound by %{customdata[4]}, roofline efficiency %{customdata[5]:.1f}%"
          "%{customdata[6]}<extra></extra>")
# where an op reads above its roof: XProf's rule (the table's) counts its FLOPs once for each
# device event it runs (a memset beside a GEMM's kernel), the XLA tab's statement says which
OVER_THE_ROOF = ("<br>above 100%: XProf's rule counts the op's FLOPs once for each of its "
                 "device events")


def _roof(peak_flops: float, bandwidth: float, x_lo: float, x_hi: float) -> tuple[list, list]:
    """A roofline's points (GFLOP/s) from ``x_lo`` to ``x_hi`` FLOP/byte, its ridge
    included."""
    ridge = peak_flops / bandwidth
    xs = sorted({x_lo, min(max(ridge, x_lo), x_hi), x_hi})
    ys = [min(peak_flops, x * bandwidth) / _GIGA for x in xs]
    return xs, ys


def roofs(peaks) -> list[tuple[str, float]]:
    """(memory, bytes/s) of each roofline XProf's roofline chart draws: HBM's, then a GPU's
    shared memory/L1, a TPU's VMEM reads and writes (where merged) and CMEM's (where it has
    one), each with a known bandwidth."""
    out = [("HBM", peaks.memory_bw_bytes_per_s)]
    if peaks.shared_memory_bw_bytes_per_s > 0:
        out.append(("Shm/L1", peaks.shared_memory_bw_bytes_per_s))
    return out + list(counted_on_chip(peaks).items())


def _add_roof(fig, peaks, intensities: np.ndarray) -> None:
    """Each roofline (:func:`roofs`) over the ops' intensities and the ridge points (widened
    4x either side), and HBM's ridge point's vertical line."""
    memories = roofs(peaks)
    ridges = [peaks.peak_flops_per_s / bw for _, bw in memories]
    lo = float(min(intensities.min(initial=1.0), *ridges) / 4)
    hi = float(max(intensities.max(initial=1.0), *ridges) * 4)
    for i, (memory, bandwidth) in enumerate(memories):
        xs, ys = _roof(peaks.peak_flops_per_s, bandwidth, lo, hi)
        fig.add_scatter(x=xs, y=ys, mode="lines", name=f"Roofline ({memory})",
                        line={"color": _ROOF_COLOURS[i % len(_ROOF_COLOURS)], "width": 2,
                              "dash": "solid" if i == 0 else "dash"},
                        hovertemplate=f"attainable %{{y:.4g}} GFLOP/s at %{{x:.3g}} FLOP per "
                                      f"{memory} byte<extra>roofline</extra>")
    ridge = ridges[0]
    fig.add_scatter(x=[ridge, ridge], y=[lo * peaks.memory_bw_bytes_per_s / _GIGA / 1e3,
                                         peaks.peak_flops_per_s / _GIGA],
                    mode="lines", name=f"HBM ridge point ({ridge:.3g} FLOP/byte)",
                    line={"dash": "dot", "width": 1, "color": "#888888"},
                    hovertemplate="ridge point %{x:.3g} FLOP/byte<extra></extra>")


def _add_ops(fig, ops: pd.DataFrame) -> None:
    """The ops as markers sized by self time, one trace per category (the largest
    ``_MAX_CATEGORIES``, then "other")."""
    time = ops.total_self_time_us.to_numpy(float)
    size = 6 + 24 * np.sqrt(time / time.max()) if len(time) and time.max() > 0 else 8
    ops = ops.assign(_size=size)
    by_time = ops.groupby("category").total_self_time_us.sum().sort_values(ascending=False)
    top = list(by_time.index[:_MAX_CATEGORIES])
    groups = [(c, ops[ops.category == c]) for c in top]
    rest = ops[~ops.category.isin(top)]
    if len(rest):
        groups.append(("other", rest))
    for i, (category, part) in enumerate(groups):
        fig.add_scatter(x=part._x.to_numpy(float),
                        y=part.flop_rate_flops_per_s.to_numpy(float) / _GIGA,
                        mode="markers", name=plain(category),
                        marker={"size": part._size.to_numpy(float),
                                "color": PALETTE[i % len(PALETTE)], "opacity": 0.75,
                                "line": {"width": 0.5, "color": "#ffffff"}},
                        customdata=_custom(part), hovertemplate=_HOVER)


def _with_x(table: pd.DataFrame, known: bool) -> pd.DataFrame:
    """``table`` with each row's place on the x axis (``_x``) and what it is (``_x_is``): as
    XProf's chart, FLOPs per byte of the row's bottleneck (the memory that bounds it; all its
    bytes when compute does), or per byte accessed where no peaks are known."""
    if known and "bottleneck_arithmetic_intensity_flops_per_byte" in table:
        return table.assign(_x=table.bottleneck_arithmetic_intensity_flops_per_byte,
                            _x_is="bottleneck intensity")
    return table.assign(_x=table.arithmetic_intensity_flops_per_byte, _x_is="intensity")


def _placed(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows a log-log chart can place (positive intensity and rate)."""
    return rows[(rows._x > 0) & (rows.flop_rate_flops_per_s > 0)]


def roofline_figure(table: pd.DataFrame, theme: str = "light", title: str | None = None):
    """HLO ops (``prof.roofline``) as points on log axes: arithmetic intensity (FLOP/byte)
    against achieved GFLOP/s, sized by self time, coloured by category, the whole program as a
    star; the device's roofline and ridge point when its peaks are known
    (``attrs["peaks"]``)."""
    peaks = table.attrs.get("peaks")
    known = bool(peaks is not None and peaks.known)
    name = f" ({plain(peaks.device)})" if known and peaks.device else ""
    axis = "Bottleneck arithmetic intensity (FLOP per byte of the bounding memory)" \
        if known else "Arithmetic intensity (FLOP/byte)"
    fig = new_figure(theme=theme, hovermode="closest",
                     title={"text": plain(title) if title else f"Roofline{name}"},
                     xaxis={"title": {"text": axis}, "type": "log"},
                     yaxis={"title": {"text": "Achieved rate (GFLOP/s)"}, "type": "log"},
                     meta={"kind": "roofline"}, margin={"r": 200},
                     legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1,
                             "yanchor": "top"})
    table = _with_x(table, known)
    is_program = table.category == "Program"
    ops, program = _placed(table[~is_program]), table[is_program]
    if ops.empty and _placed(program).empty:  # (a program row alone: its time all idle)
        reasons = "; ".join(table.attrs.get("reasons", [])) or "no XLA ops with FLOPs"
        fig.add_annotation(text=f"Nothing to place on the roofline: {plain(reasons)}",
                           showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        return fig
    if known:
        x = np.concatenate([ops._x.to_numpy(float), program._x.to_numpy(float)])
        _add_roof(fig, peaks, x[np.isfinite(x) & (x > 0)])
    _add_ops(fig, ops)
    program = _placed(program)
    if len(program):
        fig.add_scatter(x=program._x.to_numpy(float),
                        y=program.flop_rate_flops_per_s.to_numpy(float) / _GIGA,
                        mode="markers", name="Whole program",
                        marker={"symbol": "star", "size": 16, "color": "#222222"},
                        customdata=_custom(program), hovertemplate=_HOVER)
    if not known:
        fig.add_annotation(text="Device peaks unknown: prof.set_device_peaks(...) draws the "
                                "roofline", showarrow=False, x=0, y=1.0, xref="paper",
                           yref="paper", xanchor="left", yanchor="bottom")
    return fig


def _custom(part: pd.DataFrame) -> np.ndarray:
    cols = part[["operation", "category", "occurrences", "total_self_time_us", "bound_by",
                 "roofline_efficiency_pct"]].astype(object)
    cols = cols.where(cols.notna(), "")
    for col in ("operation", "category", "bound_by"):
        cols[col] = plain_all(cols[col])
    over = pd.to_numeric(part.roofline_efficiency_pct, errors="coerce").gt(100).to_numpy()
    cols["over"] = np.where(over, OVER_THE_ROOF, "")
    cols["x_is"] = part._x_is.to_numpy(object)
    return cols.to_numpy()
