"""Comparison view of two profiles (what ``tp.compare(a, b)`` displays)."""

from __future__ import annotations

import pandas as pd
import traitlets

from ._base import BaseWidget
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["ComparisonView"]


class ComparisonView(BaseWidget):
    """Mean step time per category of both profiles side by side, op and kernel deltas."""

    bundle = "compare"
    summary = traitlets.Unicode("").tag(sync=True)
    figure = FigureTrait()
    ops_delta = TableTrait()
    kernels_delta = TableTrait()

    def __init__(self, comparison, **kwargs):
        from ..plot.compare import compare_figure

        a, b = comparison.labels
        ops = comparison.ops.reset_index().rename(columns={"a": f"{a}_self_us",
                                                           "b": f"{b}_self_us"})
        kernels = comparison.kernels.reset_index()
        super().__init__(summary=repr(comparison).replace("\n", " · "),
                         figure=compare_figure(comparison),
                         ops_delta=TableData(ops.head(2000), "Op self-time deltas (us)",
                                             "operation"),
                         kernels_delta=TableData(kernels.head(2000),
                                                 "Kernel time deltas (us)", "kernel_name")
                         if len(kernels) else TableData(pd.DataFrame()), **kwargs)
