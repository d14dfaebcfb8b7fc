"""The source flame chart: device time by the user's Python stack, as an icicle (the root,
all device ops, on top; each frame's callees under it, widths by device time)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import PALETTE, new_figure, plain, plain_all

__all__ = ["source_flame_figure", "summed_devices"]

_ROW_PX = 26  # px per level of the stack
_NO_SOURCE_COLOR = "#bab0ac"
_HOVER = ("<b>%{customdata[0]}</b><br>%{customdata[1]}<br>%{customdata[2]:,.3f} ms "
          "(%{customdata[3]:.1f}% of device op time), self %{customdata[4]:,.3f} ms"
          "<extra></extra>")


def _frames(n: int) -> str:
    return "frame" if n == 1 else f"{n} frames"


def _where(tree: pd.DataFrame) -> list:
    """Each node's location as the hover says it (file:line:column, or why none)."""
    out = []
    for file, line, column, why, depth in tree[
            ["file", "line", "column", "no_source", "depth"]].itertuples(index=False):
        if not depth:
            out.append("the user's code and the rest")
        elif why:
            out.append(why)
        else:
            out.append(file + "".join(f":{v}" for v in (line, column) if v >= 0))
    return out


def _colors(tree: pd.DataFrame) -> list:
    """A colour per function (the same function alike at every level), grey without one."""
    keys = tree.function.where(tree.function != "", tree.file).to_numpy(dtype=object)
    codes = pd.factorize(pd.Series(keys, dtype=object))[0]
    colors = np.array(PALETTE, dtype=object)[codes % len(PALETTE)]
    colors[(tree.no_source != "").to_numpy()] = _NO_SOURCE_COLOR
    colors[(tree.depth == 0).to_numpy()] = "#d7d7d7"
    return list(colors)


def summed_devices(duty: pd.DataFrame) -> int:
    """How many devices' op time the source figures sum (``prof.duty_cycle``'s busy ones; 1
    without any): said where more than one, as their times add up beyond the profile."""
    return int((duty.busy_us > 0).sum()) if len(duty) else 1


def source_flame_figure(tree: pd.DataFrame, theme: str = "light", devices: int = 1,
                        why_none: str = ""):
    """An icicle of device time by Python stack from :func:`~tfprof_nb.analysis.xla.source_lines.
    stack_tree` (``prof.source_stacks`` as a tree): widths are inclusive device time; hover
    says each frame's location, time, share and self time; the title names the outer frames
    left out (``attrs["left_out"]``).  Labels are escaped (function names such as
    ``<module>`` are text, not markup); ``devices``: how many devices' time it sums (said
    where more than one: their times add up beyond the profile's length); ``why_none``: why
    no device time is placed (the title says it instead of "0.000 ms")."""
    depth = int(tree.depth.max()) + 1 if len(tree) else 1
    total_ms = float(tree.time_us.iloc[0]) / 1e3 if len(tree) else 0.0
    left_out = tree.attrs.get("left_out", [])
    summed = f", summed over {devices} devices" if devices > 1 else ""
    title = f"Device time by Python stack ({total_ms:,.3f} ms of device ops{summed})"
    if why_none or not total_ms:
        title = "Device time by Python stack: none to show" + \
            (f"<br><sub>{plain(why_none)}</sub>" if why_none else "")
    if left_out:
        ends = left_out[:1] + left_out[1:][-1:]
        title += (f"<br><sub>left out: the outer {_frames(len(left_out))} every stack shares ("
                  + plain(" ... ".join(ends)) + ")</sub>")
    fig = new_figure(theme=theme, title={"text": title},
                     height=120 + _ROW_PX * min(depth, 24), margin={"l": 10, "r": 10,
                                                                    "t": 70 if left_out else 50,
                                                                    "b": 10},
                     uniformtext={"minsize": 10, "mode": "hide"},
                     meta={"kind": "source_flame", "total_ms": total_ms,
                           "left_out": list(left_out)})
    if tree.empty:
        return fig
    custom = np.column_stack([
        plain_all(tree.name), plain_all(_where(tree)), tree.time_us.to_numpy(float) / 1e3,
        tree.time_pct.to_numpy(float), tree.self_time_us.to_numpy(float) / 1e3])
    fig.add_trace({"type": "icicle", "ids": tree.node.tolist(),
                   "parents": tree.parent.fillna("").tolist(), "labels": plain_all(tree.name),
                   "values": tree.time_us.to_numpy(float), "branchvalues": "total",
                   "customdata": custom, "hovertemplate": _HOVER,
                   "marker": {"colors": _colors(tree)}, "sort": False,
                   "tiling": {"orientation": "v"}, "textinfo": "label",
                   "maxdepth": -1})
    return fig
