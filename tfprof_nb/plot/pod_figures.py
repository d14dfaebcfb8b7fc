"""The pod chart: the step-time breakdown of every host side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..constants import CATEGORY_COLUMNS
from ._style import CATEGORY_COLORS, CATEGORY_LABELS, new_figure, plain, plain_all

__all__ = ["pod_figure"]

_MAX_STEPS_IN_MENU = 200


def _step_label(rows: pd.DataFrame, step) -> str:
    """A menu entry: the aligned step's number, and each host's own where it differs (``rows``:
    the step's rows, indexed by host)."""
    other = [(h, int(n)) for h, n in zip(rows.index, rows.host_step) if int(n) != int(step)]
    own = ", ".join(f"{plain(h)}: {n}" for h, n in other)
    return f"Step {int(step)}" + (f" ({own})" if own else "")


def _mean_label(pod: pd.DataFrame, n_steps: int, n_hosts: int) -> str:
    if pod.attrs.get("aligned") and n_hosts > 1:
        return (f"Mean of the {n_steps} steps XProf's pod viewer aligns across the {n_hosts} "
                "hosts (each host's first and last included)")
    return f"Mean of the {n_steps} step numbers every host has" if n_hosts > 1 else \
        f"Mean of the {n_steps} steps"


def pod_figure(pod: pd.DataFrame, theme: str = "light"):
    """Stacked step-time categories per host (``prof.pod``): the mean over the aligned steps,
    and a menu to show one at a time (each host's own number said where it differs)."""
    hosts = sorted(pod.host.unique()) if len(pod) else []
    steps = sorted(pod.step.unique()) if len(pod) else []
    cats = [c for c in CATEGORY_COLUMNS if c in pod.columns and pod[c].any()]
    mean = pod.groupby("host")[cats].mean().reindex(hosts) if len(pod) else None
    fig = new_figure(theme=theme, barmode="stack", hovermode="x unified",
                     title={"text": "Step time per host"},
                     xaxis={"title": {"text": "Host"}, "type": "category"},
                     yaxis={"title": {"text": "Time (ms)"}, "rangemode": "tozero"},
                     meta={"kind": "pod", "hosts": hosts, "steps": [int(s) for s in steps]})
    for c in cats:
        fig.add_bar(x=plain_all(hosts), y=mean[c].to_numpy(float), name=CATEGORY_LABELS[c],
                    marker={"color": CATEGORY_COLORS[c]},
                    hovertemplate="%{y:.3f} ms<extra>" + CATEGORY_LABELS[c] + "</extra>")
    if len(steps) > 1:
        table = pod.set_index(["step", "host"])
        buttons = [{"label": _mean_label(pod, len(steps), len(hosts)), "method": "restyle",
                    "args": [{"y": [mean[c].to_numpy(float) for c in cats]}]}]
        for s in steps[:_MAX_STEPS_IN_MENU]:
            rows = table.loc[s]  # (by host, in the table's order)
            shown = rows.reindex(hosts)
            buttons.append({"label": _step_label(rows, s), "method": "restyle",
                            "args": [{"y": [np.nan_to_num(shown[c].to_numpy(float))
                                            for c in cats]}]})
        fig.update_layout(updatemenus=[{"buttons": buttons, "x": 1, "xanchor": "right",
                                        "y": 1.15, "yanchor": "top"}])
    return fig
