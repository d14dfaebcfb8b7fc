"""The op stats view ("TensorFlow stats" on TensorFlow profiles, "Op stats" on others): where
self time goes by op and type (pies, idle in or out), the name-scope icicle, and the table
(with or without its IDLE rows, as the pies).  Device ops XProf types "Unknown" (HLO ops with
no framework op) show their HLO category; on JAX profiles XProf's eager column ("Eager" or
"Function": a TensorFlow word) reads "execution": "jit" (an op of a compiled program) or
"eager"."""

from __future__ import annotations

import pandas as pd
import traitlets

from ..analysis.findings.measure_words import get
from ..analysis.tf.op_stats import IDLE, typed_by_hlo
from ..plot.op_figures import op_stats_figure
from ._view import View, ViewState
from .gpu_utilization_view import on_tpu
from .graph_targets import op_targets
from .hlo_graph_view import GraphRequests
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["OpStatsView", "idle_note", "op_stats_title", "typed_op_stats", "JAX_EXECUTION"]

# XProf's eager column in JAX's words: its ops run in a compiled (jitted) program, or eagerly
JAX_EXECUTION = {"Function": "jit", "Eager": "eager"}


# what the op stats table's shares are of
SHARE_WORDS = "(self time %: host rows of the host's time, device rows of the devices' time)"


def op_stats_title(prof) -> str:
    """"TensorFlow stats" on a TensorFlow profile, "Op stats" on any other (JAX)."""
    return "TensorFlow stats" if prof.framework.name == "tensorflow" else "Op stats"


def typed_op_stats(prof, include_idle: bool = True) -> pd.DataFrame:
    """The op stats table as views show it: its device ops typed by the profile's HLO where
    XProf says "Unknown" (:func:`~tfprof_nb.analysis.tf.op_stats.typed_by_hlo`), the eager
    column said in the profile's framework's words (:func:`execution_words`)."""
    table = typed_by_hlo(prof.op_stats_table(include_idle=include_idle), prof.hlo_stats)
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
    out["eager"] = words.where(out["type"] != "IDLE", "")
    return out.rename(columns={"eager": "execution"}) if framework == "jax" else out


def idle_note(prof, ops: pd.DataFrame) -> str:
    """What the IDLE rows of ``ops`` (the table with them) count, said as XProf's rule, and
    the page's own measure of idle devices beside it ("" without IDLE rows): the rows are a
    second figure for idle time, over another span, so the box that shows them says so."""
    idle = ops[ops["type"] == IDLE]
    if idle.empty:
        return ""
    side_words = {"Device": "devices", "Host": "host"}
    shares = ", ".join(f"{side_words.get(r.host_or_device, r.host_or_device)} "
                       f"{r.self_time_pct:.1f}%" for r in idle.itertuples())
    text = ("IDLE rows, XProf's rule: the time no op runs, as a share of each side's whole "
            "time over the profile (each device's from its first to its last activity, each "
            f"host thread's likewise): {shares}.")
    if (idle.host_or_device == "Device").any():
        measures = prof.measures
        own, duty = get(measures, "device_idle_pct"), get(measures, "duty_cycle_pct")
        if own is not None:
            text += (f" The page's own measure, the overview's '{own['label']}', reads "
                     f"{own['value']:.1f}% ({own['scope']}).")
        if duty is not None:
            text += (f" The device duty cycle, {duty['value']:.1f}% ({duty['scope']}), is the "
                     f"busy share of such spans: the time any {'op' if on_tpu(prof) else 'kernel'}"
                     " runs, counted once (IDLE subtracts the ops' summed self times).")
    return text


def unattributed_kernels_note(prof, ops: pd.DataFrame) -> list[str]:
    """Why the table has no device op although kernels ran: none names the op it ran for (no
    ``tf_op`` stat), and XProf's table files device time by that op (BERT: 1,330 kernels,
    devices IDLE only); [] where device ops are there or no kernel ran."""
    duty = prof.duty_cycle
    kernels = int(duty.kernels.sum()) if len(duty) and "kernels" in duty else 0
    device = ops[(ops.host_or_device == "Device") & (ops["type"] != IDLE)]
    if not kernels or len(device) or on_tpu(prof):
        return []
    named = prof.kernel_stats.op_name.astype(str) if len(prof.kernel_stats) else pd.Series([])
    if (named != "").any():  # (some kernel names its op: the cause is another one)
        return []
    busy_ms = float(duty.busy_us.sum()) / 1e3
    return [f"No device op in this table although the devices ran {kernels:,} kernels "
            f"({busy_ms:,.1f} ms busy): none of them names the op it ran for (the file's kernels "
            "carry no tf_op), and XProf's table files device time by that op, so the devices "
            "read as IDLE only. The GPU kernel stats and GPU utilisation tabs show the kernels."]


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
        title = f"{op_stats_title(prof)} {SHARE_WORDS}"
        return ViewState({
            "pie_with_idle": op_stats_figure(ops),
            "pie_without_idle": op_stats_figure(busy),
            "scopes": _scopes(prof),
            "table": TableData(ops, title, "operation"),
            "table_without_idle": TableData(busy, title, "operation"),
            "idle_note": idle_note(prof, ops),
            "statements": unattributed_kernels_note(prof, ops),
            "graph_targets": op_targets(prof, ops)}, GraphRequests(prof))
