"""Memory profile: per-allocator summary, the allocation timeline and the breakdown at peak.

Memory events are ``MemoryAllocation`` / ``MemoryDeallocation`` on the host plane; their stats
give the allocator (``allocator_name``), stack (``bytes_reserved``), heap (``bytes_allocated``),
free memory, fragmentation and the allocation itself.  A deallocation inherits op, region, data
type and shape from the allocation at the same address.  On CPU, memory events appear only for
some allocators and workloads; a profile without them gives empty tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

from .grouping import HOST_PLANE

__all__ = ["memory_tables", "SUMMARY_COLUMNS", "TIMELINE_COLUMNS", "BREAKDOWN_COLUMNS"]

SUMMARY_COLUMNS = ["host", "allocator", "num_allocations", "num_deallocations",
                   "memory_capacity_bytes", "peak_heap_usage_lifetime_bytes",
                   "peak_bytes_in_use", "peak_time_us", "peak_step", "stack_at_peak_bytes",
                   "heap_at_peak_bytes", "free_at_peak_bytes", "fragmentation_at_peak_pct"]
TIMELINE_COLUMNS = ["host", "allocator", "time_us", "event", "requested_bytes",
                    "allocation_bytes", "address", "tf_op", "step", "region_type", "data_type",
                    "tensor_shape", "stack_bytes", "heap_bytes", "in_use_bytes", "free_bytes",
                    "fragmentation_pct", "peak_bytes_in_use", "event_id"]
BREAKDOWN_COLUMNS = ["host", "allocator", "tf_op", "allocation_bytes", "requested_bytes",
                     "occurrences", "region_type", "data_type", "tensor_shape", "step"]
_DTYPES = ["INVALID", "float", "double", "int32", "uint8", "int16", "int8", "string",
           "complex64", "int64", "bool", "qint8", "quint8", "qint32", "bfloat16", "qint16",
           "quint16", "uint16", "complex128", "half", "resource", "variant", "uint32", "uint64",
           "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
           "float8_e5m2fnuz", "int4", "uint4"]


def data_type_name(code) -> str:
    """TensorFlow's name of a DataType enum value ("" when absent)."""
    if code is None or (isinstance(code, float) and np.isnan(code)):
        return ""
    code = int(code)
    if 0 <= code < len(_DTYPES):
        return _DTYPES[code]
    if 100 < code < 100 + len(_DTYPES):
        return _DTYPES[code - 100] + "_ref"
    return f"unknown dtype enum ({code})"


@njit(cache=True, nogil=True)
def _inherit_from_allocations(is_alloc, address, source):
    """For each deallocation, the row of the live allocation at its address (-1 if none)."""
    live = dict()
    live[np.int64(0)] = np.int64(-1)
    del live[np.int64(0)]
    for i in range(is_alloc.shape[0]):
        a = address[i]
        if is_alloc[i]:
            source[i] = -1
            if a not in live:
                live[a] = np.int64(i)
        else:
            if a in live:
                source[i] = live[a]
                del live[a]
            else:
                source[i] = -1


@njit(cache=True, nogil=True)
def _active_at_peak(is_alloc, address, step, time, alloc_bytes, peak_time, peak_step, active):
    """Mark allocations of the peak step still live at the peak time; return the bytes of
    deallocations of memory allocated before the window (not attributable to an op)."""
    live = dict()
    live[np.int64(0)] = np.int64(-1)
    del live[np.int64(0)]
    unmapped = np.int64(0)
    unmapped_dealloc = np.int64(0)
    for i in range(is_alloc.shape[0]):
        if time[i] > peak_time:
            break
        if step[i] != peak_step:
            continue
        if is_alloc[i]:
            live[address[i]] = np.int64(i)
            unmapped -= alloc_bytes[i]
        else:
            if address[i] in live:
                del live[address[i]]
            else:
                unmapped_dealloc += alloc_bytes[i]
            unmapped += alloc_bytes[i]
    for a in live:
        active[live[a]] = True
    return unmapped - unmapped_dealloc


def _stat_frame(prof, ids: np.ndarray, names) -> pd.DataFrame:
    cols = {}
    for n in names:
        s = prof.stat(n)
        s = s[~s.index.duplicated(keep="last")]
        cols[n] = s.reindex(ids)
    return pd.DataFrame(cols, index=ids)


