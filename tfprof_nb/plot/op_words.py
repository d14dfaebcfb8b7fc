"""What a chart of op self time must say beside it: what its IDLE slices count (XProf's rule,
with the page's own idle measure) and why a device shows no op although kernels ran.  Shared
by ``prof.plot.op_stats`` (a caption) and the op stats view (its notes)."""

from __future__ import annotations

import pandas as pd

from ..analysis.findings.measure_words import get
from ..analysis.findings.measures import device_label
from ..analysis.tf.op_stats import IDLE
from ..analysis.xla.buffer_words import xprof_buffer_words

__all__ = ["XLA_CPU_SPAN", "duty_cycle_beside", "idle_note", "on_cpu",
           "on_tpu", "plane_span_words", "unattributed_kernels_note", "xprof_device_op_notes"]

# the device side's whole time where XLA:CPU runs the ops (no GPU or TPU): the ops' span on
# the host, not a plane's (XProf's tools list no device time on CPU)
XLA_CPU_SPAN = ("the XLA:CPU ops' time on the host, from the first op's start to the last op's "
                "end, or their summed self time where longer")


def on_tpu(prof) -> bool:
    """Whether the profile's devices are TPUs (the words then speak of ops, not kernels)."""
    return prof.result("environment")["device_type"] == "TPU"


def on_cpu(prof) -> bool:
    """Whether the profile has no GPU or TPU (its device side, if any, is XLA:CPU's ops)."""
    return prof.result("environment")["device_type"] == "CPU"


def idle_note(prof, ops: pd.DataFrame) -> str:
    """What the IDLE rows of ``ops`` (the table with them) count, said as XProf's rule, and
    the page's own measure of idle devices beside it ("" without IDLE rows): the rows are a
    second figure for idle time, over another span, so the box that shows them says so."""
    idle = ops[ops["type"] == IDLE]
    if idle.empty:
        return ""
    side_words = {"Device": "XLA:CPU" if on_cpu(prof) else
                  "device" if len(prof.duty_cycle) == 1 else "devices", "Host": "host"}
    shares = ", ".join(f"{side_words.get(r.host_or_device, r.host_or_device)} "
                       f"{r.self_time_pct:.1f}% of {_whole_ms(ops, r.host_or_device):,.1f} ms"
                       for r in idle.itertuples())
    if on_cpu(prof):  # (XProf's op stats list no device rows on CPU: no rule of its to name)
        rules = [f"the device side's: {XLA_CPU_SPAN}" if side == "Device" else
                 "each host thread's from its first to its last event, XProf's rule"
                 for side in idle.host_or_device]
        text = ("IDLE rows: the time no op runs, as a share of each side's whole time over the "
                f"profile ({'; '.join(rules)}): {shares}.")
    else:
        text = ("IDLE rows, XProf's rule: the time no op runs, as a share of each side's whole "
                f"time over the profile (each device plane's from its {plane_span_words(prof)}; "
                f"each host thread's from its first to its last event): {shares}.")
    device = idle[idle.host_or_device == "Device"]
    if len(device):
        measures = prof.measures
        own = get(measures, "device_idle_pct")
        if own is not None:
            text += (f" The page's own measure, the overview's '{own['label']}', reads "
                     f"{own['value']:.1f}% ({own['scope']}).")
        text += duty_cycle_beside(prof, _whole_ms(ops, "Device"),
                                  "IDLE subtracts the ops' summed self times",
                                  "the two do not add up to 100%")
    return text


def plane_span_words(prof) -> str:
    """How XProf's rule spans a device plane's whole time (the HLO table's and the IDLE
    rows' denominator): "first to its last ...", the lines it reads said."""
    if on_tpu(prof):
        return "first to its last op or step marker on its XLA Ops and Steps lines (device clock)"
    return "first to its last event on any line, counter samples and copies too"


