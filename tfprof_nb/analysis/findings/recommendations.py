"""Findings with evidence and a suggested fix, from the profiler guide's best practices.

Fixes are worded for the framework that wrote the profile and its GPU vendor (see
:mod:`..trace.framework` and :mod:`.advice`): a JAX profile gets JAX's remedies (``jax.lax.scan``,
``XLA_PYTHON_CLIENT_MEM_FRACTION``), never TensorFlow's environment variables, and an AMD
profile no CUDA allocator.  Allocators with the same cause and remedy make one finding that
lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...constants import (HIGH_SHARE_PCT, HIGHLY_INPUT_BOUND_PCT, MODERATE_SHARE_PCT,
                         MODERATELY_INPUT_BOUND_PCT)
from ..gpu.gpu_time import PROFILE_WINDOW
from ..runtime.unit import Analysis
from ..tf.input_pipeline import bottleneck_verdicts
from ..tf.memory import LABELS, MemoryAnalysis
from ..trace.framework import UNKNOWN, Framework
from .advice import allocator_fix, fix, is_device_allocator
from .evidence import CAUSE_WORDS, evidence_words
from .input_wait import active_devices

__all__ = ["ANALYSES", "Finding", "Target", "recommendations"]


@dataclass
class Finding:
    """One recommendation: what was found, the numbers behind it, and what to do."""

    kind: str
    what: str
    evidence: dict = field(default_factory=dict)
    fix: str = ""
    severity: str = "moderate"  # "high" or "moderate"

    def __str__(self) -> str:
        ev = evidence_words(self.evidence)
        return f"[{self.severity}] {self.what}" + (f" ({ev})" if ev else "") + \
            f". Fix: {self.fix}"


@dataclass(frozen=True)
class Target:
    """Whom the advice is for: the framework (``"jax"``, ``"tensorflow"``, ``"unknown"``) and
    the GPU vendors (``"nvidia"``, ``"amd"``, ``"unknown"``; empty without GPUs)."""

    framework: str = UNKNOWN
    vendors: tuple = ()


def _input_bound(tf_data, wait: dict, out, target: Target):
    """Steps (or the GPUs, see :mod:`.input_wait`) waiting for input much of the time."""
    pct = wait.get("pct", 0.0)
    if pct < MODERATELY_INPUT_BOUND_PCT:
        return
    text = fix("input_bound", target.framework)
    if not tf_data.bottlenecks.empty:
        b = tf_data.bottlenecks.iloc[0]
        text = f"The slowest tf.data stage is {b.iterator_long_name}: {b.suggestion_text}"
    what = f"Steps wait for input {pct:.1f}% of the time" if wait["source"] == "steps" else \
        f"The GPUs wait for input {pct:.1f}% of their step time"
    out.append(Finding("input_bound", what, {"input_pct": pct}, text,
                       "high" if pct >= HIGHLY_INPUT_BOUND_PCT else "moderate"))


def _launch_gaps(util: pd.DataFrame, duty: pd.DataFrame) -> dict:
    """GPU evidence of launch overhead: the share of kernels under 10 us and of the devices'
    wall time spent in short gaps between kernels (empty without device rows)."""
    dev = active_devices(util)
    wall = float(dev.wall_us.sum()) if len(dev) else 0.0
    kernels = int(duty.kernels.sum()) if len(duty) and "kernels" in duty else 0
    if wall <= 0 or kernels == 0:
        return {}
    return {"kernels_under_10us_pct": 100 * float(duty.kernels_under_10us.sum()) / kernels,
            "launch_gap_idle_pct": 100 * float(dev.launch_bound_us.sum()) / wall,
            "host_gap_idle_pct": 100 * float(dev.host_bound_us.sum()) / wall}


def _launch_bound(ks: pd.DataFrame, verdict, gaps: dict, out, target: Target):
    pct = verdict.get("kernel_launch_pct", 0.0)
    small = ks[ks.avg_duration_us < 10] if len(ks) else ks
    share_small = (small.occurrences.sum() / ks.occurrences.sum()) if len(ks) else 0.0
    by_gaps = bool(gaps) and gaps["kernels_under_10us_pct"] >= 50 and \
        gaps["launch_gap_idle_pct"] + gaps["host_gap_idle_pct"] >= 10
    many_small = bool(len(ks)) and share_small >= 0.5 and ks.occurrences.sum() >= 1000
    if not (pct >= MODERATE_SHARE_PCT or by_gaps or many_small):
        return
    what = "Many small GPU kernels: launch overhead dominates"
    if gaps:
        idle = gaps["launch_gap_idle_pct"] + gaps["host_gap_idle_pct"]
        what = (f"{gaps['kernels_under_10us_pct']:.0f} % of kernels run < 10 us and the "
                f"devices wait {idle:.0f} % of the time for their next launch")
    out.append(Finding(
        "launch_bound", what,
        {"kernel_launch_pct": pct, "kernels_under_10us_share": float(share_small), **gaps},
        fix("launch_bound", target.framework),
        "high" if pct >= HIGH_SHARE_PCT or (by_gaps and gaps["launch_gap_idle_pct"]
                                            >= HIGH_SHARE_PCT) else "moderate"))


_CAUSE_FIX = {"sync_memcpy_us": "sync_memcpy", "input_us": "input_bound",
              "launch_bound_us": "launch_bound", "host_bound_us": "host_overhead"}
_CAUSES = [f"{c}_us" for c in CAUSE_WORDS]


def _gpu_idle(util: pd.DataFrame, out, target: Target):
    """Devices idle much of their steps (or of their active span, without steps): the
    largest cause and its fix."""
    dev = active_devices(util)
    wall = float(dev.wall_us.sum()) if len(dev) else 0.0
    if wall <= 0:
        return
    idle_pct = 100 * float(dev.idle_us.sum()) / wall
    causes = dev[_CAUSES].sum()
    top = str(causes.idxmax())
    if idle_pct < 30:
        return
    kind = _CAUSE_FIX.get(top)
    text = fix(kind, target.framework) if kind else (
        "Open the trace viewer on a step and look at what the device waits for between "
        "kernels (events, other streams, collectives on other devices).")
    top_pct = 100 * float(causes[top]) / wall
    span = "their active span (the profile has no steps)" \
        if (dev.step == PROFILE_WINDOW).all() else "their step time"
    share = "most of it" if top_pct > idle_pct / 2 else "the largest part"
    out.append(Finding(
        "gpu_idle", f"Devices idle {idle_pct:.0f} % of {span}, {share} "
        f"{CAUSE_WORDS[top.removesuffix('_us')]}",
        {"idle_pct": idle_pct, "top_cause": top.removesuffix("_us"),
         "top_cause_pct": top_pct}, text, "high" if idle_pct >= 50 else "moderate"))


def _exposed_collectives(overlap: pd.DataFrame, out, target: Target):
    wall = float(overlap.wall_us.sum()) if len(overlap) else 0.0
    if wall <= 0 or overlap.collective_us.sum() <= 0:
        return
    exposed_pct = 100 * float(overlap.exposed_us.sum()) / wall
    if exposed_pct < 5:
        return
    out.append(Finding(
        "exposed_collectives", f"Collectives leave the devices without compute "
        f"{exposed_pct:.0f} % of the step time",
        {"exposed_pct": exposed_pct,
         "hidden_pct_of_collectives": 100 * float(overlap.hidden_us.sum())
         / float(overlap.collective_us.sum())},
        fix("exposed_collectives", target.framework),
        "high" if exposed_pct >= 20 else "moderate"))


def _stragglers(table: pd.DataFrame, steps: pd.DataFrame, out, target: Target):
    if not len(table) or table.hosts.max() < 2 or steps.empty:
        return
    lag_pct = 100 * float(table.lag_us.mean()) / (1e3 * float(steps.duration_ms.mean()))
    if lag_pct < 5:
        return
    worst = table.last_host.value_counts()
    out.append(Finding(
        "straggler", f"Host {worst.index[0]} finishes last in {int(worst.iloc[0])} of "
        f"{len(table)} steps, {lag_pct:.0f} % of a step after the median host",
        {"host": str(worst.index[0]), "lag_pct": lag_pct,
         "mean_lag_us": float(table.lag_us.mean())},
        fix("straggler", target.framework), "high" if lag_pct >= 20 else "moderate"))


def _mixed_precision(precision: dict, environment: dict, out, target: Target):
    """A Tensor-Core GPU computing in 32 bit, by the profile's one precision share
    (:mod:`.precision`: the matrix multiplications' HLO operand types where the HLO is known,
    else the step breakdown's; nothing where it cannot be told)."""
    devices = environment["devices"]
    if not precision or devices.empty or "compute_capability" not in devices:
        return
    capable = devices.compute_capability.dropna()
    capable = capable[capable.map(lambda c: float(c) >= 7.0)]
    if capable.empty or precision["pct16"] >= 50:
        return
    cores = "Matrix-core" if target.vendors == ("amd",) else "Tensor-Core"
    what = "runs most matrix multiplications in 32 bit" if precision["source"] == "hlo" \
        else "computes mostly in 32 bit"
    out.append(Finding(
        "mixed_precision", f"{cores}-capable GPU {what}",
        {precision["evidence_key"]: float(precision["pct16"]),
         "compute_capability": str(capable.iloc[0])},
        fix("mixed_precision", target.framework), "moderate"))


def _layout(ks: pd.DataFrame, ops: pd.DataFrame, out, target: Target):
    nchw = ks[ks.kernel_name.str.contains("nchw", case=False)] if len(ks) else ks
    transposes = ops[(ops.host_or_device == "Device") & (ops.type == "Transpose")]
    share = float(transposes.self_time_pct.sum()) if len(transposes) else 0.0
    if len(nchw) or share >= 5:
        out.append(Finding(
            "layout", "Kernels run in NCHW layout or spend time transposing",
            {"nchw_kernels": int(len(nchw)), "device_transpose_pct": share},
            fix("layout", target.framework), "moderate"))


def _command_buffers(hlo: pd.DataFrame, out, target: Target):
    """GPU time inside XLA command buffers (CUDA graphs) whose kernels could not be attributed
    to HLO ops (:mod:`..xla.command_buffers`): one unresolved row per buffer."""
    gpu = hlo[hlo.device_type == "GPU"] if len(hlo) else hlo
    if gpu.empty:
        return
    total = float(gpu.total_self_time_us.sum())
    buffers = gpu[gpu.attribution == "unresolved"]
    pct = 100 * float(buffers.total_self_time_us.sum()) / total if total > 0 else 0.0
    if pct < MODERATE_SHARE_PCT:
        return
    out.append(Finding(
        "command_buffers", f"{pct:.0f} % of GPU op time ran inside XLA command buffers (CUDA "
        "graphs) in kernels that could not be attributed to HLO ops: no HLO op, FLOPs or "
        "framework op for that time",
        {"command_buffer_pct": pct, "command_buffers": int(buffers.hlo_op_name.nunique())},
        fix("command_buffers", target.framework), "moderate"))


def _host_python(verdict, out, target: Target):
    pct = verdict.get("all_other_pct", 0.0)
    if pct >= HIGH_SHARE_PCT:
        out.append(Finding(
            "host_overhead", "Much step time is untraced host work between ops (Python)",
            {"all_other_pct": pct}, fix("host_overhead", target.framework),
            "high" if pct >= 30 else "moderate"))


def _memory(summary: pd.DataFrame, out, target: Target = Target()):
    """Allocators peaking near their capacity, and allocators fragmented at their peak: one
    finding per cause and remedy (device or host allocator), listing every allocator (with
    its host when there are several) that has it."""
    if summary.empty:
        return
    cap = summary.memory_capacity_bytes.to_numpy(dtype=float)
    peak = summary.peak_bytes_in_use.to_numpy(dtype=float)
    peak_pct = np.divide(100 * peak, cap, out=np.zeros(len(cap)), where=cap > 0)
    labels = summary.attrs.get(LABELS, {})
    names = pd.Series([labels.get((h, a), a) for h, a in zip(
        summary["host"].astype(str), summary.allocator.astype(str))], index=summary.index)
    if "host" in summary and summary["host"].nunique() > 1:
        names = summary["host"].astype(str) + "/" + names
    table = pd.DataFrame({
        "label": names.to_numpy(), "peak": peak, "cap": cap, "peak_pct": peak_pct,
        "frag": summary.fragmentation_at_peak_pct.to_numpy(dtype=float),
        "device": summary.allocator.map(is_device_allocator).to_numpy(dtype=bool)})
    for device, rows in table[table.peak_pct >= 90].groupby("device", sort=False):
        worst = rows.loc[rows.peak_pct.idxmax()]
        out.append(Finding(
            "memory_capacity", _listing(rows.label, "peaks near its capacity",
                                        "peak near their capacity"),
            {"allocators": ", ".join(rows.label), "peak_pct": float(worst.peak_pct),
             "peak_bytes": int(worst.peak), "capacity_bytes": int(worst.cap)},
            allocator_fix("memory_capacity", bool(device), target.framework, target.vendors),
            "high"))
    for device, rows in table[table.frag >= 30].groupby("device", sort=False):
        out.append(Finding(
            "fragmentation", _listing(rows.label, "is fragmented at its peak",
                                      "are fragmented at their peak"),
            {"allocators": ", ".join(rows.label), "fragmentation_pct": float(rows.frag.max())},
            allocator_fix("fragmentation", bool(device), target.framework, target.vendors),
            "moderate"))


def _listing(labels: pd.Series, one: str, many: str) -> str:
    if len(labels) == 1:
        return f"Allocator {labels.iloc[0]} {one}"
    return f"{len(labels)} allocators {many}: {', '.join(labels)}"


def recommendations(parts: dict, steps: pd.DataFrame, kernel_stats: pd.DataFrame,
                    op_stats: pd.DataFrame, tf_data, environment: dict,
                    memory: MemoryAnalysis, framework: Framework,
                    gpu_utilization: pd.DataFrame,
                    duty_cycle: pd.DataFrame, gpu_overlap: pd.DataFrame,
                    stragglers: pd.DataFrame, hlo_stats: pd.DataFrame, precision: dict,
                    input_wait: dict) -> list[Finding]:
    """All findings from a profile's tables, most severe first, worded for its framework and
    GPUs (``memory``: the memory tables by name; ``precision`` and ``input_wait``: the
    shares the overview quotes too)."""
    target = Target(framework.name, framework.gpu_vendors)
    verdict = bottleneck_verdicts(steps)
    out: list[Finding] = []
    _input_bound(tf_data, input_wait, out, target)
    gaps = _launch_gaps(gpu_utilization, duty_cycle)
    _launch_bound(kernel_stats, verdict, gaps, out, target)
    _gpu_idle(gpu_utilization, out, target)
    _exposed_collectives(gpu_overlap, out, target)
    _stragglers(stragglers, steps, out, target)
    _mixed_precision(precision, environment, out, target)
    _layout(kernel_stats, op_stats, out, target)
    _command_buffers(hlo_stats, out, target)
    _host_python(verdict, out, target)
    _memory(memory.summary, out, target)
    return sorted(out, key=lambda f: f.severity != "high")


ANALYSES = (Analysis("recommendations", combine=recommendations,
                     needs=("steps", "kernel_stats", "op_stats", "tf_data", "environment",
                            "memory", "framework", "gpu_utilization", "duty_cycle",
                            "gpu_overlap", "stragglers", "hlo_stats", "precision",
                            "input_wait")),)
