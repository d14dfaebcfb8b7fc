"""Input pipeline analysis: is the program input-bound, and where input time goes on the host.

The verdict and its wording follow the reference (the share of step time waiting for input:
20% or more is highly input-bound, 5% moderately, and much "All others" time makes it
potentially input-bound).  The host side splits tf.data time into reading on demand, reading
in advance, preprocessing and enqueueing, from the self time of the input ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...constants import (HIGH_SHARE_PCT, HIGHLY_INPUT_BOUND_PCT, MODERATE_SHARE_PCT,
                         MODERATELY_INPUT_BOUND_PCT)
from ..runtime.unit import Analysis
from ..steps.xprof_counted import xprof_count, xprof_steps

__all__ = ["ANALYSES", "InputPipelineAnalysis", "input_pipeline_analysis",
           "bottleneck_verdicts"]

_SOURCES = ("::TFRecord", "::TextLine", "::FixedLengthRecord", "::SSTable", "::RecordIO",
            "::ArrayRecord")
_ADVANCED = ("::MemoryReader", "::MemoryWriter", "::Interleave", "::Prefetch", "::ParallelMap")
HOST_CATEGORIES = {
    "enqueue": "Enqueuing data to device",
    "demanded_file_read": "Reading data from files on demand",
    "advanced_file_read": "Reading data from files in advance",
    "preprocessing": "Data preprocessing",
    "unclassified": "Other data reading or processing",
}
NO_STEPS = ("No step time measured. Therefore we cannot tell where the performance bottleneck "
            "is.")


@dataclass
class InputPipelineAnalysis:
    """Summary (verdict and shares), device side (per step), host side and input ops."""

    summary: dict = field(default_factory=dict)
    device_side: pd.DataFrame = field(default_factory=pd.DataFrame)
    host_side: pd.DataFrame = field(default_factory=pd.DataFrame)
    input_ops: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __repr__(self) -> str:
        s = self.summary
        if s.get("classification") == "unknown":  # (no step time: no share to give)
            return "<InputPipelineAnalysis, XProf's rule (the step-time breakdown): no steps>"
        return (f"<InputPipelineAnalysis, XProf's rule (the step-time breakdown): "
                f"{s.get('classification')}, input {s.get('input_pct', 0):.1f}% of step time>")


def _pct1(x: float) -> str:
    return f"{x:.1f}"


def _input_verdict(input_pct: float, other_pct: float) -> tuple[str, str, bool]:
    """(classification, statement, whether the statement already reports 'All Others')."""
    if input_pct >= HIGHLY_INPUT_BOUND_PCT:
        return "host", (f"Your program is HIGHLY input-bound because {_pct1(input_pct)}% of the "
                        "total step time sampled is waiting for input. Therefore, you should "
                        "first focus on reducing the input time."), False
    if input_pct >= MODERATELY_INPUT_BOUND_PCT:
        return "both", (f"Your program is MODERATELY input-bound because {_pct1(input_pct)}% of "
                        "the total step time sampled is waiting for input. Therefore, you would "
                        "need to reduce both the input time and other time."), False
    if other_pct >= MODERATE_SHARE_PCT:
        return "both", (f"Your program is POTENTIALLY input-bound because {_pct1(other_pct)}% "
                        "of the total step time sampled is spent on 'All Others' time (which "
                        "could be due to I/O or Python execution or both)."), True
    return "device", (f"Your program is NOT input-bound because only {_pct1(input_pct)}% of the "
                      "total step time sampled is waiting for input. Therefore, you should "
                      "focus on reducing other time."), False


def _share_level(value: float, what: str) -> tuple[str, str]:
    """(classification, statement) of a step-time share: high, moderate or no."""
    if value >= HIGH_SHARE_PCT:
        return "high", f"{_pct1(value)} % of the total step time sampled is spent on {what}"
    if value >= MODERATE_SHARE_PCT:
        return "moderate", f"{_pct1(value)} % of the total step time sampled is spent on {what}"
    return "no", ""


_NO_STEPS_VERDICT = {
    "classification": "unknown", "input_statement": NO_STEPS, "input_pct": 0.0,
    "output_pct": 0.0, "device_compute_pct": 0.0, "all_other_pct": 0.0, "kernel_launch_pct": 0.0,
    "device_collectives_pct": 0.0, "all_other_classification": "no",
    "all_other_statement": "", "kernel_launch_classification": "no",
    "kernel_launch_statement": "", "device_collectives_classification": "no",
    "device_collectives_statement": ""}


# what XProf's verdict says on steps inferred here, where XProf itself finds none
ON_INFERRED_STEPS = "By XProf's rule on the steps inferred here (XProf itself finds none): "


def bottleneck_verdicts(steps: pd.DataFrame) -> dict:
    """The reference's input / all-others / kernel-launch / collectives verdicts from steps,
    over the steps it counts (:func:`xprof_steps`: without each host's first and last of more
    than five; a pod's aligned across its hosts, the first host's rows)."""
    steps = xprof_steps(steps)
    total = float(steps.duration_ms.sum()) if len(steps) else 0.0
    if total <= 0:
        return dict(_NO_STEPS_VERDICT)

    def share(col):
        return 100 * float(steps[col].sum()) / total

    input_pct, other_pct = share("input_ms"), share("other_ms")
    out = {"input_pct": input_pct, "output_pct": share("output_ms"),
           "device_compute_pct": share("device_compute_ms"), "all_other_pct": other_pct,
           "kernel_launch_pct": share("kernel_launch_ms"),
           "device_collectives_pct": share("device_collectives_ms")}
    cls, text, reported = _input_verdict(input_pct, other_pct)
    if str(steps.source.iloc[0]).startswith("inferred"):  # (XProf itself has no steps here)
        text = f"{ON_INFERRED_STEPS}{text}"
    out.update(classification=cls, input_statement=text)
    c, t = ("no", "") if reported else _share_level(other_pct, "'All Others' time.")
    out["all_other_classification"] = c
    out["all_other_statement"] = (t + " This could be due to Python execution overhead.") \
        if t else ""
    c, t = _share_level(out["kernel_launch_pct"], "'Kernel Launch'.")
    out["kernel_launch_classification"], out["kernel_launch_statement"] = c, t
    c, t = _share_level(out["device_collectives_pct"], "'Device Collective Communication'.")
    out["device_collectives_classification"], out["device_collectives_statement"] = c, t
    return out

def _category(name: str, op_type: str) -> str:
    if op_type.startswith("InfeedEnqueue") or name == "MemcpyHToD":
        return "enqueue"
    if name.endswith(_SOURCES):
        return "advanced_file_read" if any(a in name for a in _ADVANCED) else \
            "demanded_file_read"
    return "preprocessing"


def _input_ops(host_ops: tuple) -> pd.DataFrame:
    table = host_ops[0]
    ops = table[(table["type"] == "Dataset") | table["type"].str.startswith("InfeedEnqueue")
                | (table["operation"] == "MemcpyHToD")]
    ops = ops.sort_values(["self_ps", "operation"], ascending=[False, True], kind="stable")
    total = float(ops.self_ps.sum())
    keys = [_category(n, t) for n, t in zip(ops.operation, ops["type"])]  # one per input op
    return pd.DataFrame({
        "operation": ops.operation.to_numpy(), "count": ops.occurrences.to_numpy(),
        "time_ms": ops.time_ps.to_numpy() / 1e9,
        "time_pct": (ops.time_ps / total * 100 if total else ops.time_ps * 0.0).to_numpy(),
        "self_time_ms": ops.self_ps.to_numpy() / 1e9,
        "self_time_pct": (ops.self_ps / total * 100 if total else ops.self_ps * 0.0)
        .to_numpy(),
        "category": [HOST_CATEGORIES[k] for k in keys],
        "_key": keys,
    })


def _host_side(ops: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    us = {k: float(ops.loc[ops._key == k, "self_time_ms"].sum()) * 1e3 for k in HOST_CATEGORIES}
    enqueue = us["enqueue"]
    total = us["demanded_file_read"] + us["advanced_file_read"] + us["preprocessing"]
    steps = xprof_steps(steps)  # (XProf's ratio: over the steps it counts)
    if len(steps) and steps.duration_ms.mean() > 0:
        ratio = min(1.0, steps.host_to_device_ms.mean() / steps.duration_ms.mean())
    else:
        ratio = 0.0
    # without enqueue ops (GPU: copies are not host ops) all input time is non-enqueue
    non_enqueue = enqueue * (1 - ratio) / ratio if ratio and enqueue > 0 else total
    scaled = {k: (non_enqueue * us[k] / total if total else 0.0)
              for k in ("demanded_file_read", "advanced_file_read", "preprocessing")}
    values = {"enqueue": enqueue, **scaled,
              "unclassified": max(0.0, non_enqueue - sum(scaled.values()))}
    values = {k: (v if v > 1e-6 else 0.0) for k, v in values.items()}  # rounding residue
    all_us = sum(values.values())
    return pd.DataFrame({
        "category": [HOST_CATEGORIES[k] for k in values],
        "time_us": list(values.values()),
        "pct": [v / all_us * 100 if all_us else 0.0 for v in values.values()]},
        index=pd.Index(list(values), name="key"))


def input_pipeline_analysis(parts: dict, steps: pd.DataFrame,
                            host_ops: tuple) -> InputPipelineAnalysis:
    """Verdict, per-step input wait, host-side breakdown and input op table, from the steps
    and the host op metrics ((table, total_ps, total_op_ps))."""
    summary = bottleneck_verdicts(steps)
    ops = _input_ops(host_ops)
    host_side = _host_side(ops, steps)
    uses_tf_data = bool(host_side.loc[["demanded_file_read", "advanced_file_read",
                                       "preprocessing"], "time_us"].sum() > 0)
    summary["uses_tf_data"] = uses_tf_data
    if summary["kernel_launch_statement"] and uses_tf_data:
        summary["kernel_launch_statement"] += (
            " It could be due to CPU contention with tf.data. In this case, you may try to set "
            "the environment variable TF_GPU_THREAD_MODE=gpu_private.")
    if summary["classification"] in ("host", "both"):
        summary["next_step"] = ("Look at the host-side breakdown of input time."
                                if uses_tf_data else
                                "The host-side input analysis reads tf.data's events and this "
                                "profile has none: an input pipeline of another kind (Python "
                                "loops, a custom loader) is not analysed; its time is on the "
                                "host threads of the trace viewer.")
    elif summary["classification"] == "unknown":  # (no step time: no verdict either way)
        summary["next_step"] = ("No step time, so whether the input pipeline is the "
                                "bottleneck cannot be told.")
    else:
        summary["next_step"] = "The input pipeline is not the bottleneck."
    device = steps[["host", "step_name", "duration_ms", "input_ms"]].copy() if len(steps) else \
        pd.DataFrame(columns=["host", "step_name", "duration_ms", "input_ms"])
    device["input_pct"] = np.where(device.duration_ms > 0,
                                   device.input_ms / device.duration_ms * 100, 0.0) \
        if len(device) else []
    xprof = xprof_count(steps)  # (XProf's averages: over the steps it counts; a step's time
    # in a pod the slowest host's, its input the first host's)
    for key, values in (("input", xprof.rows.input_ms), ("duration", xprof.step_ms)):
        if len(values):
            summary[f"{key}_avg_ms"] = float(values.mean())
            summary[f"{key}_std_ms"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    return InputPipelineAnalysis(summary, device, host_side, ops.drop(columns="_key"))


ANALYSES = (Analysis("input_pipeline", combine=input_pipeline_analysis,
                     needs=("steps", "host_ops")),)