def duty_cycle_beside(prof, whole_ms: float, summed: str, apart: str = "") -> str:
    """" The device duty cycle, 53.5% (...), is the busy share of the same spans: ..." beside
    a share of the device planes' whole time (``whole_ms``, :func:`plane_span_words`, summed
    over the planes), which sums the ops' self times (``summed``: how that share uses them):
    the page's own measure of the devices' busy time with its busy ms, and its span where
    that is not the same (``apart``: what follows then); "" without it."""
    duty = get(prof.measures, "duty_cycle_pct")
    if duty is None:
        return ""
    tpu = on_tpu(prof)
    unit = "op" if tpu else "kernel"
    span, busy = _duty_span_ms(prof, duty)
    counted = f"the time any {unit} runs, counted once, {busy:,.1f} ms"
    head = f" The device duty cycle, {duty['value']:.1f}% ({duty['scope']}), is the busy share"
    if abs(whole_ms - span) <= 1e-9 * max(whole_ms, 1.0):
        return f"{head} of the same spans: {counted} ({summed})."
    return (f"{head} of another span, {span:,.1f} ms (from the first to the last {unit} or "
            f"{'program run' if tpu else 'copy'} of the devices it counts): {counted}"
            + (f"; {apart}." if apart else "."))


def _whole_ms(ops: pd.DataFrame, side: str) -> float:
    """The whole time (ms) the shares of a side's rows are of: its rows' self times, IDLE
    among them (not worked back from the IDLE row's share, which is 0 where IDLE is)."""
    return float(ops.total_self_time_us[ops.host_or_device == side].sum()) / 1e3


def _duty_span_ms(prof, duty) -> tuple[float, float]:
    """The active spans and the busy time (ms) of the devices the duty cycle measure counts
    (named as the measure names them: :func:`device_label`)."""
    table = prof.duty_cycle
    hosts = len(prof.result("environment")["hosts"])
    names = set(str(duty["devices"]).split(", "))
    mine = table[[device_label(h, d, hosts) in names for h, d in zip(table.host, table.device)]]
    mine = mine if len(mine) else table
    return float(mine.span_us.sum()) / 1e3, float(mine.busy_us.sum()) / 1e3


def unattributed_kernels_note(prof, ops: pd.DataFrame, summary: bool = False) -> list[str]:
    """Why the table has no device op although kernels ran: none names the op it ran for (no
    ``tf_op`` stat), and XProf's table files device time by that op (BERT: 1,330 kernels,
    devices IDLE only); [] where device ops are there or no kernel ran; ``summary``: said of
    the summary's top ops (``tfprof summary``), not of a table in a view."""
    duty = prof.duty_cycle
    kernels = int(duty.kernels.sum()) if len(duty) and "kernels" in duty else 0
    device = ops[(ops.host_or_device == "Device") & (ops["type"] != IDLE)]
    if not kernels or len(device) or on_tpu(prof):
        return []
    named = prof.kernel_stats.op_name.astype(str) if len(prof.kernel_stats) else pd.Series([])
    if (named != "").any():  # (some kernel names its op: the cause is another one)
        return []
    busy_ms = float(duty.busy_us.sum()) / 1e3
    where, shown = ("among the top ops", "prof.kernel_stats and prof.gpu_utilization list") \
        if summary else ("in this table", "The GPU kernel stats and GPU utilisation tabs show")
    return [f"No device op {where} although the devices ran {kernels:,} kernels "
            f"({busy_ms:,.1f} ms busy): none of them names the op it ran for (the file's kernels "
            "carry no tf_op), and XProf's table files device time by that op, so the devices "
            f"read as IDLE only. {shown} the kernels."]


def xprof_device_op_notes(prof, ops: pd.DataFrame, table: str = "op_stats") -> list[str]:
    """Why the table's device ops are not XProf's: none of its kernels names an op
    (:func:`unattributed_kernels_note`), or kernels ran inside XLA's command buffers, which
    XProf files under no op and this table attributes to theirs (``table``: "op_stats", or
    "summary" for the summary's top ops)."""
    buffers = xprof_buffer_words(prof.hlo_stats, table)
    return unattributed_kernels_note(prof, ops, table == "summary") + \
        ([buffers] if buffers else [])
