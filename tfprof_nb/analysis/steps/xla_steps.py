"""Steps of TPU programs: from the TPU's step markers, else one per execution of the repeated
top-level XLA program, with the step-time breakdown XProf uses for TPUs.

Where a step comes from, in order:

* the ``Steps`` lines of the TensorCore planes (the runtime's step markers): one step per
  marker (its ``group_id``, else its position), on every core that has it;
* otherwise the ``XLA Modules`` lines: of the programs executed more than once on a core,
  the one with the most time (none repeats: the longest) makes the steps, one per execution
  (matched across cores by position), each lasting until the next execution on that core
  (the last: to its end), so what runs between two executions belongs to the step before.
  XProf finds no steps here; ``source`` says how ours were made.

Steps are placed by the events' times (``start_us``); their durations and breakdown are on
the device's clock, the clock of the ops' device times: a step runs from its first op to the
next step's first op on the core, and its ops' self times fill it.

The breakdown, per core then averaged over the cores that ran the step (so the categories
add up to the step's duration): ``input_ms`` (infeed and host receives: the TensorCore waits
for the host), ``output_ms`` (outfeed and host sends), ``device_collectives_ms`` (all-reduce,
all-reduce fusion, all-to-all, XProf's "crs"), ``device_compute_ms`` (every other op's self
time) and ``device_idle_ms`` (the step's time without ops).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import STEPS_LINE
from ..runtime.hostdata.host import HostData
from ..xla.tpu import categorized_ops, tensor_core_planes

__all__ = ["tpu_steps", "COLLECTIVE_CATEGORIES", "INPUT_CATEGORIES", "OUTPUT_CATEGORIES"]

COLLECTIVE_CATEGORIES = ("all-reduce", "all-reduce fusion", "all-to-all")
INPUT_CATEGORIES = ("infeed", "host recv", "host recv-done")
OUTPUT_CATEGORIES = ("outfeed", "host send", "host send-done")
_SPAN_COLUMNS = ["step", "plane", "begin_ps", "end_ps", "name"]


def _marker_spans(hd: HostData, planes: dict) -> pd.DataFrame:
    """Step spans from the TensorCores' ``Steps`` lines (event time)."""
    sp = hd.space
    ok = np.isin(sp.line_plane, list(planes)) & (np.asarray(sp.line_names, dtype=object)
                                                 == STEPS_LINE)
    rows = np.flatnonzero(ok[sp.events.line]) if len(ok) else np.empty(0, np.int64)
    if not len(rows):
        return pd.DataFrame(columns=_SPAN_COLUMNS)
    frame = pd.DataFrame({"plane": sp.line_plane[sp.events.line[rows]],
                          "begin_ps": hd.begin[rows], "end_ps": hd.end_of(rows),
                          "name": hd.name_of(rows).astype(str)})
    group, has = hd.int_stat("group_id").lookup(rows)
    ordinal = frame.groupby("plane").cumcount().to_numpy()
    frame.insert(0, "step", np.where(has, group, ordinal).astype(np.int64))
    return frame


