"""The hardware per step: each device's SM clock and power, each host's CPU, as the mean of
the samples inside each step (the max dotted), from ``prof.counters``
(:func:`..analysis.findings.hardware_steps.step_means`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import PALETTE, plain, subplots

__all__ = ["HARDWARE_PANELS", "hardware_figure"]

# (counter, the panel's title with its unit) of the panels, in order (those with samples)
HARDWARE_PANELS = (("sm_clock_mhz", "SM clock (MHz)"), ("power_w", "Power (W)"),
                   ("cpu_util_pct", "Machine CPU (%)"))


def _label(row_host: str, device: str, many_hosts: bool) -> str:
    return plain(f"{row_host} {device}" if many_hosts else device)


def hardware_figure(per_step: pd.DataFrame, theme: str = "light", steps=None):
    """One panel per counter of :data:`HARDWARE_PANELS` that has samples in the steps (step
    on x): per device (or host) the mean of its samples in each step, and their max dotted.
    ``per_step``: ``step_means`` (host, device, counter, step, unit, samples, mean, max);
    ``steps``: every step number, so that a line breaks at a step without samples instead
    of joining its neighbours across it."""
    shown = [(c, t) for c, t in HARDWARE_PANELS
             if len(per_step) and (per_step["counter"] == c).any()]
    fig = subplots(theme, rows=max(len(shown), 1), cols=1, shared_xaxes=True,
                   vertical_spacing=0.08)
    fig.update_layout(title={"text": "Hardware per step (mean of the samples in each step; "
                             "max dotted)"}, meta={"kind": "hardware"},
                      height=140 + 150 * max(len(shown), 1), showlegend=True)
    many_hosts = per_step["host"].nunique() > 1 if len(per_step) else False
    colors: dict[str, str] = {}
    for row, (counter, title) in enumerate(shown, start=1):
        rows = per_step[per_step["counter"] == counter]
        for (host, device), dev in rows.groupby(["host", "device"], sort=True, observed=True):
            label = _label(str(host), str(device), many_hosts)
            color = colors.setdefault(label, PALETTE[len(colors) % len(PALETTE)])
            if steps is not None:  # (a step without samples: a gap in the line)
                dev = dev.set_index("step").reindex(np.unique(np.asarray(steps))) \
                    .rename_axis("step").reset_index()
            x = dev["step"].to_numpy()
            fig.add_scatter(x=x, y=dev["mean"].to_numpy(float), name=label, mode="lines+markers",
                            legendgroup=label, showlegend=row == 1 or label not in
                            {t.name for t in fig.data}, line={"color": color},
                            customdata=dev["samples"].to_numpy(), row=row, col=1,
                            hovertemplate="step %{x}: mean %{y:.1f} (%{customdata} samples)"
                            "<extra>" + label + "</extra>")
            fig.add_scatter(x=x, y=dev["max"].to_numpy(float), name=f"{label} max",
                            mode="lines", legendgroup=label, showlegend=False, row=row, col=1,
                            line={"color": color, "dash": "dot", "width": 1},
                            hovertemplate="step %{x}: max %{y:.1f}<extra>" + label + "</extra>")
        fig.update_yaxes(title={"text": title}, rangemode="tozero", row=row, col=1)
    fig.update_xaxes(title={"text": "Step"}, row=max(len(shown), 1), col=1)
    return fig
