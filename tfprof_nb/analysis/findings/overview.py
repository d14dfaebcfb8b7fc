"""The overview page: step-time summary, input-bound verdict, precision, top ops, environment,
and for TPUs the device figures (duty cycle, idle time, utilisations)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from ..._words import counted
from ...constants import CATEGORY_COLUMNS, GPU_PLANE_PREFIX, TPU_PLANE_PREFIX
from ..runtime.unit import Analysis
from ..steps.breakdown import NO_STEPS_WHY
from ..steps.xprof_counted import xprof_count
from ..tf.input_pipeline import bottleneck_verdicts
from ..tf.memory import MemoryAnalysis
from .input_wait import input_verdict
from .measures import step_count_words
from .measure_words import measure_text, value_of, xprof_words
from .tpu_figures import device_figures

__all__ = ["ANALYSES", "NO_STEPS_REASON", "Overview", "device_text", "overview",
           "run_environment"]

NO_STEPS_REASON = f"no steps: the profile has {NO_STEPS_WHY}"

@dataclass
class Overview:
    """Everything the overview page shows, as plain values and small DataFrames.

    ``reasons`` explains what is missing (no steps, no device, ...) instead of showing zeros.
    """

    step_time: dict = field(default_factory=dict)  # avg/std/min/max ms and source
    breakdown: pd.DataFrame = field(default_factory=pd.DataFrame)  # avg/std per category
    input_bound: dict = field(default_factory=dict)  # classification, statement, shares
    precision: dict = field(default_factory=dict)  # the 16-bit share (.precision)
    top_device_ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    top_host_ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    environment: dict = field(default_factory=dict)
    recommendations: list = field(default_factory=list)
    reasons: list = field(default_factory=list)
    device_duty_cycle_pct: float | None = None  # devices' busy time over their active span
    # (the page's measure, prof.measures' duty_cycle_pct)
    device: dict = field(default_factory=dict)  # TPU: duty cycle, idle, utilisations (pct)
    input_wait: dict = field(default_factory=dict)  # the input wait share (.input_wait)
    verdict: dict = field(default_factory=dict)  # the page's input-bound verdict (ours)
    measures: pd.DataFrame = field(default_factory=pd.DataFrame)  # prof.measures
    bound_by: str = ""  # what bounds the steps (prof.critical_path_summary's sentence)
    xprof_device_duty_cycle_pct: float | None = None  # XProf's (TPUs: every device with
    # activity summed; None on GPUs, where XProf's overview shows no duty cycle)

    def __repr__(self) -> str:
        st = self.step_time
        lines = ["Overview"]
        if st.get("steps"):
            # (over the steps the mean's card counts, in its words: a pod's aligned steps)
            mean = self.measures.loc["step_time_mean_ms"] \
                if "step_time_mean_ms" in self.measures.index else None
            over = str(mean["scope"]) if mean is not None else f"over {st['steps']} steps"
            lines.append(f"  step time: {st['avg_ms']:.3f} ms avg (std {st['std_ms']:.3f}, "
                         f"min {st['min_ms']:.3f}, max {st['max_ms']:.3f}) {over} "
                         f"[{st['source']}]")
        lines += [f"  {self.verdict[k]}" for k in ("statement", "xprof_statement")
                  if self.verdict.get(k)]
        for key, row in self.measures.iterrows():  # the page's figures, as the cards say them
            if not key.startswith("step_time") and pd.notna(row["value"]):
                xprof = xprof_words(row)
                lines.append(f"  {row['label']}: {measure_text(row['value'], row['unit'])} "
                             f"({row['scope']})" + (f"; {xprof}" if xprof else ""))
        if self.bound_by:
            lines.append(f"  {self.bound_by}")
        lines.extend(f"  note: {r}" for r in self.reasons)
        return "\n".join(lines)


def _gpu_rows(gpus: pd.DataFrame) -> list[dict]:
    """The GPUs' capabilities from their plane stats, one dict each."""
    devices = []
    for _, row in gpus.iterrows():
        st = row["stats"]
        cc = (f"{st['compute_cap_major']}.{st['compute_cap_minor']}"
              if "compute_cap_major" in st else None)
        devices.append({"host": row["host"], "device": row["plane"],
                        "name": st.get("gpu_device_name"),
                        "clock_rate_khz": st.get("clock_rate"),
                        "core_count": st.get("core_count"),
                        "memory_bytes": st.get("memory_size"),
                        "memory_bandwidth_bytes_per_s": st.get("memory_bandwidth"),
                        "compute_capability": cc, "vendor": st.get("device_vendor"),
                        "events": int(row["events"])})
    return devices


