"""Memory timeline view: stack, heap and free over time per allocator, hover details, the
breakdown at the peak."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from ._base import BaseWidget, bundle
from .tables import table_spec

__all__ = ["MemoryTimeline", "memory_payload"]


def memory_payload(prof) -> dict:
    """Binary columns (numbers as float64, strings as codes into one table) per memory event,
    allocators with their row ranges and peak, and the breakdown table."""
    tl = prof.memory_timeline
    summary = prof.memory_summary
    n = len(tl)
    allocators = []
    bounds = {}
    if n:  # each allocator's events are one contiguous run of the timeline
        spans = pd.Series(np.arange(n)).groupby(
            [tl.host.to_numpy(), tl.allocator.to_numpy()]).agg(["min", "max"])
        for key, (lo, hi) in zip(spans.index, spans.to_numpy()):
            bounds[key] = (int(lo), int(hi) + 1)
    for _, s in summary.iterrows():
        lo, hi = bounds.get((s.host, s.allocator), (0, 0))
        in_use = tl.in_use_bytes.to_numpy()[lo:hi]
        hits = np.flatnonzero(in_use == s.peak_bytes_in_use)
        name = s.allocator if summary.host.nunique() == 1 else f"{s.host} {s.allocator}"
        allocators.append({"name": str(name), "lo": lo, "hi": hi,
                           "peak": int(lo + hits[-1]) if len(hits) else lo,
                           "capacity": float(s.memory_capacity_bytes)})
    text_cols = ["event", "tf_op", "region_type", "data_type", "tensor_shape"]
    codes, strings = pd.factorize(pd.concat([tl[c].astype(str) for c in text_cols])) if n \
        else (np.empty(0, np.int64), pd.Index([]))
    num_cols = ["time_us", "stack_bytes", "heap_bytes", "free_bytes", "fragmentation_pct",
                "requested_bytes", "allocation_bytes", "step"]
    num = np.concatenate([tl[c].to_numpy(dtype=np.float64) for c in num_cols]) if n else \
        np.empty(0)
    breakdown = prof.memory_breakdown.copy()
    if breakdown.host.nunique() > 1:
        breakdown["allocator"] = breakdown.host + " " + breakdown.allocator
    return {"mem_meta": {"allocators": allocators, "strings": [str(s) for s in strings]},
            "mem_num": np.ascontiguousarray(num, dtype=np.float64).tobytes(),
            "mem_txt": np.ascontiguousarray(codes, dtype=np.uint32).tobytes(),
            "memory_table": table_spec(breakdown.drop(columns=["host"]),
                                       "Memory breakdown at peak", "tf_op")}


class MemoryTimeline(BaseWidget):
    """Memory in use over time per allocator (stack, heap, free; fragmentation on the right
    axis), the peak marked, hover for the allocation or deallocation, breakdown at peak."""

    _esm = bundle("memory")
    mem_meta = traitlets.Dict().tag(sync=True)
    mem_num = traitlets.Bytes(b"").tag(sync=True)
    mem_txt = traitlets.Bytes(b"").tag(sync=True)
    memory_table = traitlets.Dict().tag(sync=True)

    def __init__(self, prof, **kwargs):
        super().__init__(**memory_payload(prof), **kwargs)
