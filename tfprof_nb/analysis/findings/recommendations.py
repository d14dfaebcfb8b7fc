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
from ..runtime.unit import Analysis
from ..tf.memory import LABELS, MemoryAnalysis
from ..trace.framework import UNKNOWN, Framework
from .advice import TF_SESSION, allocator_fix, fix, is_device_allocator
from .evidence import evidence_words
from .measure_words import device_words, get, idle_part_words, scope_tail, value_of

__all__ = ["ANALYSES", "Finding", "Target", "recommendations"]


@dataclass
class Finding:
    """One recommendation: what was found, the numbers behind it, and what to do."""

    kind: str
    what: str
    evidence: dict = field(default_factory=dict)
    fix: str = ""
    severity: str = "moderate"  # "high" or "moderate"
    measure: str = ""  # the key of prof.measures that ``what`` quotes (evidence_words skips it)
    said: tuple = ()  # other evidence keys ``what`` quotes (their words left out too)

    def evidence_text(self) -> str:
        """The evidence in words, without what the finding's sentence already says."""
        return evidence_words(self.evidence, skip=(self.measure, *self.said))

    def __str__(self) -> str:
        ev = self.evidence_text()
        return f"[{self.severity}] {self.what}" + (f" ({ev})" if ev else "") + \
            f". Fix: {self.fix}"


@dataclass(frozen=True)
class Target:
    """Whom the advice is for: the framework (``"jax"``, ``"tensorflow"``, ``"unknown"``) and
    the GPU vendors (``"nvidia"``, ``"amd"``, ``"unknown"``; empty without GPUs)."""

    framework: str = UNKNOWN
    vendors: tuple = ()


def _severity(pct: float) -> str:
    return "high" if pct >= HIGHLY_INPUT_BOUND_PCT else "moderate"


def _input_bound(tf_data, table: pd.DataFrame, out, target: Target):
    """Steps (or the GPUs, see :mod:`.input_wait`) waiting for input much of the time."""
    row = get(table, "input_wait_pct")
    if row is None or not row["value"] >= MODERATELY_INPUT_BOUND_PCT:  # (NaN: unknown)
        return
    pct = float(row["value"])
    text = fix("input_bound", target.framework)
    if not tf_data.bottlenecks.empty:
        b = tf_data.bottlenecks.iloc[0]
        text = f"The slowest tf.data stage is {b.iterator_long_name}: {b.suggestion_text}"
    if row["device_count"]:
        who, one = device_words(row)
        what = (f"{who} wait{'s' * one} for input {pct:.1f}% of {'its' if one else 'their'} "
                f"time {scope_tail(row)}{idle_part_words(table, row)}")
    else:
        what = f"Steps wait for input {pct:.1f}% of the time, over {row['when']}"
    out.append(Finding("input_bound", what, {"input_wait_pct": pct}, text, _severity(pct),
                       "input_wait_pct"))


# the causes of the GPUs' idle time that make a finding each (input: _input_bound): the
# measure, the finding's kind, its words and its fix (None: look in the trace viewer)
_IDLE_CAUSES = (
    ("host_wait_pct", "host_overhead", "waiting for kernels the host launches late",
     "host_overhead"),
    ("launch_gap_pct", "launch_bound", "in short gaps between kernels (launch overhead)",
     "launch_bound"),
    ("copy_sync_pct", "sync_memcpy", "copying or waiting for the host to synchronise",
     "sync_memcpy"),
    ("dependency_wait_pct", "gpu_idle", "with a kernel queued that waits on a dependency "
     "(events, other streams, untraced work)", None),
)
_TRACE_FIX = ("Open the trace viewer on a step and look at what the device waits for between "
              "kernels (events, other streams, collectives on other devices).")


def _idle_causes(table: pd.DataFrame, out, target: Target):
    """One finding for each cause of the GPUs' idle time in the steps that takes at least
    5 % of it (their times never overlap: the device accounting splits idle time by
    cause), with XProf's step-breakdown figure of the same time beside it as XProf's."""
    for key, kind, words, fix_kind in _IDLE_CAUSES:
        row = get(table, key)
        if row is None or row["value"] < MODERATELY_INPUT_BOUND_PCT:
            continue
        pct, (who, one) = float(row["value"]), device_words(row)
        what = (f"{who} idle{'s' * one} {pct:.1f}% of {'its' if one else 'their'} time "
                f"{scope_tail(row)} {words}{idle_part_words(table, row)}")
        evidence = {key: pct}
        if key == "host_wait_pct":
            evidence["xprof_all_other_pct"] = value_of(table, "all_other_pct")
        if key == "launch_gap_pct":
            evidence["small_kernels_pct"] = value_of(table, "small_kernels_pct")
            evidence["xprof_kernel_launch_pct"] = value_of(table, "kernel_launch_pct")
        out.append(Finding(kind, what, evidence,
                           fix(fix_kind, target.framework) if fix_kind else _TRACE_FIX,
                           _severity(pct), key))