def xprof_hosts_words(env: dict) -> str:
    """XProf's host count beside ours where its rule gives another (it counts machine names,
    ours the hosts' profiles): " (XProf: 1 host: ...)"; "" where they agree."""
    theirs = env.get("xprof_host_count")
    if theirs is None or theirs == env["host_count"]:
        return ""
    return f" (XProf: {counted(theirs, 'host')}: it counts distinct machine names)"


def xprof_host_count(info: dict) -> int:
    """XProf's overview's host count: the distinct machine names of the hosts' profiles (each
    its first XSpace host name, "localhost" without one), where ours counts the profiles
    (two workers on one machine: 2 hosts, XProf's 1)."""
    return len({(i.get("hostnames") or ["localhost"])[0] for i in info.values()})


def run_environment(parts: dict, planes: pd.DataFrame, info: dict) -> dict:
    """Hosts (``host_count``: the profiles; ``xprof_host_count``: XProf's, the distinct
    machine names), device type, the devices with events (``device_count``) and those
    without (``devices_without_events``, named), and the GPUs' capabilities from their plane
    stats."""
    gpus = planes[planes.plane.str.startswith(GPU_PLANE_PREFIX)]
    tpus = planes[planes.plane.str.startswith(TPU_PLANE_PREFIX)]
    device_type = "GPU" if len(gpus) else ("TPU" if len(tpus) else "CPU")
    hosts = list(info)
    kind = gpus if len(gpus) else tpus
    idle = kind[kind.events == 0]
    names = idle.plane.astype(str) if len(hosts) <= 1 else \
        idle.host.astype(str) + " " + idle.plane.astype(str)
    active = int((kind.events > 0).sum())
    return {"hosts": hosts, "host_count": len(hosts),
            "xprof_host_count": xprof_host_count(info), "device_type": device_type,
            "device_count": active, "device_planes": len(kind),
            "devices_without_events": names.tolist(), "devices_with_activity": active,
            "devices": pd.DataFrame(_gpu_rows(gpus))}


def device_text(env: dict) -> str:
    """The devices in words, counted where they have events: "3 GPUs (5 more without
    events)", "4 TPUs", "1 GPU", "CPU only"."""
    kind, count, idle = env["device_type"], env["device_count"], \
        len(env["devices_without_events"])
    if kind == "CPU":
        return "CPU only"
    if not count:
        return f"{idle} {kind}{'s' * (idle != 1)}, none with events"
    return f"{count} {kind}{'s' * (count != 1)}" + \
        (f" ({idle} more without events)" if idle else "")


def _step_summary(steps: pd.DataFrame, reasons: list) -> tuple[dict, pd.DataFrame]:
    """Step-time statistics and the average breakdown; a reason when there are no steps,
    a statement when they were inferred."""
    if steps.empty:
        reasons.append(NO_STEPS_REASON)
        return {"steps": 0}, pd.DataFrame(columns=["avg_ms", "std_ms"])
    # (the figures are XProf's: over the steps it counts, a pod's aligned across its hosts;
    # a step's time the slowest host's, the breakdown ``counted``, one host's rows)
    xprof = xprof_count(steps)
    counted, d = xprof.rows, xprof.step_ms
    source = str(steps.source.iloc[0])
    count, hosts = step_count_words(steps)
    step_time = {"steps": len(steps), "distinct": int(steps.index.nunique()), "hosts": hosts,
                 "count": count,
                 "counted": len(d), "avg_ms": float(d.mean()),
                 "std_ms": float(d.std(ddof=1)) if len(d) > 1 else 0.0,
                 "min_ms": float(d.min()), "max_ms": float(d.max()), "source": source}
    if source.startswith("inferred"):
        step_time["statement"] = (f"steps inferred from {source.split(': ', 1)[-1]}: the "
                                  "profile has no step markers")
        reasons.append(step_time["statement"])
    breakdown = pd.DataFrame({
        "avg_ms": counted[CATEGORY_COLUMNS].mean(),
        "std_ms": counted[CATEGORY_COLUMNS].std(ddof=1) if len(counted) > 1 else 0.0})
    return step_time, breakdown


