"""A finding's evidence (its numbers by key) in words with units, for the sentences views
print: ``input wait 31.8 %`` rather than ``input_pct=31.8``.

A key's unit is its suffix (``_pct``, ``_share``, ``_us``, ``_bytes``); its words are
:data:`LABELS`' (an unknown key reads as its words).  Missing numbers (NaN, None) are left
out: a sentence never says "nan".
"""

from __future__ import annotations

import math

__all__ = ["CAUSE_WORDS", "LABELS", "evidence_words"]

# the idle causes of the GPU time accounting (gpu_time's columns), in words
CAUSE_WORDS = {"sync_memcpy": "copies and host synchronisation",
               "input": "waiting for input (the host fetched it before launching the next "
                        "kernel)",
               "launch_bound": "kernel launch gaps",
               "host_bound": "the host (launches come late)",
               "other": "waits on dependencies or untraced work"}

LABELS = {
    "input_pct": "input wait", "kernel_launch_pct": "kernel launch in the step breakdown",
    "kernels_under_10us_share": "kernels under 10 us in the kernel stats",
    "kernels_under_10us_pct": "kernels under 10 us",
    "launch_gap_idle_pct": "idle in short launch gaps",
    "host_gap_idle_pct": "idle waiting for late launches", "idle_pct": "idle",
    "top_cause": "largest cause", "top_cause_pct": "the largest cause",
    "exposed_pct": "collectives exposed",
    "hidden_pct_of_collectives": "collective time hidden under compute",
    "host": "host", "lag_pct": "lag behind the median host", "mean_lag_us": "mean lag",
    "matmul_16bit_pct": "matrix-multiplication time in 16 bit",
    "device_compute_16bit_pct": "device compute in 16 bit",
    "compute_capability": "compute capability", "nchw_kernels": "NCHW kernels",
    "device_transpose_pct": "device time in transposes",
    "command_buffer_pct": "GPU op time in command buffers not attributed to HLO ops",
    "command_buffers": "command buffers", "all_other_pct": "untraced ('All Others') time",
    "allocators": "allocators", "peak_pct": "peak of capacity", "peak_bytes": "peak",
    "capacity_bytes": "capacity", "fragmentation_pct": "fragmentation",
}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _value(key: str, value) -> str:
    """One value in words with its key's unit."""
    if key == "top_cause":
        return CAUSE_WORDS.get(str(value), str(value).replace("_", " "))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if key.endswith("_pct"):
            return f"{value:.1f} %"
        if key.endswith("_share"):
            return f"{100 * value:.1f} %"
        if key.endswith("_us"):
            return f"{value:,.1f} us"
        if key.endswith("_bytes"):
            return f"{value:,.0f} bytes"
        return f"{value:,}" if isinstance(value, int) else f"{value:,.3g}"
    return str(value)


def evidence_words(evidence: dict) -> str:
    """The evidence as "words value unit" parts joined by commas (missing values left out)."""
    parts = []
    for key, value in evidence.items():
        if _missing(value) or (key == "top_cause" and "top_cause_pct" in evidence):
            continue  # (the finding's words name the largest cause; its share is enough)
        label = LABELS.get(key, key.removesuffix("_pct").removesuffix("_us")
                           .removesuffix("_bytes").replace("_", " "))
        parts.append(f"{label} {_value(key, value)}")
    return ", ".join(parts)
