"""The XLA view: the programs' ops on the device's roofline, the op profile (program ->
category -> op) as an icicle, the HLO op stats table and each program's memory (its buffer
assignment: heap over the program order, buffers live at the peak)."""

from __future__ import annotations

import pandas as pd
import traitlets

from ..analysis.trace.event_rows import event_rows
from ..analysis.xla.buffer_words import xprof_buffer_words
from ..analysis.xla.hlo_graph import event_ops
from ..analysis.xla.hlo_stats import on_xla_cpu
from ..plot.op_words import XLA_CPU_SPAN, duty_cycle_beside, plane_span_words
from ._view import View, ViewState
from .hlo_graph_view import GraphRequests
from .op_counter_columns import with_op_counters
from .traits import FigureTrait, TableData, TableTrait, rates_as_shown
from .xla_memory import ProgramMemorySource, memory_notes, memory_state

__all__ = ["XlaView"]

_HLO_COLUMNS = ["rank", "program_id", "module", "category", "hlo_op_name", "framework_op_name",
                "occurrences", "total_time_us", "avg_time_us", "total_self_time_us",
                "self_time_pct", "flops", "memory_accessed_bytes",
                "model_flop_rate_flops_per_s", "memory_bw_bytes_per_s",
                "arithmetic_intensity_flops_per_byte", "bound_by", "hlo_op_expression",
                "source", "attribution"]


def _op_profile_rows(prof) -> pd.DataFrame:
    """The op profile's nodes (IDLE left out) as icicle rows: node, parent, label, time."""
    tree = prof.op_profile(include_idle=False)
    tree = tree[tree.depth > 0]  # the root is the whole width anyway
    return pd.DataFrame({"scope": tree["node"].astype(str), "parent": tree["parent"].astype(str),
                         "name": tree["name"].astype(str),
                         "value": tree["time_us"].astype(float)})


def _statements(prof) -> list[str]:
    peaks = prof.device_peaks
    out = []
    if peaks.known:
        out.append(f"Device peaks ({peaks.device or 'device'}, {peaks.source}): "
                   f"{peaks.peak_flops_per_s / 1e12:,.1f} TFLOP/s, "
                   f"{peaks.memory_bw_bytes_per_s / 1e9:,.0f} GB/s; ridge point "
                   f"{peaks.ridge_point_flops_per_byte:.3g} FLOP/byte.")
        out += _above_the_peak(prof, peaks.peak_flops_per_s)
    else:
        out.append("Device peaks unknown (CPU or a device without peak stats): "
                   "prof.set_device_peaks(peak_flops_per_s=..., memory_bw_bytes_per_s=...) "
                   "places the ops against a roofline.")
    out += _share_denominator(prof)
    buffers = xprof_buffer_words(prof.hlo_stats, "hlo_stats")
    out += [buffers] if buffers else []
    out += [f"Note: {r}" for r in prof.hlo_stats.attrs.get("reasons", [])]
    return out


def _share_denominator(prof) -> list[str]:
    """What the HLO table's self time % is of (XProf's rule: each device plane's span, from
    its first to its last event of any line, counter samples and copies included (a TPU's:
    of its ops and step markers), or its op time where longer; summed over the planes), with
    the ops' part of it: the sentence that lets a reader check a share that looks small (an
    H200 capture's counter samples spread its span to 625 ms for 122 ms of ops); beside it
    the device duty cycle, the page's own busy share, which counts overlapping ops once (the
    ops' share sums them), with its busy time and, where not the same, its span."""
    stats = prof.hlo_stats
    total_us = float(stats.attrs.get("total_time_us", 0.0))
    if not len(stats) or not total_us > 0:
        return []
    ops_us = float(stats.total_self_time_us.sum())
    on_host = on_xla_cpu(stats)
    devices = len(prof.duty_cycle)
    if on_host:  # (XProf's XLA tools list nothing on CPU: no XProf rule to name)
        whole = f"{XLA_CPU_SPAN}, idle included"
        overlap = "ops that overlap add up"
    else:
        where = "its device's time from its plane's" if devices == 1 else \
            f"the {devices} devices' time summed, each from its plane's"
        whole = f"{where} {plane_span_words(prof)}, idle included (XProf's rule)"
        overlap = "XProf's rule: ops that overlap add up"
    text = (f"HLO table self time %: of {total_us / 1e3:,.3f} ms, {whole}; the ops' self time "
            f"is {ops_us / 1e3:,.3f} ms of it ({100 * ops_us / total_us:.1f}%, {overlap}).")
    if not on_host:
        text += duty_cycle_beside(prof, total_us / 1e3, "the ops' self times add up ops "
                                  "that run at once")
    return [text]