def _host_memory(prof, host: str):
    ev = prof.events
    if len(prof.hosts) > 1:
        ev = ev[ev["host"] == host]
    mem = ev[(ev["plane"] == HOST_PLANE)
             & ev["name"].isin(["MemoryAllocation", "MemoryDeallocation"])]
    if mem.empty:
        return None
    st = _stat_frame(prof, mem.index.to_numpy(), [
        "allocator_name", "index_on_host", "device_ordinal", "bytes_reserved",
        "bytes_allocated", "bytes_available", "fragmentation", "peak_bytes_in_use",
        "requested_bytes", "allocation_bytes", "addr", "tf_op", "group_id", "region_type",
        "data_type", "shape"])
    allocator = st["allocator_name"].astype(object)
    for fallback in ("device_ordinal", "index_on_host"):
        allocator = allocator.where(allocator.notna(), st[fallback].map(
            lambda v: None if pd.isna(v) else str(int(v))))
    df = pd.DataFrame({
        "allocator": allocator.fillna("").astype(str).to_numpy(),
        "time_ps": mem["start_ps"].to_numpy(),
        "is_alloc": (mem["name"] == "MemoryAllocation").to_numpy(),
        "reserved": st["bytes_reserved"].fillna(0).to_numpy(np.int64),
        "heap": st["bytes_allocated"].fillna(0).to_numpy(np.int64),
        "free": st["bytes_available"].fillna(0).to_numpy(np.int64),
        "fragmentation": pd.to_numeric(st["fragmentation"], errors="coerce").fillna(0.0)
        .to_numpy(float),
        "peak": st["peak_bytes_in_use"].fillna(0).to_numpy(np.int64),
        "requested": st["requested_bytes"].fillna(0).to_numpy(np.int64),
        "allocation": st["allocation_bytes"].fillna(0).to_numpy(np.int64),
        "address": st["addr"].fillna(0).to_numpy(np.int64) if st["addr"].dtype != object
        else np.array([int(v) if not pd.isna(v) else 0 for v in st["addr"]], np.int64),
        "tf_op": st["tf_op"].astype(object).fillna("").to_numpy(),
        "step": st["group_id"].fillna(-1).to_numpy(np.int64),
        "region_type": st["region_type"].astype(object).fillna("").to_numpy(),
        "data_type": [data_type_name(v) for v in st["data_type"].to_numpy()],
        "tensor_shape": st["shape"].astype(object).fillna("").to_numpy(),
        "event_id": mem.index.to_numpy(),
    })
    return df