def _program_spans(modules: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Step spans from the executions of the repeated program with the most time, and its
    name."""
    runs = modules.copy()
    runs["program"] = runs["name"].astype(str)
    per_core = runs.groupby(["program", "plane"]).size().groupby("program").max()
    time = (runs.end_ps - runs.begin_ps).groupby(runs.program).sum()
    rank = pd.DataFrame({"repeats": per_core >= 2, "t": time}).sort_values(
        ["repeats", "t"], ascending=False)
    program = str(rank.index[0])
    mine = runs[runs.program == program].sort_values(["plane", "begin_ps"], kind="stable")
    step = mine.groupby("plane").cumcount().to_numpy()
    next_begin = mine.groupby("plane").begin_ps.shift(-1)
    end = np.where(next_begin.notna(), next_begin.fillna(0), mine.end_ps).astype(np.int64)
    spans = pd.DataFrame({"step": step, "plane": mine.plane.to_numpy(),
                          "begin_ps": mine.begin_ps.to_numpy(), "end_ps": end,
                          "name": mine.module.to_numpy(dtype=object)})
    return spans, program


def _categorize(category: np.ndarray) -> np.ndarray:
    """Breakdown column of each op category."""
    out = np.full(len(category), "device_compute_ms", dtype=object)
    cats = pd.Series(category, dtype=object)
    out[cats.isin(COLLECTIVE_CATEGORIES).to_numpy()] = "device_collectives_ms"
    out[cats.isin(INPUT_CATEGORIES).to_numpy()] = "input_ms"
    out[cats.isin(OUTPUT_CATEGORIES).to_numpy()] = "output_ms"
    return out


def _assign(ops: pd.DataFrame, spans: pd.DataFrame) -> np.ndarray:
    """Index into ``spans`` of the span holding each op's start on its plane (-1: none)."""
    out = np.full(len(ops), -1, np.int64)
    for plane, mine in spans.groupby("plane"):
        mine = mine.sort_values("begin_ps")
        on = np.flatnonzero(ops.plane.to_numpy() == plane)
        begin = ops.begin_ps.to_numpy()[on]
        pos = np.searchsorted(mine.begin_ps.to_numpy(), begin, side="right") - 1
        ok = (pos >= 0) & (begin < mine.end_ps.to_numpy()[np.maximum(pos, 0)])
        out[on[ok]] = mine.index.to_numpy()[pos[ok]]
    return out


def _device_lengths(ops: pd.DataFrame, where: np.ndarray, spans: pd.DataFrame) -> np.ndarray:
    """Each span's length on the device's clock (the op times' clock): from its first op to
    the next span's first op on the core (the last: to its last op's end); spans without ops
    keep their event length."""
    inside = where >= 0
    per = pd.DataFrame({"span": where[inside], "b": ops.dev_begin.to_numpy()[inside],
                        "e": ops.dev_end.to_numpy()[inside]}).groupby("span").agg(
        b=("b", "min"), e=("e", "max")).reindex(spans.index)
    order = spans.assign(b=per.b, e=per.e).sort_values(["plane", "begin_ps"], kind="stable")
    nxt = order.groupby("plane").b.shift(-1)
    end = np.where(nxt.notna(), nxt, order.e)
    length = pd.Series(end - order.b.to_numpy(), index=order.index).reindex(spans.index)
    host = (spans.end_ps - spans.begin_ps).astype(float)
    return length.where(length.notna(), host).to_numpy(float)


def _breakdown(ops: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """Per step: start, duration and categories in ms, averaged over its cores."""
    spans = spans.reset_index(drop=True)
    where = _assign(ops, spans)
    cols = ["device_compute_ms", "device_collectives_ms", "input_ms", "output_ms"]
    inside = where >= 0
    per_span = pd.DataFrame({"span": where[inside], "col": _categorize(
        ops.category.to_numpy(object)[inside]), "ps": ops.self_ps.to_numpy()[inside]})
    table = per_span.pivot_table(index="span", columns="col", values="ps", aggfunc="sum")
    table = table.reindex(index=spans.index, columns=cols).fillna(0.0)
    length = _device_lengths(ops, where, spans)
    busy = table[cols].sum(axis=1).to_numpy()
    table["device_idle_ms"] = np.maximum(length - busy, 0)
    table["duration_ms"] = np.maximum(length, busy)
    table["step"], table["begin_ps"] = spans.step.to_numpy(), spans.begin_ps.to_numpy()
    table["step_name"] = spans.name.to_numpy(dtype=object)
    means = table.groupby("step").agg(
        begin_ps=("begin_ps", "min"), step_name=("step_name", "first"),
        **{c: (c, "mean") for c in cols + ["device_idle_ms", "duration_ms"]})
    for c in cols + ["device_idle_ms", "duration_ms"]:
        means[c] = means[c] / 1e9
    return means


def tpu_steps(hd: HostData, modules: pd.DataFrame | None) -> tuple[pd.DataFrame, str]:
    """(steps of the host's TensorCores, their source): ``step`` index, ``step_name``,
    ``begin_ps`` (relative to the host's origin), ``duration_ms`` and the breakdown columns
    (others are the caller's); empty when the host has no TPU steps."""
    planes = tensor_core_planes(hd)
    if not planes:
        return pd.DataFrame(), ""
    spans = _marker_spans(hd, planes)
    source = "device (TPU Steps line)"
    if spans.empty:
        if modules is None or modules.empty:
            return pd.DataFrame(), ""
        spans, program = _program_spans(modules)
        source = (f"inferred: each execution of the repeated XLA program '{program}' "
                  "(XLA Modules line)")
    table = _breakdown(categorized_ops(hd), spans)
    table.index = pd.Index(table.index.to_numpy(np.int64), name="step")
    return table, source
