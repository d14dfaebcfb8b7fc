"""Comparison view of two profiles (what ``tp.compare(a, b)`` displays): the median step
time's change as a waterfall of the ops that add up to it, the mean step per category, the
ops matched across the runs with their change per step and noise band, the HLO diff and the
kernels."""

from __future__ import annotations

import pandas as pd
import traitlets

from ._base import BaseWidget
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["ComparisonView"]

_OP_COLUMNS = ["host_or_device", "operation", "a_op", "b_op", "matched_by", "category", "a",
               "b", "delta", "band_low", "band_high", "noise", "share_pct", "per_step",
               "program_name"]


def _ops_table(comparison) -> pd.DataFrame:
    """The matched op table with the runs' labels in its column names (us per step)."""
    a, b = comparison.labels
    ops = comparison.ops.reset_index()
    ops = ops[[c for c in _OP_COLUMNS if c in ops.columns]]
    return ops.rename(columns={"a": f"{a}_us", "b": f"{b}_us", "delta": "delta_us",
                               "band_low": "band_low_us", "band_high": "band_high_us",
                               "a_op": f"{a}_op", "b_op": f"{b}_op"})


def _table(df: pd.DataFrame, title: str, key: str) -> TableData:
    return TableData(df.head(2000), title, key) if len(df) else TableData(pd.DataFrame())


class ComparisonView(BaseWidget):
    """The step-time waterfall, categories side by side, matched ops with bands, HLO diff,
    kernel deltas."""

    bundle = "compare"
    summary = traitlets.Unicode("").tag(sync=True)
    waterfall = FigureTrait()
    figure = FigureTrait()
    ops_delta = TableTrait()
    hlo_diff = TableTrait()
    kernels_delta = TableTrait()

    def __init__(self, comparison, **kwargs):
        from ..plot.compare_figures import compare_figure, waterfall_figure

        kernels = comparison.kernels.reset_index()
        super().__init__(
            summary=repr(comparison),
            waterfall=waterfall_figure(comparison), figure=compare_figure(comparison),
            ops_delta=_table(_ops_table(comparison), "Ops matched across the runs: self "
                             "time per step (us): the median of the steps, or total / steps "
                             "where per_step says so (a run without steps: its total); noise "
                             "band, share of the step change",
                             "operation"),
            hlo_diff=_table(comparison.hlo, "HLO diff: what changed in the XLA programs "
                            "(time_us: per step)", "program"),
            kernels_delta=_table(kernels, "Kernel time per step (us): total / steps (a "
                                 "mean; a run without steps: its total), by kernel and the "
                                 "framework op it runs for (an op's fusions launching one "
                                 "kernel add up)", "kernel_name"),
            **kwargs)