def _per_allocator(host: str, name: str, raw: pd.DataFrame):
    """Summary row, timeline and breakdown of one allocator (raw: its events in file order)."""
    in_use = raw.reserved + raw.heap
    # peak: the last event (file order) with the highest stack + heap
    peak_pos = int(len(raw) - 1 - np.argmax(in_use.to_numpy()[::-1]))
    peak = raw.iloc[peak_pos]
    peak_bytes = int(in_use.iloc[peak_pos])
    tl = raw.sort_values("time_ps", kind="stable").reset_index(drop=True)
    # steps: events without one belong to the step after the last known one
    last_known = tl.step.where(tl.step >= 0).shift().ffill().fillna(-1).astype(np.int64)
    tl["step"] = np.where(tl.step >= 0, tl.step, last_known + 1)
    source = np.empty(len(tl), dtype=np.int64)
    _inherit_from_allocations(tl.is_alloc.to_numpy(), tl.address.to_numpy(np.int64), source)
    inherit = source >= 0
    for col in ("tf_op", "region_type", "data_type", "tensor_shape"):
        values = tl[col].to_numpy(dtype=object).copy()
        values[inherit] = values[source[inherit]]
        tl[col] = values
    in_use_sorted = (tl.reserved + tl.heap).to_numpy()
    peak_step = int(tl.step[in_use_sorted == peak_bytes].iloc[-1]) \
        if (in_use_sorted == peak_bytes).any() else 0
    active = np.zeros(len(tl), dtype=bool)
    unmapped = int(peak.heap) + int(_active_at_peak(
        tl.is_alloc.to_numpy(), tl.address.to_numpy(np.int64), tl.step.to_numpy(np.int64),
        tl.time_ps.to_numpy(np.int64), tl.allocation.to_numpy(np.int64), int(peak.time_ps),
        peak_step, active))
    items = tl.loc[active, ["tf_op", "allocation", "requested", "region_type", "data_type",
                           "tensor_shape"]].copy()
    specials = []
    if unmapped > 0:
        specials.append(("unused preallocated device memory", unmapped, unmapped,
                         "persist/dynamic", "INVALID", "unknown"))
    if int(peak.reserved) > 0:
        specials.append(("stack", int(peak.reserved), int(peak.reserved), "stack", "INVALID",
                         "unknown"))
    if specials:
        items = pd.concat([items, pd.DataFrame(specials, columns=items.columns)],
                          ignore_index=True)
    key = ["allocation", "requested", "tf_op", "region_type", "data_type", "tensor_shape"]
    breakdown = items.groupby(key, sort=False).size().rename("occurrences").reset_index() \
        .sort_values(key, ascending=[False, False, True, True, True, True], kind="stable")
    breakdown = pd.DataFrame({
        "host": host, "allocator": name, "tf_op": breakdown.tf_op,
        "allocation_bytes": breakdown.allocation, "requested_bytes": breakdown.requested,
        "occurrences": breakdown.occurrences, "region_type": breakdown.region_type,
        "data_type": breakdown.data_type, "tensor_shape": breakdown.tensor_shape,
        "step": peak_step})
    timeline = pd.DataFrame({
        "host": host, "allocator": name, "time_us": tl.time_ps / 1e6,
        "event": np.where(tl.is_alloc, "allocation", "deallocation"),
        "requested_bytes": tl.requested, "allocation_bytes": tl.allocation,
        "address": tl.address, "tf_op": tl.tf_op, "step": tl.step,
        "region_type": tl.region_type, "data_type": tl.data_type,
        "tensor_shape": tl.tensor_shape,
        "stack_bytes": tl.reserved, "heap_bytes": tl.heap, "in_use_bytes": tl.reserved + tl.heap,
        "free_bytes": tl.free, "fragmentation_pct": tl.fragmentation * 100,
        "peak_bytes_in_use": tl.peak, "event_id": tl.event_id})
    summary = {
        "host": host, "allocator": name, "num_allocations": int(raw.is_alloc.sum()),
        "num_deallocations": int((~raw.is_alloc).sum()),
        "memory_capacity_bytes": peak_bytes + int(peak.free),
        "peak_heap_usage_lifetime_bytes": int(raw.peak.iloc[-1]),
        "peak_bytes_in_use": peak_bytes, "peak_time_us": peak.time_ps / 1e6,
        "peak_step": peak_step, "stack_at_peak_bytes": int(peak.reserved),
        "heap_at_peak_bytes": int(peak.heap), "free_at_peak_bytes": int(peak.free),
        "fragmentation_at_peak_pct": float(peak.fragmentation) * 100}
    return summary, timeline, breakdown


def memory_tables(prof) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(summary, timeline, breakdown) over all hosts and allocators, allocators sorted."""
    summaries, timelines, breakdowns = [], [], []
    for host in prof.hosts:
        raw = _host_memory(prof, host)
        if raw is None:
            continue
        for name in sorted(raw.allocator.unique()):
            s, t, b = _per_allocator(host, name, raw[raw.allocator == name])
            summaries.append(s)
            timelines.append(t)
            breakdowns.append(b)
    summary = pd.DataFrame(summaries, columns=SUMMARY_COLUMNS)
    timeline = pd.concat(timelines, ignore_index=True) if timelines else \
        pd.DataFrame({c: pd.Series(dtype=object) for c in TIMELINE_COLUMNS})
    breakdown = pd.concat(breakdowns, ignore_index=True) if breakdowns else \
        pd.DataFrame({c: pd.Series(dtype=object) for c in BREAKDOWN_COLUMNS})
    return summary, timeline[TIMELINE_COLUMNS], breakdown[BREAKDOWN_COLUMNS]
