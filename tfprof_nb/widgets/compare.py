"""Comparison view of two profiles (what ``tp.compare(a, b)`` displays)."""

from __future__ import annotations

import traitlets

from ._base import BaseWidget, bundle
from ._view import figure_json
from .tables import table_spec

__all__ = ["ComparisonView"]


class ComparisonView(BaseWidget):
    """Mean step time per category of both profiles side by side, op and kernel deltas."""

    _esm = bundle("compare")
    summary = traitlets.Unicode("").tag(sync=True)
    figure = traitlets.Dict().tag(sync=True)
    ops_delta = traitlets.Dict().tag(sync=True)
    kernels_delta = traitlets.Dict().tag(sync=True)

    def __init__(self, comparison, **kwargs):
        from ..plot.compare import compare_figure

        a, b = comparison.labels
        ops = comparison.ops.reset_index().rename(columns={"a": f"{a}_self_us",
                                                           "b": f"{b}_self_us"})
        kernels = comparison.kernels.reset_index()
        super().__init__(summary=repr(comparison).replace("\n", " · "),
                         figure=figure_json(compare_figure(comparison)),
                         ops_delta=table_spec(ops.head(2000), "Op self-time deltas (us)",
                                              "operation"),
                         kernels_delta=table_spec(kernels.head(2000),
                                                  "Kernel time deltas (us)", "kernel_name")
                         if len(kernels) else {"columns": [], "data": {}}, **kwargs)
