"""Findings with evidence and a suggested fix, from the profiler guide's best practices.

Fixes are worded for the framework that wrote the profile and its GPU vendor (see
:mod:`.framework` and :mod:`.advice`): a JAX profile gets JAX's remedies (``jax.lax.scan``,
``XLA_PYTHON_CLIENT_MEM_FRACTION``), never TensorFlow's environment variables, and an AMD
profile no CUDA allocator.  Allocators with the same cause and remedy make one finding that
lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..constants import (HIGH_SHARE_PCT, HIGHLY_INPUT_BOUND_PCT, MODERATE_SHARE_PCT,
                         MODERATELY_INPUT_BOUND_PCT)
from .advice import allocator_fix, fix, is_device_allocator
from .framework import UNKNOWN, Framework
from .input_pipeline import bottleneck_verdicts
from .unit import Analysis

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
        ev = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in self.evidence.items())
        return f"[{self.severity}] {self.what} ({ev}). Fix: {self.fix}"


@dataclass(frozen=True)
class Target:
    """Whom the advice is for: the framework (``"jax"``, ``"tensorflow"``, ``"unknown"``) and
    the GPU vendors (``"nvidia"``, ``"amd"``, ``"unknown"``; empty without GPUs)."""

    framework: str = UNKNOWN
    vendors: tuple = ()


def _input_bound(tf_data, verdict, out, target: Target):
    if verdict.get("classification") not in ("host", "both") or \
            verdict.get("input_pct", 0) < MODERATELY_INPUT_BOUND_PCT:
        return
    pct = verdict["input_pct"]
    text = fix("input_bound", target.framework)
    if not tf_data.bottlenecks.empty:
        b = tf_data.bottlenecks.iloc[0]
        text = f"The slowest tf.data stage is {b.iterator_long_name}: {b.suggestion_text}"
    out.append(Finding("input_bound", f"Steps wait for input {pct:.1f}% of the time",
                       {"input_pct": pct}, text,
                       "high" if pct >= HIGHLY_INPUT_BOUND_PCT else "moderate"))


def _launch_bound(ks: pd.DataFrame, verdict, out, target: Target):
    pct = verdict.get("kernel_launch_pct", 0.0)
    small = ks[ks.avg_duration_us < 10] if len(ks) else ks
    share_small = (small.occurrences.sum() / ks.occurrences.sum()) if len(ks) else 0.0
    many_small = bool(len(ks)) and share_small >= 0.5 and ks.occurrences.sum() >= 1000
    if pct >= MODERATE_SHARE_PCT or many_small:
        out.append(Finding(
            "launch_bound", "Many small GPU kernels: launch overhead dominates",
            {"kernel_launch_pct": pct, "kernels_under_10us_share": float(share_small)},
            fix("launch_bound", target.framework),
            "high" if pct >= HIGH_SHARE_PCT else "moderate"))


def _mixed_precision(steps: pd.DataFrame, environment: dict, out, target: Target):
    devices = environment["devices"]
    if devices.empty or "compute_capability" not in devices:
        return
    capable = devices.compute_capability.dropna()
    capable = capable[capable.map(lambda c: float(c) >= 7.0)]
    if capable.empty or steps.empty or steps.device_compute_ms.sum() <= 0:
        return
    pct16 = 100 * steps.device_compute_16_ms.sum() / steps.device_compute_ms.sum()
    if pct16 < 50:
        cores = "Matrix-core" if target.vendors == ("amd",) else "Tensor-Core"
        out.append(Finding(
            "mixed_precision", f"{cores}-capable GPU computes mostly in 32 bit",
            {"device_compute_16bit_pct": float(pct16),
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
    names = summary.allocator.astype(str)
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
                    op_stats: pd.DataFrame, tf_data, environment: dict, memory: tuple,
                    framework: Framework) -> list[Finding]:
    """All findings from a profile's tables, most severe first, worded for its framework and
    GPUs (``memory``: the (summary, timeline, breakdown) tables)."""
    target = Target(framework.name, framework.gpu_vendors)
    verdict = bottleneck_verdicts(steps)
    out: list[Finding] = []
    _input_bound(tf_data, verdict, out, target)
    _launch_bound(kernel_stats, verdict, out, target)
    _mixed_precision(steps, environment, out, target)
    _layout(kernel_stats, op_stats, out, target)
    _host_python(verdict, out, target)
    _memory(memory[0], out, target)
    return sorted(out, key=lambda f: f.severity != "high")


ANALYSES = (Analysis("recommendations", combine=recommendations,
                     needs=("steps", "kernel_stats", "op_stats", "tf_data", "environment",
                            "memory", "framework")),)
