"""The step-time graph: stacked step-time categories per step."""

from __future__ import annotations

import traitlets

from ..analysis.overview import CATEGORY_COLUMNS
from ._base import BaseWidget, bundle

__all__ = ["StepTimeGraph", "step_graph_spec"]

LABELS = {"device_compute_ms": "Device compute", "device_to_device_ms": "Device to device",
          "device_collectives_ms": "Device collectives", "host_compute_ms": "Host compute",
          "kernel_launch_ms": "Kernel launch", "input_ms": "Input", "output_ms": "Output",
          "compilation_ms": "Compilation", "other_ms": "All others"}


def step_graph_spec(steps) -> dict:
    """Steps as the graph's payload: one list per category, steps in order."""
    many_hosts = steps.host.nunique() > 1
    return {"steps": [f"{h} {n}" if many_hosts else str(n)
                      for h, n in zip(steps.host, steps.step_name)],
            "categories": [{"name": c, "label": LABELS[c]} for c in CATEGORY_COLUMNS],
            "values": {c: [float(v) for v in steps[c]] for c in CATEGORY_COLUMNS},
            "duration": [float(v) for v in steps.duration_ms]}


class StepTimeGraph(BaseWidget):
    """Stacked bars of the step-time categories per step; ``clicked_step`` is the row of
    ``prof.steps`` last clicked."""

    _esm = bundle("stepgraph")
    step_graph = traitlets.Dict().tag(sync=True)
    clicked_step = traitlets.Int(-1).tag(sync=True)

    def __init__(self, prof, **kwargs):
        super().__init__(step_graph=step_graph_spec(prof.steps), **kwargs)
