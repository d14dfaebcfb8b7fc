"""The memory view: memory in use over time per allocator (stack, heap, free, fragmentation),
every allocation hoverable, the peak marked, and the breakdown of what is live at the peak
(its op column "tf_op" on TensorFlow profiles, "op" on JAX ones)."""

from __future__ import annotations

import pandas as pd
import traitlets

from ..analysis.findings.advice import is_device_allocator
from ..analysis.tf.memory import LABELS, UNMAPPED_OP, readable
from ..plot.memory_figures import (allocator_menu_label, allocator_name, human_bytes,
                                   memory_figure)
from ._view import View, ViewState
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["MemoryTimeline", "MemoryTimelineView", "labelled", "op_words", "peak_words"]


def labelled(table: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """A memory table as views print it: allocators by their names for people (a number
    said as what it is: "TPU 1 (index on host)"), no "INVALID" data type or "unknown" shape."""
    labels = summary.attrs.get(LABELS, {})
    out = readable(table)
    if len(out) and labels:
        keys = zip(out.host.astype(str), out.allocator.astype(str))
        out["allocator"] = [labels.get(k, k[1]) for k in keys]
    return out


def _op_column(framework: str) -> str:
    """The breakdown's column of the op an allocation is for: XProf's "tf_op" on TensorFlow
    (and unknown) profiles, "op" on JAX ones (no TensorFlow op there)."""
    return "op" if framework == "jax" else "tf_op"


def op_words(table: pd.DataFrame, framework: str) -> pd.DataFrame:
    """``table`` (a memory breakdown) with its op column named for the profile's framework
    (:func:`_op_column`); its values as they are."""
    return table.rename(columns={"tf_op": _op_column(framework)})


def peak_words(summary: pd.DataFrame, breakdown: pd.DataFrame) -> dict[str, str]:
    """Each allocator's peak as a sentence, keyed by its name in the chart's menu: the peak the
    chart marks, its share of the capacity and how much of it is the breakdown's
    :data:`UNMAPPED_OP` row (memory no allocation in the profile accounts for)."""
    labels = summary.attrs.get(LABELS, {})
    many = summary.host.nunique() > 1
    unmapped = breakdown[breakdown.tf_op == UNMAPPED_OP].groupby(
        ["host", "allocator"], observed=True).allocation_bytes.sum()
    out = {}
    for row in summary.itertuples():
        label = labels.get((str(row.host), str(row.allocator)), row.allocator)
        name = allocator_name(row.host, label, many)
        peak, cap = float(row.peak_bytes_in_use), float(row.memory_capacity_bytes)
        text = f"Peak of {name}: {human_bytes(peak)} in use at {row.peak_time_us / 1e3:,.1f} ms"
        text += (f", {100 * peak / cap:.1f}% of the allocator's {human_bytes(cap)} capacity."
                 if cap > 0 else ".")
        held = float(unmapped.get((row.host, row.allocator), 0))
        if held > 0 and peak > 0:
            such = " (a model's weights)" if is_device_allocator(str(row.allocator)) else ""
            text += (f" {human_bytes(held)} of it ({100 * held / peak:.1f}%) is the "
                     f"breakdown's '{UNMAPPED_OP}' row: XProf's name for memory in use at the "
                     "peak that no allocation in the profile accounts for, such as memory "
                     f"allocated before the capture began{such}.")
        out[allocator_menu_label(row.host, label, many)] = text
    return out


class MemoryTimelineView(View):
    """Memory in use over time (``prof.plot.memory()``: a menu picks the allocator) and the
    allocations live at each allocator's peak (``prof.memory_breakdown``)."""

    tab, title, bundle, position = "memory", "Memory", "memory", 60
    figure = FigureTrait()
    breakdown = TableTrait()
    peaks = traitlets.Dict().tag(sync=True)  # menu name -> the allocator's peak in words

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.memory_timeline) else (
            "No memory events in this profile (on CPU only some allocators and workloads "
            "record them; TF_CPU_ALLOCATOR_USE_BFC=true makes TensorFlow's do).")

    @classmethod
    def state(cls, prof) -> ViewState:
        summary = prof.memory_summary
        breakdown = labelled(prof.memory_breakdown, summary)
        if breakdown.host.nunique() > 1:
            breakdown["allocator"] = breakdown.host + " " + breakdown.allocator
        figure = memory_figure(labelled(prof.memory_timeline, summary),
                               labelled(summary, summary))
        breakdown = op_words(breakdown.drop(columns=["host"]), prof.framework.name)
        # (the allocator's own step counter, not prof.steps' step: the hover says the same)
        breakdown = breakdown.rename(columns={"step": "allocator_step_id"})
        return ViewState({"figure": figure,
                          "peaks": peak_words(summary, prof.memory_breakdown),
                          "breakdown": TableData(breakdown, "Memory breakdown at peak",
                                                 _op_column(prof.framework.name))})


MemoryTimeline = MemoryTimelineView  # its name in DESIGN.md's contract: an alias, without a warning