def _above_the_peak(prof, peak: float, named: int = 3) -> list[str]:
    """Ops whose FLOP rate in the HLO table is above the device's peak, and why: XProf's
    rule, which the table keeps, counts an op's FLOPs once for each device event it runs, so
    an op running more than one event each time (a cuBLAS GEMM's memset beside its kernel)
    reads several times its FLOPs.  Its events per run: its events over the runs of its most
    frequent event name (the longest-running one of those as frequent: its kernel)."""
    stats = prof.hlo_stats
    if not len(stats) or "model_flop_rate_flops_per_s" not in stats:
        return []
    over = stats[stats.model_flop_rate_flops_per_s > peak].sort_values(
        "model_flop_rate_flops_per_s", ascending=False)
    if over.empty:
        return []
    ops = event_ops(prof.result("command_buffer_kernels"), prof.stat("hlo_op"))
    ops = ops[ops.isin(set(over.hlo_op_name.astype(str)))]
    programs = prof.stat("program_id").reindex(ops.index).astype(str).to_numpy()
    ev = event_rows(prof.spaces, prof.event_offsets, ops.index)  # (not the whole table)
    on_device = ev.plane.astype(str).str.startswith("/device:").to_numpy()
    parts = []
    for row in over.head(named).itertuples():
        mine = on_device & (ops == str(row.hlo_op_name)).to_numpy() \
            & (programs == str(row.program_id))
        names = ev[mine].groupby(ev.name[mine].astype(str)).duration_us.agg(["size", "sum"])
        names = names.sort_values(["size", "sum"], ascending=False)["size"]
        rate = f"{row.hlo_op_name} {row.model_flop_rate_flops_per_s / 1e12:,.1f} TFLOP/s"
        if len(names) > 1 and names.sum() > names.iloc[0]:
            rate += (f" ({int(names.sum())} device events for {int(names.iloc[0])} runs of "
                     f"its kernel {names.index[0]}: {names.sum() / names.iloc[0]:.1f}x its "
                     "FLOPs)")
        parts.append(rate)
    more = f" and {len(over) - named} more" if len(over) > named else ""
    return [f"Above this peak in the HLO table: {'; '.join(parts)}{more}. XProf's rule, which "
            "the table keeps, counts an op's FLOPs once for each device event it runs, so an "
            "op that runs more than one (a memset beside a GEMM) reads more FLOPs, and a higher "
            "FLOP rate, than it did."]


# the HLO table's self time (%) counts the devices' idle time in its whole (XProf's hlo_stats
# rule), the op stats' (idle box unticked) and the summary's top ops leave it out: said here
HLO_TABLE_TITLE = ("HLO op stats (self time %: of the device planes' whole time, idle "
                   "included, XProf's rule)")
# on CPU (XLA:CPU's ops on the host) the table is this page's: XProf's lists no op there
HLO_TABLE_TITLE_CPU = ("HLO op stats of XLA:CPU (self time %: of the ops' time on the host, idle "
                       "included; XProf's HLO tools list no op on CPU)")


def _hlo_table(prof) -> TableData:
    """Every HLO op; program ids as text (64-bit TPU ids lose digits as JavaScript numbers);
    the hardware counters' means over its executions where the profile has them."""
    stats = prof.hlo_stats
    table = stats[[c for c in _HLO_COLUMNS if c in stats.columns]].copy()
    if "program_id" in table:
        table["program_id"] = table.program_id.astype(str)
    table, labels = rates_as_shown(table)
    title = HLO_TABLE_TITLE_CPU if on_xla_cpu(stats) else HLO_TABLE_TITLE
    return with_op_counters(TableData(table, title, "hlo_op_name", labels=labels),
                            prof, "hlo_op", {"program": "module", "op": "hlo_op_name"})


class XlaView(View):
    """XLA programs (``prof.hlo_stats``, ``prof.op_profile()``, ``prof.roofline``,
    ``prof.program_memory()``): the ops on the roofline, where device time goes by program,
    category and op, every HLO op, and a program's memory (pick the program: the view holds
    the first programs' memory, a live view asks the kernel for the others)."""

    tab, title, bundle, position = "xla", "XLA ops", "xla", 50
    statements = traitlets.List().tag(sync=True)
    figure = FigureTrait()
    op_profile = TableTrait()
    table = TableTrait()
    memory_programs = TableTrait()  # prof.program_memory(), ids as text, the selector's order
    memory_details = traitlets.Dict().tag(sync=True)  # {program id: its memory} of the first
    memory_notes = traitlets.List().tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        if len(prof.hlo_stats):
            return None
        why = "; ".join(prof.hlo_stats.attrs.get("reasons", [])) or "no XLA ops in this profile"
        return (why[0].upper() + why[1:].rstrip(".") + ". XLA programs come from JAX, "
                "@tf.function(jit_compile=True) and Keras 3 on GPU.")

    @classmethod
    def state(cls, prof) -> ViewState:
        programs, details = memory_state(prof)
        return ViewState({
            "statements": _statements(prof), "figure": prof.plot.roofline(),
            "op_profile": _op_profile_rows(prof), "table": _hlo_table(prof),
            "memory_programs": TableData(programs, "XLA programs", "program", 20),
            "memory_details": details, "memory_notes": memory_notes(prof, programs)},
            GraphRequests(prof, ProgramMemorySource(prof, set(programs.program_id))))