def _launch_bound(ks: pd.DataFrame, table: pd.DataFrame, out, target: Target):
    """Without the GPUs' own accounting: XProf's step-breakdown kernel-launch share, or many
    small kernels in the kernel stats."""
    pct = value_of(table, "kernel_launch_pct", 0.0)
    small = ks[ks.avg_duration_us < 10] if len(ks) else ks
    share = 100 * float(small.occurrences.sum() / ks.occurrences.sum()) if len(ks) else 0.0
    many_small = bool(len(ks)) and share >= 50 and ks.occurrences.sum() >= 1000
    if not (pct >= MODERATE_SHARE_PCT or many_small):
        return
    out.append(Finding(
        "launch_bound", "Many small GPU kernels: launch overhead dominates",
        {"kernel_launch_pct": pct, "small_kernel_types_pct": share},
        fix("launch_bound", target.framework),
        "high" if pct >= HIGH_SHARE_PCT else "moderate"))


def _exposed_collectives(overlap: pd.DataFrame, out, target: Target):
    wall = float(overlap.wall_us.sum()) if len(overlap) else 0.0
    if wall <= 0 or overlap.collective_us.sum() <= 0:
        return
    exposed_pct = 100 * float(overlap.exposed_us.sum()) / wall
    if exposed_pct < 5:
        return
    out.append(Finding(
        "exposed_collectives", f"Collectives leave the devices without compute "
        f"{exposed_pct:.1f}% of the step time",
        {"exposed_pct": exposed_pct,
         "hidden_pct_of_collectives": 100 * float(overlap.hidden_us.sum())
         / float(overlap.collective_us.sum())},
        fix("exposed_collectives", target.framework),
        "high" if exposed_pct >= 20 else "moderate",
        said=("exposed_pct",)))


def _stragglers(table: pd.DataFrame, steps: pd.DataFrame, out, target: Target):
    """The host that finishes the steps compared across hosts last, by how much after the
    others: the median finisher's end, or the other's where two finish each step (their
    median is halfway between them, which no host is); the share is of each step's time
    (its slowest host's), averaged over the compared steps."""
    if not len(table) or table.hosts.max() < 2 or steps.empty:
        return
    two = bool(((table.devices == 2) & (table.hosts == 2)).all())  # (one finisher a host)
    lag = table.spread_us if two else table.lag_us
    slowest = (1e3 * steps.duration_ms).groupby(level=0).max()
    took = slowest.reindex(table.step.to_numpy()).to_numpy(float)
    lag_pct = 100 * float(np.nanmean(lag.to_numpy(float) / took)) if np.isfinite(took).any() \
        else float("nan")
    if not lag_pct >= 5:
        return
    worst = table.last_host.value_counts()
    other = "the other host" if two else "the median host"
    out.append(Finding(
        "straggler", f"Host {worst.index[0]} finishes last in {int(worst.iloc[0])} of the "
        f"{len(table)} steps compared across hosts, on average {lag.mean() / 1e3:,.2f} ms after "
        f"{other}: {lag_pct:.1f}% of the step's time",
        {"host": str(worst.index[0]), "lag_pct": lag_pct, "mean_lag_us": float(lag.mean())},
        fix("straggler", target.framework), "high" if lag_pct >= 20 else "moderate",
        said=("host", "lag_pct", "mean_lag_us")))


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
        "command_buffers", f"{pct:.1f}% of GPU op time ran inside XLA command buffers (CUDA "
        "graphs) in kernels that could not be attributed to HLO ops: no HLO op, FLOPs or "
        "framework op for that time",
        {"command_buffer_pct": pct, "command_buffers": int(buffers.hlo_op_name.nunique())},
        fix("command_buffers", target.framework), "moderate", said=("command_buffer_pct",)))


