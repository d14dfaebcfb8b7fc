"""The op stats view ("TensorFlow stats" on TensorFlow profiles, "Op stats" on others): where
self time goes by op and type (pies, idle in or out), the name-scope icicle, and the table
(with or without its IDLE rows, as the pies).  Device ops XProf types "Unknown" (HLO ops with
no framework op) show their HLO category; on JAX profiles XProf's eager column ("Eager" or
"Function": a TensorFlow word) reads "execution": "jit" (an op of a compiled program) or
"eager"."""

from __future__ import annotations

import pandas as pd
import traitlets

from ..analysis.tf.op_stats import IDLE, typed_by_hlo
from ..plot.op_figures import op_stats_figure
from ..plot.op_words import idle_note, xprof_device_op_notes
from ._view import View, ViewState
from .graph_targets import op_targets
from .hlo_graph_view import GraphRequests
from .traits import FigureTrait, TableData, TableTrait, rates_as_shown

__all__ = ["OpStatsView", "idle_note", "op_stats_title", "share_words", "typed_op_stats",
           "JAX_EXECUTION"]

# XProf's eager column in JAX's words: its ops run in a compiled (jitted) program, or eagerly
JAX_EXECUTION = {"Function": "jit", "Eager": "eager"}


def share_words(ops: pd.DataFrame, hosts: int, devices: int, with_idle: bool) -> str:
    """What the op stats table's shares are of: "(self time %: host rows of the host's whole
    time, device rows of the devices' whole time, IDLE included)", each side named as the
    profile has it (``hosts``, ``devices``: how many; a side without rows left out)."""
    of = "whole time" if with_idle else "op time"
    sides = set(ops.host_or_device) if len(ops) else set()
    parts = []
    if "Host" in sides:
        whose = "the host's" if hosts <= 1 else f"the {hosts} hosts'"
        parts.append(f"host rows of {whose} {of}")
    if "Device" in sides:
        whose = "the device's" if devices == 1 else "the devices'"
        parts.append(f"device rows of {whose} {of}")
    idle = "IDLE included" if with_idle else "IDLE left out"
    return f"(self time %: {', '.join(parts + [idle])})"


def op_stats_title(prof) -> str:
    """"TensorFlow stats" on a TensorFlow profile, "Op stats" on any other (JAX)."""
    return "TensorFlow stats" if prof.framework.name == "tensorflow" else "Op stats"


def typed_op_stats(prof, include_idle: bool = True) -> pd.DataFrame:
    """The op stats table as views show it: its device ops typed by the profile's HLO where
    XProf says "Unknown" (:func:`~tfprof_nb.analysis.tf.op_stats.typed_by_hlo`), the eager
    column said in the profile's framework's words (:func:`execution_words`); the tensor-core
    share only where the devices are GPUs."""
    table = typed_by_hlo(prof.op_stats_table(include_idle=include_idle), prof.hlo_stats)
    if prof.result("environment")["device_type"] != "GPU":  # (XProf: GPUs' tensor cores only)
        table = table.drop(columns=["tensor_core_pct"], errors="ignore")
    return execution_words(table, prof.framework.name)


def execution_words(ops: pd.DataFrame, framework: str) -> pd.DataFrame:
    """``ops`` with its eager column left empty on IDLE rows (idle time is no op, run eagerly
    or not) and, on a JAX profile, named "execution" with JAX's words ("jit", "eager") for
    XProf's ("Function", "Eager").  A copy; the numbers are untouched."""
    if "eager" not in ops:
        return ops
    out = ops.copy()
    words = out["eager"].astype(object)
    if framework == "jax":
        words = words.map(lambda w: JAX_EXECUTION.get(w, w))
    out["eager"] = words.where(out["type"] != IDLE, "")
    return out.rename(columns={"eager": "execution"}) if framework == "jax" else out


def _table(ops: pd.DataFrame, title: str) -> TableData:
    """The op stats as the view's table shows them: rates in GFLOP/s and GiB/s, as XProf's."""
    frame, labels = rates_as_shown(ops)
    return TableData(frame, title, "operation", labels=labels)


def _scopes(prof) -> pd.DataFrame:
    """The name-scope tree as the icicle reads it: scope, parent (missing at the roots), name,
    self time and allocated bytes."""
    table = prof.scope_stats(side="all")
    parent = table["parent"].where(table["parent"].notna(), None)
    return pd.DataFrame({"scope": table["scope"].astype(str), "parent": parent,
                         "name": table["name"].astype(str),
                         "time": table["self_time_us"].astype(float),
                         "bytes": table["allocated_bytes"].astype(float)})


class OpStatsView(View):
    """Self time by op and op type on the host and the devices, idle time in or out, the
    name-scope hierarchy by time or memory, and the sortable TensorFlow stats table."""

    tab, title, bundle, position = "ops", "TensorFlow stats", "opstats", 30
    pie_with_idle = FigureTrait()
    pie_without_idle = FigureTrait()
    scopes = TableTrait()
    table = TableTrait()  # with its IDLE rows
    table_without_idle = TableTrait()  # without them, its shares of the ops' time (as XProf)
    idle_note = traitlets.Unicode().tag(sync=True)  # what the IDLE rows count (shown with them)
    statements = traitlets.List().tag(sync=True)
    graph_targets = traitlets.Dict().tag(sync=True)  # {operation: its HLO ops} (graph_targets)

    @classmethod
    def title_for(cls, prof) -> str:
        return op_stats_title(prof)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.op_stats) else "No ops in this profile."

    @classmethod
    def state(cls, prof) -> ViewState:
        ops, busy = typed_op_stats(prof), typed_op_stats(prof, include_idle=False)
        # (host and device rows share the % columns, each of its own side's time: said)
        hosts = int(prof.planes.host.nunique()) if len(prof.planes) else 1
        devices = len(prof.duty_cycle)  # (the device planes with activity)
        title = f"{op_stats_title(prof)} {share_words(ops, hosts, devices, True)}"
        busy_title = f"{op_stats_title(prof)} {share_words(busy, hosts, devices, False)}"
        return ViewState({
            "pie_with_idle": op_stats_figure(ops),
            "pie_without_idle": op_stats_figure(busy),
            "scopes": _scopes(prof),
            "table": _table(ops, title),
            "table_without_idle": _table(busy, busy_title),
            "idle_note": idle_note(prof, ops),
            "statements": xprof_device_op_notes(prof, ops),
            "graph_targets": op_targets(prof, ops)}, GraphRequests(prof))
