"""Findings with evidence and a suggested fix, from the profiler guide's best practices."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Finding", "recommendations"]


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


def _input_bound(prof, verdict, out):
    if verdict.get("classification") not in ("host", "both") or verdict.get("input_pct", 0) < 5:
        return
    pct = verdict["input_pct"]
    fix = ("Overlap input with compute: end the tf.data pipeline with .prefetch(tf.data.AUTOTUNE), "
           "use num_parallel_calls=tf.data.AUTOTUNE in map and interleave, .cache() data that fits "
           "in memory, and fetch the next batch inside the step.")
    try:
        tfd = prof.tf_data
        if not tfd.bottlenecks.empty:
            b = tfd.bottlenecks.iloc[0]
            fix = f"The slowest tf.data stage is {b.iterator_long_name}: {b.suggestion_text}"
    except Exception:  # the tf.data analysis is optional evidence
        pass
    out.append(Finding("input_bound", f"Steps wait for input {pct:.1f}% of the time",
                       {"input_pct": pct}, fix, "high" if pct >= 20 else "moderate"))


def _launch_bound(prof, verdict, out):
    ks = prof.kernel_stats
    pct = verdict.get("kernel_launch_pct", 0.0)
    small = ks[ks.avg_duration_us < 10] if len(ks) else ks
    share_small = (small.occurrences.sum() / ks.occurrences.sum()) if len(ks) else 0.0
    if pct >= 3 or (len(ks) and share_small >= 0.5 and ks.occurrences.sum() >= 1000):
        out.append(Finding(
            "launch_bound", "Many small GPU kernels: launch overhead dominates",
            {"kernel_launch_pct": pct, "kernels_under_10us_share": float(share_small)},
            "Fuse ops with XLA: @tf.function(jit_compile=True) on the train step, or "
            "model.compile(jit_compile=True) in Keras; use steps_per_execution to run several "
            "steps per call.", "high" if pct >= 15 else "moderate"))


def _mixed_precision(prof, out):
    from .overview import run_environment

    env = run_environment(prof)
    devices = env["devices"]
    if devices.empty or "compute_capability" not in devices:
        return
    capable = devices.compute_capability.dropna()
    capable = capable[capable.map(lambda c: float(c) >= 7.0)]
    steps = prof.steps
    if capable.empty or steps.empty or steps.device_compute_ms.sum() <= 0:
        return
    pct16 = 100 * steps.device_compute_16_ms.sum() / steps.device_compute_ms.sum()
    if pct16 < 50:
        out.append(Finding(
            "mixed_precision", "Tensor-Core-capable GPU computes mostly in 32 bit",
            {"device_compute_16bit_pct": float(pct16),
             "compute_capability": str(capable.iloc[0])},
            "Enable mixed precision: keras.mixed_precision.set_global_policy('mixed_float16') "
            "(keep the output layer in float32).", "moderate"))


def _layout(prof, out):
    ks = prof.kernel_stats
    ops = prof.op_stats
    nchw = ks[ks.kernel_name.str.contains("nchw", case=False)] if len(ks) else ks
    transposes = ops[(ops.host_or_device == "Device") & (ops.type == "Transpose")]
    share = float(transposes.self_time_pct.sum()) if len(transposes) else 0.0
    if len(nchw) or share >= 5:
        out.append(Finding(
            "layout", "Kernels run in NCHW layout or spend time transposing",
            {"nchw_kernels": int(len(nchw)), "device_transpose_pct": share},
            "Use channels_last (NHWC) tensors, which Tensor Cores prefer with fp16; avoid "
            "data_format='channels_first'.", "moderate"))


def _host_python(verdict, out):
    pct = verdict.get("all_other_pct", 0.0)
    if pct >= 15:
        out.append(Finding(
            "host_overhead", "Much step time is untraced host work between ops (Python)",
            {"all_other_pct": pct},
            "Put the whole train step in one tf.function, avoid Python-side work and .numpy() "
            "calls per step, and use steps_per_execution in Keras.", "high" if pct >= 30 else
            "moderate"))


def _memory(prof, out):
    ms = prof.memory_summary
    for _, row in ms.iterrows():
        cap = row.memory_capacity_bytes
        if cap and row.peak_bytes_in_use / cap >= 0.9:
            out.append(Finding(
                "memory_capacity", f"Allocator {row.allocator} peaks near its capacity",
                {"peak_bytes": int(row.peak_bytes_in_use), "capacity_bytes": int(cap),
                 "peak_pct": 100 * row.peak_bytes_in_use / cap},
                "Reduce the batch size, use mixed precision, or recompute activations; check "
                "the memory breakdown at peak for the largest tensors.", "high"))
        if row.fragmentation_at_peak_pct >= 30:
            name = str(row.allocator).lower()
            device = name.startswith("gpu_") and "host" not in name  # GPU_0_bfc
            fix = ("Try TF_GPU_ALLOCATOR=cuda_malloc_async, and keep" if device else
                   "Keep")  # TF_GPU_ALLOCATOR changes device allocators only
            out.append(Finding(
                "fragmentation", f"Allocator {row.allocator} is fragmented at its peak",
                {"fragmentation_pct": float(row.fragmentation_at_peak_pct)},
                f"{fix} tensor shapes stable between steps (pad variable-length batches).",
                "moderate"))


def recommendations(prof) -> list[Finding]:
    """All findings for ``prof``, most severe first."""
    from .input_pipeline import bottleneck_verdicts

    verdict = bottleneck_verdicts(prof.steps)
    out: list[Finding] = []
    _input_bound(prof, verdict, out)
    _launch_bound(prof, verdict, out)
    _mixed_precision(prof, out)
    _layout(prof, out)
    _host_python(verdict, out)
    _memory(prof, out)
    return sorted(out, key=lambda f: f.severity != "high")
