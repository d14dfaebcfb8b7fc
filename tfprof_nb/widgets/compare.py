"""Comparison view of two profiles (what ``tp.compare(a, b)`` displays)."""

from __future__ import annotations

import traitlets

from ..analysis.overview import CATEGORY_COLUMNS
from ._base import BaseWidget, bundle
from .stepgraph import LABELS
from .tables import table_spec

__all__ = ["ComparisonView"]


class ComparisonView(BaseWidget):
    """Mean step time per category of both profiles side by side, op and kernel deltas."""

    _esm = bundle("compare")
    summary = traitlets.Unicode("").tag(sync=True)
    steps_graph = traitlets.Dict().tag(sync=True)
    ops_delta = traitlets.Dict().tag(sync=True)
    kernels_delta = traitlets.Dict().tag(sync=True)

    def __init__(self, comparison, **kwargs):
        steps = comparison.steps
        a, b = comparison.labels
        graph = {"steps": [str(a), str(b)],
                 "categories": [{"name": c, "label": LABELS[c]} for c in CATEGORY_COLUMNS],
                 "values": {c: [float(steps.loc[c, "a"]), float(steps.loc[c, "b"])]
                            for c in CATEGORY_COLUMNS},
                 "duration": [float(steps.loc["duration_ms", "a"]),
                              float(steps.loc["duration_ms", "b"])]}
        ops = comparison.ops.reset_index().rename(columns={"a": f"{a}_self_us",
                                                           "b": f"{b}_self_us"})
        kernels = comparison.kernels.reset_index()
        super().__init__(summary=repr(comparison).replace("\n", " · "), steps_graph=graph,
                         ops_delta=table_spec(ops.head(2000), "Op self-time deltas (us)",
                                              "operation"),
                         kernels_delta=table_spec(kernels.head(2000),
                                                  "Kernel time deltas (us)", "kernel_name")
                         if len(kernels) else {"columns": [], "data": {}}, **kwargs)
