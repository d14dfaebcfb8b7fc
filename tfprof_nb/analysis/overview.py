"""The overview page: step-time summary, input-bound verdict, precision, top ops, environment."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..constants import CATEGORY_COLUMNS, GPU_PLANE_PREFIX, TPU_PLANE_PREFIX
from .input_pipeline import bottleneck_verdicts
from .unit import Analysis

__all__ = ["ANALYSES", "Overview", "overview", "run_environment"]



@dataclass
class Overview:
    """Everything the overview page shows, as plain values and small DataFrames.

    ``reasons`` explains what is missing (no steps, no device, ...) instead of showing zeros.
    """

    step_time: dict = field(default_factory=dict)  # avg/std/min/max ms and source
    breakdown: pd.DataFrame = field(default_factory=pd.DataFrame)  # avg/std per category
    input_bound: dict = field(default_factory=dict)  # classification, statement, shares
    precision: dict = field(default_factory=dict)  # 16/32-bit shares of device compute
    top_device_ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    top_host_ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    environment: dict = field(default_factory=dict)
    recommendations: list = field(default_factory=list)
    reasons: list = field(default_factory=list)
    device_duty_cycle_pct: float | None = None  # devices' busy time over their active span

    def __repr__(self) -> str:
        st = self.step_time
        lines = ["Overview"]
        if st.get("steps"):
            lines.append(f"  step time: {st['avg_ms']:.3f} ms avg (std {st['std_ms']:.3f}, "
                         f"min {st['min_ms']:.3f}, max {st['max_ms']:.3f}) over {st['steps']} "
                         f"steps [{st['source']}]")
        lines.append(f"  {self.input_bound.get('input_statement', '')}")
        if self.device_duty_cycle_pct is not None:
            lines.append(f"  device duty cycle: {self.device_duty_cycle_pct:.1f}%")
        lines.extend(f"  note: {r}" for r in self.reasons)
        return "\n".join(lines)


def run_environment(parts: dict, planes: pd.DataFrame, info: dict) -> dict:
    """Hosts, device type and count, and the GPUs' capabilities from their plane stats."""
    gpus = planes[planes.plane.str.startswith(GPU_PLANE_PREFIX)]
    tpus = planes[planes.plane.str.startswith(TPU_PLANE_PREFIX)]
    devices = []
    for _, row in gpus.iterrows():
        st = row["stats"]
        cc = (f"{st['compute_cap_major']}.{st['compute_cap_minor']}"
              if "compute_cap_major" in st else None)
        devices.append({"host": row["host"], "device": row["plane"],
                        "clock_rate_khz": st.get("clock_rate"),
                        "core_count": st.get("core_count"),
                        "memory_bytes": st.get("memory_size"),
                        "memory_bandwidth_bytes_per_s": st.get("memory_bandwidth"),
                        "compute_capability": cc, "vendor": st.get("device_vendor"),
                        "events": int(row["events"])})
    device_type = "GPU" if len(gpus) else ("TPU" if len(tpus) else "CPU")
    hosts = list(info)
    return {"hosts": hosts, "host_count": len(hosts), "device_type": device_type,
            "device_count": len(gpus) + len(tpus),
            "devices_with_activity": int(sum(d["events"] > 0 for d in devices)),
            "devices": pd.DataFrame(devices)}


def overview(parts: dict, steps: pd.DataFrame, op_stats_without_idle: pd.DataFrame,
             memory: tuple, environment: dict, recommendations: list,
             duty_cycle: pd.DataFrame | None = None) -> Overview:
    """The overview page from a profile's tables (``memory``: the (summary, timeline,
    breakdown) tables)."""
    reasons = []
    if steps.empty:
        reasons.append("no steps: the profile has no step markers and no repeated "
                       "tf.function call to infer them from")
        step_time = {"steps": 0}
        breakdown = pd.DataFrame(columns=["avg_ms", "std_ms"])
    else:
        d = steps.duration_ms
        step_time = {"steps": len(steps), "avg_ms": float(d.mean()),
                     "std_ms": float(d.std(ddof=1)) if len(d) > 1 else 0.0,
                     "min_ms": float(d.min()), "max_ms": float(d.max()),
                     "source": str(steps.source.iloc[0])}
        breakdown = pd.DataFrame({
            "avg_ms": steps[CATEGORY_COLUMNS].mean(),
            "std_ms": steps[CATEGORY_COLUMNS].std(ddof=1) if len(steps) > 1 else 0.0})
    verdict = bottleneck_verdicts(steps)
    env = environment
    if env["device_type"] == "CPU":
        reasons.append("no GPU in this profile: device-side columns are zero")
    precision = {}
    if not steps.empty and steps.device_compute_ms.sum() > 0:
        pct16 = 100 * steps.device_compute_16_ms.sum() / steps.device_compute_ms.sum()
        precision = {"device_compute_16bit_pct": pct16, "device_compute_32bit_pct": 100 - pct16}
        if pct16 < 10:
            precision["statement"] = (
                f"Only {pct16:.1f}% of device computation is 16 bit. So you might want to "
                "replace more 32-bit Ops by 16-bit Ops to improve performance (if the reduced "
                "accuracy is acceptable).")
    ops = op_stats_without_idle
    top = ["operation", "type", "occurrences", "total_self_time_us", "self_time_pct"]
    top_device = ops[ops.host_or_device == "Device"].head(10)[top].reset_index(drop=True)
    top_host = ops[ops.host_or_device == "Host"].head(10)[top].reset_index(drop=True)
    if memory[0].empty:
        reasons.append("no memory events in this profile (on CPU only some allocators and "
                       "workloads record them)")
    duty = duty_cycle.attrs.get("device_duty_cycle_pct") if duty_cycle is not None else None
    return Overview(step_time, breakdown, verdict, precision, top_device, top_host, env,
                    list(recommendations), reasons, duty)


ANALYSES = (
    Analysis("environment", combine=run_environment, needs=("planes", "info")),
    Analysis("overview", combine=overview,
             needs=("steps", "op_stats_without_idle", "memory", "environment",
                    "recommendations", "duty_cycle")),
)
