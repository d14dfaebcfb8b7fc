"""The device utilisation view ("GPU utilisation", "Device utilisation" on TPUs): per device,
how much of its time it is busy and why it idles (input, launch gaps, the host, copies), its
time outside the steps, its duty cycle, on TPUs the host plane's MXU and HBM counters, the
overlap of collectives with compute, on GPUs kernel launch latency and the launch queue, and
the findings about them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from .._words import counted
from ..analysis.findings.input_wait import devices_input_unknown
from ..analysis.findings.measures import (MARK_INPUT, NO_INPUT_EVENTS, active_device_rows,
                                          device_label, steps_words)
from ..analysis.findings.measure_words import (excluded_note, get, measure_text, spread_words,
                                         xprof_words)
from ..analysis.gpu.overlap import no_collectives_words
from ..analysis.gpu.time import (ALL_STREAMS, OUTSIDE_STEPS, cut_step_windows, has_steps,
                                 step_rows, the_steps)
from ..plot.gpu_figures import HOST_BOUND_WITH_INPUT, UTILIZATION_PARTS, launched_words
from ..plot.op_words import on_tpu
from ._view import View, ViewState
from .gpu_hardware import hardware_state
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["GPU_FINDINGS", "GpuUtilizationView", "device_findings", "device_summary", "on_tpu"]

# the kinds of prof.recommendations() this view lists beside those quoting a device measure
# (a row of prof.measures that counts devices): those its tables are the evidence of
GPU_FINDINGS = ("gpu_idle", "launch_bound", "exposed_collectives", "straggler", "gpu_throttled")


def device_findings(prof) -> list:
    """The findings about device time: those quoting a device measure, and the kinds of
    :data:`GPU_FINDINGS`."""
    table = prof.measures
    counted = set(table.index[table.device_count > 0]) if len(table) else set()
    return [f for f in prof.recommendations() if f.kind in GPU_FINDINGS or f.measure in counted]
_SUMMARY_KEYS = ["host", "device"]
_LATENCY_COLUMNS = ["host", "kernel_name", "launches", "graph_launches", "mean_latency_us",
                    "p50_latency_us", "p90_latency_us", "p99_latency_us", "max_latency_us",
                    "mean_launch_call_us", "mean_duration_us"]


def _outside(dev: pd.DataFrame) -> pd.DataFrame:
    """Per device: its busy time and kernels outside every step."""
    out = dev[dev.step == OUTSIDE_STEPS].groupby(_SUMMARY_KEYS, sort=False, observed=True)
    return pd.DataFrame({"outside_steps_busy_ms": out.busy_us.sum() / 1e3,
                         "outside_steps_kernels": out.kernels.sum()})


def device_summary(utilization: pd.DataFrame, duty_cycle: pd.DataFrame) -> pd.DataFrame:
    """One row per host and device: its wall time over the steps (``steps_wall_ms``; without
    steps over its active span, ``active_span_wall_ms``), busy and each idle cause as a share
    of it (``*_pct``, adding up to 100), its busy time and kernels outside every step (where
    the profile has steps), kernels and the duty cycle (busy time over the span from the
    device's first to its last activity)."""
    parts = [col for col, _, _ in UTILIZATION_PARTS]
    dev = utilization[utilization.stream == ALL_STREAMS]
    sums = step_rows(dev).groupby(_SUMMARY_KEYS, sort=False, observed=True)[
        ["wall_us", *parts]].sum()
    wall = sums.wall_us.where(sums.wall_us > 0)
    wall_name = "steps_wall_ms" if has_steps(dev) else "active_span_wall_ms"
    out = pd.DataFrame({wall_name: sums.wall_us / 1e3}, index=sums.index)
    for col in parts:
        out[col.removesuffix("_us") + "_pct"] = 100 * sums[col] / wall
    if (dev.step == OUTSIDE_STEPS).any():
        out = out.join(_outside(dev), how="left")
        out["outside_steps_busy_ms"] = out.outside_steps_busy_ms.fillna(0.0)
        out["outside_steps_kernels"] = out.outside_steps_kernels.fillna(0).astype("int64")
    duty = duty_cycle.set_index(_SUMMARY_KEYS)[["kernels", "duty_cycle_pct"]] \
        if len(duty_cycle) else pd.DataFrame(columns=["kernels", "duty_cycle_pct"])
    out = out.join(duty, how="left").reset_index()
    out["kernels"] = out.kernels.fillna(0).astype("int64")
    return out


def _finding(f) -> dict:
    return {"severity": f.severity, "what": f.what,
            "evidence": f.evidence_text(),
            "fix": f.fix}


def _outside_statement(summary: pd.DataFrame, unit: str, steps_said: str) -> list[str]:
    """The devices busy outside every step, said once (their step rows show them idle)."""
    if "outside_steps_busy_ms" not in summary:
        return []
    busy = summary[summary.outside_steps_busy_ms > 0]
    if busy.empty:
        return []
    hosts = summary.host.nunique() if "host" in summary else 1
    each = [f"{device_label(r.host, r.device, hosts)} {r.outside_steps_busy_ms:,.1f} ms "
            f"({counted(int(r.outside_steps_kernels), unit)})" for r in busy.itertuples()]
    shares = "the step's shares" if steps_said == "the step" else "the steps' shares"
    return ["Busy outside every step: " + ", ".join(each) + ". That time is in the "
            f"'outside steps' rows and columns, not in {shares}."]


def _tpu_counters(prof) -> list[str]:
    """The host plane's MXU and HBM utilisation counters (those it has)."""
    dev = prof.overview().device
    known = [f"{words} {dev[key]:.1f}%" for key, words in
             (("mxu_utilization_pct", "MXU utilisation"),
              ("hbm_utilization_pct", "HBM utilisation")) if pd.notna(dev.get(key))]
    return [f"TPU counters of the host plane: {', '.join(known)}."] if known else []


def _statements(prof, summary: pd.DataFrame, tpu: bool, input_known: bool) -> list[str]:
    """The devices' duty cycle over the whole profile, on TPUs their counters, the devices
    busy outside the steps, the steps whose devices (or hosts) finish at different times,
    and, unless ``input_known``, why the devices' input share is blank."""
    out = []
    duty = get(prof.measures, "duty_cycle_pct")
    if duty is not None:
        text = f"Device duty cycle: {measure_text(duty['value'], '%')} ({duty['scope']})"
        extra = [w for w in (spread_words(duty), xprof_words(duty),
                             _outside_span_words(prof.gpu_utilization, prof.duty_cycle)) if w]
        out.append(text + (f"; {'; '.join(extra)}" if extra else "") + ".")
    if tpu:
        out += _tpu_counters(prof) + [
            "TPUs run their programs' ops without a launch from the host for each, so there "
            "is no launch latency to show."]
    out += [note for note in (excluded_note(prof.measures),) if note]
    out += _outside_statement(summary, "op" if tpu else "kernel",
                              the_steps(prof.gpu_utilization))
    ends = prof.stragglers
    apart = ends[ends.spread_us > 0] if len(ends) else ends
    if len(apart):
        hosts = int(apart.hosts.max())  # (the devices named as the measures name them)
        last = pd.Series([device_label(h, d, hosts) for h, d in
                          zip(apart.last_host, apart.last_device)]).value_counts()
        out.append(f"Devices finish {len(apart)} of {len(ends)} steps at different times; "
                   f"last most often: {last.index[0]} ({counted(int(last.iloc[0]), 'step')}); "
                   "mean lag "
                   f"behind the median finisher {apart.lag_us.mean():,.1f} us, largest spread "
                   f"{apart.spread_us.max():,.1f} us{_of_its_step(prof.steps, apart)}.")
    if not input_known:
        out.append(f"Waiting for input: unknown: {NO_INPUT_EVENTS}. The table's input column "
                   f"is left blank, and the chart's '{HOST_BOUND_WITH_INPUT}' part holds any "
                   f"such input. {MARK_INPUT}")
    out += _graph_launch_statement(prof.launch_latency.per_kernel)
    unit = "ops" if tpu else "kernels"
    util = prof.gpu_utilization
    if has_steps(util):
        return out + [f"Per device: busy time and each idle cause as a share of the device's "
                      f"wall time in {steps_words(prof.steps)}; {unit} and duty cycle over the "
                      "whole profile." + _overlap_words(prof.steps)]
    return out + [f"Per device: busy time (its duty cycle) and each idle cause as a share of "
                  f"the device's wall time over its active span (the profile has no steps); "
                  f"{unit} over the whole profile."]


def _overlap_words(steps: pd.DataFrame) -> str:
    """Where steps overlap (steps inferred from a repeated program can), what the device
    table's step time is: each step's window ends where the next begins, so its wall time
    adds up to less than the steps' durations the step cards average; "" where none do."""
    wall_ps = n = 0
    for _, rows in steps.groupby("host", sort=False) if len(steps) else ():
        _, w0, w1 = cut_step_windows(rows)  # (the device table's windows, as it cuts them)
        cut = np.rint(rows.duration_ms.to_numpy(float) * 1e9).astype(np.int64) > w1 - w0
        wall_ps, n = wall_ps + int((w1 - w0).sum()), n + int(cut.sum())
    if not n:
        return ""
    total = float(steps.duration_ms.sum())
    return (f" The steps overlap ({n} of {len(steps)} run on past the next one's start): each "
            "step's time here ends where the next begins, so the steps' wall time is "
            f"{wall_ps / 1e9:,.1f} ms where their durations add up to {total:,.1f} ms "
            "(the step time the overview averages).")


def _outside_span_words(util: pd.DataFrame, duty: pd.DataFrame) -> str:
    """What the duty cycle's spans hold outside the steps, which 'Devices idle in the steps'
    does not count: "their active spans hold 13.2 ms outside the steps (32.7% of them), 13.2
    ms of it idle"; "" where that is under 1% of the spans (or the profile has no steps)."""
    if not has_steps(util) or not len(duty):
        return ""
    active = active_device_rows(util)
    keys = set(zip(active.host.astype(str), active.device.astype(str)))
    mine = [(str(h), str(d)) in keys for h, d in zip(duty.host, duty.device)]
    span = float(duty.span_us[mine].sum())
    counted = np.array([(str(h), str(d)) in keys for h, d in zip(util.host, util.device)],
                       bool)
    mine_rows = util[(util.stream == ALL_STREAMS).to_numpy() & counted]
    rows = mine_rows[mine_rows.step == OUTSIDE_STEPS]
    wall, idle = float(rows.wall_us.sum()), float(rows.idle_us.sum())
    if not span > 0:
        return ""
    one, steps_said = len(keys) == 1, the_steps(util)
    out = []
    if wall >= 0.01 * span:
        out.append(f"{'its active span holds' if one else 'their active spans hold'} "
                   f"{wall / 1e3:,.1f} ms outside {steps_said} ({100 * wall / span:.1f}% of "
                   f"{'it' if one else 'them'}), {idle / 1e3:,.1f} ms of it idle, which the "
                   f"idle time in {steps_said} does not count")
    beyond = float(mine_rows[mine_rows.step >= 0].wall_us.sum()) - (span - wall)
    if beyond >= 0.01 * span:  # (steps running on before or after a device's activity)
        out.append(f"{steps_said} hold{'s' * (steps_said == 'the step')} {beyond / 1e3:,.1f} ms "
                   "outside "
                   f"{'its active span' if one else 'their active spans'} (before "
                   f"{'its' if one else 'a device' + chr(39) + 's'} first activity or after "
                   "its last), idle, which the duty cycle does not count")
    return "; ".join(out)


def _of_its_step(steps: pd.DataFrame, apart: pd.DataFrame) -> str:
    """The largest finish spread as a share of its step's time (the longest host's), which
    tells a spread that matters from one that does not."""
    widest = apart.loc[apart.spread_us.idxmax()]
    duration = steps.duration_ms[steps.index == widest.step].max() if len(steps) else np.nan
    if not duration > 0:
        return ""
    return (f" ({100 * widest.spread_us / (1e3 * duration):.1f}% of that step's "
            f"{duration:,.1f} ms)")


def _graph_launch_statement(per_kernel: pd.DataFrame) -> list[str]:
    """How many kernel launches came from one call starting several kernels (a CUDA graph:
    XLA's command buffers), whose latency is not a launch of their own."""
    if not len(per_kernel) or not per_kernel.graph_launches.sum():
        return []
    graph, total = int(per_kernel.graph_launches.sum()), int(per_kernel.launches.sum())
    return [f"{graph:,} of the {total:,} launches in the latency table (kernels, copies and "
            "memsets; the table's graph launches) came from a call that started several "
            "kernels at once, such as a CUDA graph's launch (XLA's command buffers run so). "
            "Their latency runs from that one call to each kernel's start, so it grows along "
            "the graph; it is not a launch of their own, and their mean launch call is the "
            "graph's."]


def _latency_table_title(ll) -> str:
    """"Launch latency per kernel", naming copies and memsets where the table has them."""
    launched = launched_words(ll.per_kernel)
    return "Launch latency per kernel" if launched == "kernels" else \
        "Launch latency per kernel, copy and memset"


def _without_one_host(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its host column when every row has the same host."""
    return frame.drop(columns="host") if frame.host.nunique() <= 1 else frame


def _figure_or_none(table: pd.DataFrame, make):
    """A figure of ``table``, or {} (none: the view says why) when it is empty."""
    return make() if len(table) else {}


def _notes(prof, tpu: bool) -> dict[str, str]:
    """Why a chart is missing, by chart trait ("": the chart has no place on this profile)."""
    ll, overlap = prof.launch_latency, prof.gpu_overlap
    no_launches = "" if tpu else \
        "; ".join(ll.reasons) or "no kernel launches linked to their kernels"
    no_collectives = "; ".join(overlap.attrs.get("reasons", [])) or "no collectives"
    if tpu and overlap.attrs.get("reasons"):
        no_collectives = no_collectives_words(overlap.attrs.get("collectives_outside", {}),
                                              "collective ops (all-reduce, all-gather, ...)",
                                              "TPU")
    return {"overlap": no_collectives, "latency": no_launches, "queue": no_launches}


def _devices_table(summary: pd.DataFrame, tpu: bool, input_known: bool = True) -> TableData:
    table = _without_one_host(summary)
    if "active_span_wall_ms" in table:  # (no steps: the busy share is the duty cycle, once)
        table = table.drop(columns="duty_cycle_pct", errors="ignore")
    if not input_known and "input_pct" in table:  # unknown, as the overview's card: blank
        table = table.assign(input_pct=float("nan"))
    if tpu:
        table = table.rename(columns={"kernels": "ops", "outside_steps_kernels":
                                      "outside_steps_ops"})
    return TableData(table, "Devices", "device", 50)


class GpuUtilizationView(View):
    """Busy and idle time by cause per device and step (``prof.gpu_utilization``), the
    devices' duty cycle (``prof.duty_cycle``), collectives hidden under compute
    (``prof.gpu_overlap``), kernel launch latency and the launch queue
    (``prof.launch_latency``) and the findings about them (``prof.recommendations()``)."""

    tab, title, bundle, position = "gpu", "GPU utilisation", "gpu", 45
    tpu_title = "Device utilisation"
    statements = traitlets.List().tag(sync=True)
    devices = TableTrait()
    findings = traitlets.List().tag(sync=True)
    utilization = FigureTrait()
    overlap = FigureTrait()
    latency = FigureTrait()
    queue = FigureTrait()
    notes = traitlets.Dict().tag(sync=True)
    kernels = TableTrait()
    # what the trace lacks (prof.counters in the steps; empty without samples): see
    # gpu_hardware
    hardware = TableTrait()
    hardware_figure = FigureTrait()
    hardware_notes = traitlets.List().tag(sync=True)

    @classmethod
    def title_for(cls, prof) -> str:
        return cls.tpu_title if on_tpu(prof) else cls.title

    @classmethod
    def reason(cls, prof) -> str | None:
        util = prof.gpu_utilization
        if len(util) and (util[util.stream == ALL_STREAMS].busy_us > 0).any():
            return None
        why = "; ".join(util.attrs.get("reasons", [])) or "no kernels ran on any device"
        return (f"No device activity: {why}. This tab shows GPU (and TPU) time: busy and idle "
                "by cause, duty cycle, launch latency.")

    @classmethod
    def state(cls, prof) -> ViewState:
        summary = device_summary(prof.gpu_utilization, prof.duty_cycle)
        ll, plot, tpu = prof.launch_latency, prof.plot, on_tpu(prof)
        input_known = not devices_input_unknown(prof.result)
        per_kernel = ll.per_kernel[_LATENCY_COLUMNS].sort_values(
            "mean_latency_us", ascending=False, kind="stable")
        return ViewState({
            "statements": _statements(prof, summary, tpu, input_known),
            "devices": _devices_table(summary, tpu, input_known),
            "findings": [_finding(f) for f in device_findings(prof)],
            "utilization": plot.gpu_utilization(left_out=False),  # (its note says it)
            "overlap": _figure_or_none(prof.gpu_overlap[prof.gpu_overlap.collective_us > 0],
                                       plot.gpu_overlap),
            "latency": _figure_or_none(ll.histogram, plot.launch_latency),
            "queue": _figure_or_none(ll.queue, plot.launch_queue),
            "notes": _notes(prof, tpu),
            "kernels": TableData(_without_one_host(per_kernel), _latency_table_title(ll),
                                 "kernel_name"),
            **hardware_state(prof)})
