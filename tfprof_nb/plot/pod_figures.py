"""The pod chart: the step-time breakdown of every host side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..constants import CATEGORY_COLUMNS
from ._style import (CATEGORY_COLORS, CATEGORY_LABELS, new_figure, plain, plain_all,
                     titled_with_note)

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
        return f"Mean of the {n_steps} steps XProf's pod viewer aligns across the {n_hosts} hosts"
    return f"Mean of the {n_steps} step numbers every host has" if n_hosts > 1 else \
        f"Mean of the {n_steps} steps"


def _title(pod: pd.DataFrame, n_hosts: int, steps: list, bars_ms: float,
           page_mean: dict | None) -> str:
    """The chart's title: what its bars are the mean of and, where it is another figure than
    the overview's average step time (other steps counted), that one with its scope
    (``page_mean``: its value in ms and scope, prof.measures'; ``bars_ms``: the bars' mean)."""
    if len(steps) < 2:
        return "Step time per host"
    label = _mean_label(pod, len(steps), n_hosts)
    title = f"Step time per host: {label[0].lower()}{label[1:]}"
    if not page_mean or (n_hosts == 1 and abs(bars_ms - page_mean["value"]) < 5e-4):
        return title
    if n_hosts == 1:
        title += " (the first and last included, as XProf's pod viewer)"
    return titled_with_note(title, f"The overview's average step time, "
                                   f"{page_mean['value']:.3f} ms, is {page_mean['scope']}")


def pod_figure(pod: pd.DataFrame, theme: str = "light", page_mean: dict | None = None):
    """Stacked step-time categories per host (``prof.pod``): the mean over the aligned steps,
    and a menu to show one at a time (each host's own number said where it differs); the
    title says what the bars are the mean of and, with ``page_mean`` (the overview's mean's
    value and scope), the overview's figure where it counts other steps."""
    hosts = sorted(pod.host.unique()) if len(pod) else []
    steps = sorted(pod.step.unique()) if len(pod) else []
    cats = [c for c in CATEGORY_COLUMNS if c in pod.columns and pod[c].any()]
    mean = pod.groupby("host")[cats].mean().reindex(hosts) if len(pod) else None
    fig = new_figure(theme=theme, barmode="stack", hovermode="x unified",
                     title={"text": _title(pod, len(hosts), steps, float(
                         mean.sum(axis=1).mean()) if mean is not None else 0.0, page_mean)},
                     xaxis={"title": {"text": "Host"}, "type": "category"},
                     yaxis={"title": {"text": "Time (ms)"}, "rangemode": "tozero"},
                     meta={"kind": "pod", "hosts": hosts, "steps": [int(s) for s in steps]})
    for c in cats:
        fig.add_bar(x=plain_all(hosts), y=mean[c].to_numpy(float), name=CATEGORY_LABELS[c],
                    marker={"color": CATEGORY_COLORS[c]},
                    hovertemplate="%{y:.3f} ms<extra>" + CATEGORY_LABELS[c] + "</extra>")
    if len(steps) > 1:
        table = pod.set_index(["step", "host"])
        # (each entry sets the title too: the bars are one step's, not the mean's)
        buttons = [{"label": _mean_label(pod, len(steps), len(hosts)), "method": "update",
                    "args": [{"y": [mean[c].to_numpy(float) for c in cats]},
                             {"title.text": fig.layout.title.text}]}]
        for s in steps[:_MAX_STEPS_IN_MENU]:
            rows = table.loc[s]  # (by host, in the table's order)
            shown = rows.reindex(hosts)
            label = _step_label(rows, s)
            buttons.append({"label": label, "method": "update",
                            "args": [{"y": [np.nan_to_num(shown[c].to_numpy(float))
                                            for c in cats]},
                                     {"title.text": f"Step time per host: {label[0].lower()}"
                                                    f"{label[1:]} alone"}]})
        fig.update_layout(updatemenus=[{"buttons": buttons, "x": 1, "xanchor": "right",
                                        "y": 1.15, "yanchor": "top"}])
    return fig