def _device_reasons(env: dict, device: dict, counters: dict, reasons: list,
                    device_ops: bool = False) -> None:
    """What the device figures leave out: devices without events, missing TPU counters;
    ``device_ops``: the op tables have a device side (on CPU: the ops XLA runs there)."""
    if env["device_type"] == "CPU":
        reasons.append("no GPU or TPU in this profile: the step-time breakdown's device "
                       "columns are zero" + ("; the ops XLA runs on the CPU are the op tables' "
                                            "device side" if device_ops else ""))
    idle = env["devices_without_events"]
    if env["device_type"] != "CPU" and idle:
        reasons.append(f"{len(idle)} of the profile's {env['device_planes']} "
                       f"{env['device_type']} planes have no events and are not counted: "
                       + ", ".join(idle))
    missing = [k.split("_")[0].upper() for k in ("mxu_utilization_pct", "hbm_utilization_pct")
               if device and k not in counters]
    if missing:
        other = ""
        if "HBM" in missing and pd.notna(device.get("hbm_bw_utilization_pct")):
            # (a card with a near name and another source: say which)
            other = (f"; the figure 'HBM bandwidth of its peak', "
                     f"{device['hbm_bw_utilization_pct']:.1f}%, is another measure: the "
                     "bandwidth the program reached over the chip's peak, from the roofline")
        reasons.append(f"the host plane has no {' or '.join(missing)} utilisation counter, so "
                       "the overview leaves that figure out (XProf shows 0% in its place)"
                       + other)


def overview(parts: dict, steps: pd.DataFrame, op_stats_without_idle: pd.DataFrame,
             memory: MemoryAnalysis, environment: dict, recommendations: list,
             duty_cycle: pd.DataFrame | None = None, tpu=None, xla=None,
             roofline: pd.DataFrame | None = None, host_ops: tuple | None = None,
             precision: dict | None = None, input_wait: dict | None = None,
             measures: pd.DataFrame | None = None) -> Overview:
    """The overview page from a profile's tables (``memory``: the memory tables by name;
    ``duty_cycle``: the devices' duty cycle; ``tpu``, ``xla``, ``roofline``, ``host_ops``: for
    the TPU figures; ``precision``, ``input_wait``: the shares its cards quote,
    :mod:`.precision`, :mod:`.input_wait`)."""
    reasons: list = []
    step_time, breakdown = _step_summary(steps, reasons)
    env = environment
    ops = op_stats_without_idle
    top = ["operation", "type", "occurrences", "total_self_time_us", "self_time_pct"]
    top_device = ops[ops.host_or_device == "Device"].head(10)[top].reset_index(drop=True)
    top_host = ops[ops.host_or_device == "Host"].head(10)[top].reset_index(drop=True)
    if memory.summary.empty:
        reasons.append("no memory events in this profile (on CPU only some allocators and "
                       "workloads record them)")
    duty = duty_cycle.attrs.get("device_duty_cycle_pct") if duty_cycle is not None else None
    device = device_figures(tpu, xla, roofline, host_ops, duty)
    _device_reasons(env, device, tpu.counters if device else {}, reasons, len(top_device) > 0)
    measures = pd.DataFrame() if measures is None else measures
    xprof = bottleneck_verdicts(steps)
    verdict = input_verdict(measures, xprof) if len(measures) else {}
    ours = value_of(measures, "duty_cycle_pct") if len(measures) else None
    xprof_duty = duty if env.get("device_type") == "TPU" else None  # (none on GPUs: XProf's
    # overview shows a duty cycle on TPUs only)
    return Overview(step_time, breakdown, xprof, dict(precision or {}), top_device, top_host,
                    env, list(recommendations), reasons, duty if ours is None else ours, device,
                    dict(input_wait or {}), verdict, measures,
                    xprof_device_duty_cycle_pct=xprof_duty)


# Over this many events the first views (the overview, the trace viewer's first state) do not
# wait for the critical path (its graph and walk take about 0.5 us of CPU an event: tens of
# seconds on a 1 GB host, for one sentence)
OVERVIEW_PATH_MAX_EVENTS = 5_000_000


def with_bound_by(ov: Overview, results) -> Overview:
    """``ov`` with what bounds the steps (prof.critical_path_summary's sentence), computed
    for it unless the profile holds over OVERVIEW_PATH_MAX_EVENTS events and the critical
    path is not computed yet; then a reason says how to ask for it."""
    events = int(results["planes"].events.sum())
    if events > OVERVIEW_PATH_MAX_EVENTS and not results.ready("critical_path_summary"):
        note = (f"what bounds the steps (their critical path) is left out of this overview of "
                f"{events / 1e6:.1f} M events, so that the overview does not wait for it: "
                "prof.critical_path_summary computes it")
        return replace(ov, bound_by="", reasons=ov.reasons + [note])
    sentence = results["critical_path_summary"].attrs.get("sentence", "")
    return replace(ov, bound_by=str(sentence))


ANALYSES = (
    Analysis("environment", combine=run_environment, needs=("planes", "info")),
    Analysis("overview", combine=overview,
             needs=("steps", "op_stats_without_idle", "memory", "environment",
                    "recommendations", "duty_cycle", "tpu", "xla", "roofline",
                    "host_ops", "precision", "input_wait", "measures")),
)
