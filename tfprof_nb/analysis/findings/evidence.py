"""A finding's evidence (its numbers by key) in words with units, for the sentences views
print: ``input wait 31.8 %`` rather than ``input_pct=31.8``.

A key's unit is its suffix (``_pct``, ``_share``, ``_us``, ``_bytes``); its words are
:data:`LABELS`' (an unknown key reads as its words).  Missing numbers (NaN, None) are left
out: a sentence never says "nan".
"""

from __future__ import annotations

import math

__all__ = ["CAUSE_WORDS", "LABELS", "XPROF_EVIDENCE", "evidence_words"]

# the idle causes of the GPU time accounting (gpu_time's columns), in words
CAUSE_WORDS = {"sync_memcpy": "copies and host synchronisation",
               "input": "waiting for input (the host fetched it before launching the next "
                        "kernel)",
               "launch_bound": "kernel launch gaps",
               "host_bound": "the host (launches come late)",
               "other": "waits on dependencies or untraced work"}

LABELS = {
    "input_wait_pct": "input wait", "kernel_launch_pct": "kernel launch (XProf's step breakdown)",
    # (a share of runs, not of time, over every device and the whole profile: its scope)
    "small_kernels_pct": "share of the whole profile's kernel runs (all devices) lasting "
                         "under 10 us",
    "small_kernel_types_pct": "kernel types averaging under 10 us (kernel stats)",
    "host_wait_pct": "idle waiting for late launches", "launch_gap_pct": "idle in short gaps",
    "copy_sync_pct": "idle in copies and synchronisation",
    "dependency_wait_pct": "idle waiting on dependencies", "idle_pct": "idle",
    "top_cause": "largest cause", "top_cause_pct": "the largest cause",
    "exposed_pct": "collectives exposed",
    "hidden_pct_of_collectives": "collective time hidden under compute",
    "host": "host", "lag_pct": "lag behind the other hosts, share of the step's time",
    "mean_lag_us": "mean lag",
    "matmul_16bit_pct": "matrix-multiplication time in 16 bit",
    "device_compute_16bit_pct": "device compute in 16 bit",
    "compute_capability": "compute capability", "nchw_kernels": "NCHW kernels",
    "device_transpose_pct": "device time in transposes",
    "command_buffer_pct": "GPU op time in command buffers not attributed to HLO ops",
    "command_buffers": "command buffers",
    "allocators": "allocators", "peak_pct": "peak of capacity", "peak_bytes": "peak",
    "capacity_bytes": "capacity", "fragmentation_pct": "fragmentation",
    "highest_fragmentation_pct": "highest fragmentation", "fullest_allocator": "fullest",
}
# XProf's figures of the same time, said after the finding's own evidence as XProf's rule's
# (another rule's number, not a second verdict): {key: (its name, its scope)}
# (its scope in words that fit one step as many: "the step time it counts")
XPROF_EVIDENCE = {
    "xprof_kernel_launch_pct": ("'Kernel Launch'", "its step breakdown, over the step time "
                                                   "it counts"),
    "xprof_all_other_pct": ("'All Others'", "the host time its step breakdown puts in no "
                                            "category, over the step time it counts"),
    "all_other_pct": ("'All Others'", "its step breakdown, over the step time it counts"),
}
# evidence every finding's own sentence names already (memory findings list their allocators)
_NAMED_IN_WHAT = frozenset({"allocators"})


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _value(key: str, value) -> str:
    """One value in words with its key's unit."""
    if key == "top_cause":
        return CAUSE_WORDS.get(str(value), str(value).replace("_", " "))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if key.endswith("_pct"):
            return f"{value:.1f}%"
        if key.endswith("_share"):
            return f"{100 * value:.1f}%"
        if key.endswith("_us"):
            return f"{value:,.1f} us"
        if key.endswith("_bytes"):
            return f"{value:,.0f} bytes"
        return f"{value:,}" if isinstance(value, int) else f"{value:,.3g}"
    return str(value)


def evidence_words(evidence: dict, skip=()) -> str:
    """The evidence as "words value unit" parts joined by commas (missing values, the keys in
    ``skip``, those the finding's sentence already quotes, and the allocators a memory
    finding's sentence lists, left out)."""
    parts, xprof = [], []
    for key, value in evidence.items():
        if _missing(value) or key in skip or key in _NAMED_IN_WHAT \
                or (key == "top_cause" and "top_cause_pct" in evidence):
            continue  # (the finding's words name the largest cause; its share is enough)
        if key in XPROF_EVIDENCE:
            name, scope = XPROF_EVIDENCE[key]
            xprof.append(f"{name} {_value(key, value)} ({scope})")
            continue
        label = LABELS.get(key, key.removesuffix("_pct").removesuffix("_us")
                           .removesuffix("_bytes").replace("_", " "))
        parts.append(f"{label} {_value(key, value)}")
    said = ", ".join(parts)
    if xprof:
        said += ("; " if said else "") + "XProf's rule gives " + " and ".join(xprof)
    return said