def _host_python(table: pd.DataFrame, out, target: Target):
    """Without the GPUs' own accounting: XProf's 'All Others' share of the steps."""
    pct = value_of(table, "all_other_pct", 0.0)
    if pct >= HIGH_SHARE_PCT:
        out.append(Finding(
            "host_overhead", f"{pct:.1f}% of the step time is host work between the ops "
            "(Python and framework code), XProf's 'All Others', over "
            f"{get(table, 'all_other_pct')['when']}", {"all_other_pct": pct},
            fix("host_overhead", target.framework), "high" if pct >= 30 else "moderate",
            "all_other_pct"))


# fragmentation at an allocator's peak matters where that peak holds this much of its
# capacity at least (or the capacity is unknown): an arena whose peak holds 1% of it has room
# for any free block it lacks (H100 and MI300X captures: 41-51% fragmented at 0.2-1.3% of
# the capacity, which memory-saving advice would only slow down)
FRAGMENTATION_MATTERS_PCT = 50.0


def _memory(summary: pd.DataFrame, out, target: Target = Target()):
    """Allocators peaking near their capacity, and allocators fragmented at a peak that holds
    much of their capacity: one finding per cause and remedy (device or host allocator),
    listing every allocator (with its host when there are several) that has it."""
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
        # (several allocators: the figures are the fullest one's, named)
        fullest = {"fullest_allocator": str(worst.label)} if len(rows) > 1 else {}
        out.append(Finding(
            "memory_capacity", _listing(rows.label, "peaks near its capacity",
                                        "peak near their capacity"),
            {"allocators": ", ".join(rows.label), **fullest, "peak_pct": float(worst.peak_pct),
             "peak_bytes": int(worst.peak), "capacity_bytes": int(worst.cap)},
            allocator_fix("memory_capacity", bool(device), target.framework, target.vendors),
            "high"))
    tight = (table.peak_pct >= FRAGMENTATION_MATTERS_PCT) | ~(table.cap > 0)
    for device, rows in table[(table.frag >= 30) & tight].groupby("device", sort=False):
        out.append(Finding(
            "fragmentation", _listing(rows.label, "is fragmented at its peak",
                                      "are fragmented at their peak"),
            {"allocators": ", ".join(rows.label),
             # (several allocators: the most fragmented one's figure, said so)
             ("highest_fragmentation_pct" if len(rows) > 1 else "fragmentation_pct"):
             float(rows.frag.max())},
            allocator_fix("fragmentation", bool(device), target.framework, target.vendors),
            "moderate"))


def _listing(labels: pd.Series, one: str, many: str) -> str:
    if len(labels) == 1:
        return f"Allocator {labels.iloc[0]} {one}"
    return f"{len(labels)} allocators {many}: {', '.join(labels)}"


def recommendations(parts: dict, kernel_stats: pd.DataFrame, op_stats: pd.DataFrame,
                    tf_data, environment: dict, memory: MemoryAnalysis, framework: Framework,
                    gpu_overlap: pd.DataFrame, stragglers: pd.DataFrame,
                    hlo_stats: pd.DataFrame, precision: dict, measures: pd.DataFrame,
                    steps: pd.DataFrame, hardware_findings: list) -> list[Finding]:
    """All findings from a profile's tables, most severe first, worded for its framework and
    GPUs; every share they quote is a row of ``measures`` (:mod:`.measures`), and no two
    findings count the same time: with the GPUs' own accounting, each cause of their idle
    time is one finding, else XProf's step-breakdown shares are."""
    target = Target(TF_SESSION if framework.session else framework.name,
                    framework.gpu_vendors)
    out: list[Finding] = []
    _input_bound(tf_data, measures, out, target)
    if get(measures, "host_wait_pct") is not None:
        _idle_causes(measures, out, target)
    else:
        _launch_bound(kernel_stats, measures, out, target)
        _host_python(measures, out, target)
    _exposed_collectives(gpu_overlap, out, target)
    _stragglers(stragglers, steps, out, target)
    _mixed_precision(precision, environment, out, target)
    _layout(kernel_stats, op_stats, out, target)
    _command_buffers(hlo_stats, out, target)
    _memory(memory.summary, out, target)
    out += hardware_findings  # the hardware samples' (.hardware_findings)
    return sorted(out, key=lambda f: f.severity != "high")


ANALYSES = (Analysis("recommendations", combine=recommendations,
                     needs=("kernel_stats", "op_stats", "tf_data", "environment", "memory",
                            "framework", "gpu_overlap", "stragglers", "hlo_stats",
                            "precision", "measures", "steps", "hardware_findings")),)
