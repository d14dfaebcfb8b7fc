"""Memory profile: per-allocator summary, the allocation timeline and the breakdown at peak.

Memory events are ``MemoryAllocation`` / ``MemoryDeallocation`` on the host plane; their stats
give the allocator (``allocator_name``), stack (``bytes_reserved``), heap (``bytes_allocated``),
free memory, fragmentation and the allocation itself.  A deallocation inherits op, region, data
type and shape from the allocation at the same address.  On CPU, memory events appear only for
some allocators and workloads; a profile without them gives empty tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._native.kernels import active_at_peak, inherit_from_allocations, sparse_lookup
from ..._words import counted
from ..runtime.hostdata.host import HOST_PLANE, HostData
from ..runtime.unit import Analysis
from ..steps.breakdown import MEMORY_EVENTS, memory_groups

__all__ = ["ANALYSES", "LABELS", "UNMAPPED_OP", "AllocatorMemory", "MemoryAnalysis", "host_memory",
           "combine_memory", "readable", "SUMMARY_COLUMNS", "TIMELINE_COLUMNS",
           "BREAKDOWN_COLUMNS"]

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


LABELS = "allocator_labels"  # summary.attrs: {(host, allocator): its name for people}
# the breakdown's row (XProf's name) for heap in use at the peak that no allocation in the
# profile accounts for: made before the capture began, or held by the allocator
UNMAPPED_OP = "unused preallocated device memory"


@dataclass(frozen=True)
class MemoryAnalysis:
    """The memory profile, the result of the analysis ``memory``: its tables by name."""

    summary: pd.DataFrame    # prof.memory_summary: one row per allocator
    timeline: pd.DataFrame   # prof.memory_timeline: one row per (de)allocation, memory in use
    breakdown: pd.DataFrame  # prof.memory_breakdown: active allocations at each peak

    def __repr__(self) -> str:
        return (f"<MemoryAnalysis {counted(len(self.summary), 'allocator')}, "
                f"{counted(len(self.timeline), 'event')}>")


@dataclass(frozen=True)
class AllocatorMemory:
    """One allocator of one host (the per-host partial of ``memory``): its summary row (with
    its label for people under ``LABELS``), timeline and breakdown at its peak."""

    summary: dict
    timeline: pd.DataFrame
    breakdown: pd.DataFrame


def _label(name: str, origin: str, device_type: str) -> str:
    """An allocator's name for people: the allocator's own name, or what a number stands for
    where the events name none ("TPU 1 (device ordinal)"); "" where nothing names it."""
    if origin in _ALLOCATOR_FALLBACKS:
        return f"{device_type} {name} ({origin.replace('_', ' ')})"
    return str(name)


def _device_type(hd: HostData) -> str:
    """"TPU" or "GPU" by the host's device planes ("device" with neither)."""
    names = " ".join(hd.plane_names)
    return "TPU" if "/device:TPU" in names else "GPU" if "/device:GPU" in names else "device"


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """A memory table (timeline or breakdown) as views print it: TensorFlow's DT_INVALID (no
    data type: JAX's allocations, the stack) and an "unknown" shape left empty (a copy)."""
    out = table.copy()
    if "data_type" in out:
        out["data_type"] = out.data_type.where(out.data_type != "INVALID", "")
    if "tensor_shape" in out:
        out["tensor_shape"] = out.tensor_shape.where(out.tensor_shape != "unknown", "")
    return out


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


_NUMERIC = {"reserved": "bytes_reserved", "heap": "bytes_allocated", "free": "bytes_available",
            "peak": "peak_bytes_in_use", "requested": "requested_bytes",
            "allocation": "allocation_bytes", "address": "addr"}
_ALLOCATOR_FALLBACKS = ("device_ordinal", "index_on_host")  # allocator names when absent
_TEXT = {"tf_op": "tf_op", "region_type": "region_type", "tensor_shape": "shape"}


def _data_type_names(codes: np.ndarray, present: np.ndarray) -> np.ndarray:
    """TensorFlow's name of each DataType code ("" where absent), once per distinct code."""
    out = np.full(len(codes), "", dtype=object)
    if present.any():
        distinct, inverse = np.unique(codes[present], return_inverse=True)
        names = np.array([data_type_name(int(c)) for c in distinct.tolist()], dtype=object)
        out[present] = names[inverse.reshape(-1)]
    return out


def _texts(sparse, rows: np.ndarray, absent) -> np.ndarray:
    """Object array of a text stat at event ``rows`` as str (``absent`` where an event lacks
    it), each distinct value converted once."""
    codes, present = sparse.lookup(rows)
    table = pd.Series(sparse.table, dtype=object).fillna("").astype(str).to_numpy(dtype=object)
    table = np.append(table, np.array([absent], dtype=object))
    return table[np.where(present, codes, len(table) - 1)]


def _memory_events(hd: HostData, groups=None) -> pd.DataFrame | None:
    """The host's allocation and deallocation events with their stats, in file order;
    ``groups``: the :class:`..steps.breakdown.EventGroups` of events without a ``group_id`` stat."""
    is_mem = hd.name_is(*MEMORY_EVENTS) & hd.plane_is(HOST_PLANE)
    rows = np.flatnonzero(is_mem)
    if not len(rows):
        return None
    # every integer stat at these rows at once (sought, or one pass over the stat table)
    ints = hd.stats_at({stat: (stat, rows) for stat in (*_NUMERIC.values(), "group_id",
                                                         "data_type", *_ALLOCATOR_FALLBACKS)})
    cols = {col: ints[stat][0] for col, stat in _NUMERIC.items()}
    frag, has_frag = hd.float_stat("fragmentation").lookup(rows)
    cols["fragmentation"] = np.where(has_frag, frag, 0.0)
    for col, stat in _TEXT.items():
        cols[col] = _texts(hd.str_stat(stat), rows, "")
    step, has_step = ints["group_id"]
    step = np.where(has_step, step, -1)
    if groups is not None and len(groups.rows):
        grouped, hit = sparse_lookup(groups.rows, groups.groups, rows)
        step = np.where(~has_step & hit, grouped, step)
    cols["step"] = step
    dtype, has_dtype = ints["data_type"]
    cols["data_type"] = _data_type_names(dtype, has_dtype)
    allocator = _texts(hd.str_stat("allocator_name"), rows, None)
    missing = pd.isna(allocator)
    origin = np.where(missing, "", "allocator_name").astype(object)
    for fallback in _ALLOCATOR_FALLBACKS:
        value, has = ints[fallback]
        take = missing & has
        allocator[take] = value[take].astype(str)
        origin[take] = fallback
        missing &= ~take
    allocator[missing] = ""
    line = hd.space.events.line[rows]
    return pd.DataFrame({"allocator": allocator, "origin": origin,
                         "time_ps": hd.begin[rows],
                         "line_offset_ps": hd.begin[rows] - hd.space.events.line_start_ps[line],
                         "is_alloc": hd.name_is("MemoryAllocation")[rows], **cols,
                         "event_id": rows.astype(np.int64)})


def _per_allocator(host: str, name: str, raw: pd.DataFrame,
                   device_type: str = "device") -> AllocatorMemory:
    """Summary row (with its label for people), timeline and breakdown of one allocator (raw:
    its events in file order)."""
    in_use = raw.reserved + raw.heap
    # peak: the last event (file order) with the highest stack + heap
    peak_pos = int(len(raw) - 1 - np.argmax(in_use.to_numpy()[::-1]))
    peak = raw.iloc[peak_pos]
    peak_bytes = int(in_use.iloc[peak_pos])
    tl = _in_time_order(raw)
    in_use_sorted = (tl.reserved + tl.heap).to_numpy()
    peak_step = int(tl.step[in_use_sorted == peak_bytes].iloc[-1]) \
        if (in_use_sorted == peak_bytes).any() else 0
    breakdown = _breakdown_at_peak(tl, peak, peak_step)
    breakdown.insert(0, "allocator", name)
    breakdown.insert(0, "host", host)
    summary = {
        "host": host, "allocator": name, "num_allocations": int(raw.is_alloc.sum()),
        "num_deallocations": int((~raw.is_alloc).sum()),
        "memory_capacity_bytes": peak_bytes + int(peak.free),
        "peak_heap_usage_lifetime_bytes": int(raw.peak.iloc[-1]),
        "peak_bytes_in_use": peak_bytes, "peak_time_us": peak.time_ps / 1e6,
        "peak_step": peak_step, "stack_at_peak_bytes": int(peak.reserved),
        "heap_at_peak_bytes": int(peak.heap), "free_at_peak_bytes": int(peak.free),
        "fragmentation_at_peak_pct": float(peak.fragmentation) * 100,
        LABELS: _label(name, str(raw.origin.iloc[0]), device_type)}
    return AllocatorMemory(summary, _timeline(host, name, tl), breakdown)


def _in_time_order(raw: pd.DataFrame) -> pd.DataFrame:
    """An allocator's events in the reference's order, each with a step (events without one
    belong to the step after the last known one) and a deallocation's op, region, type and
    shape taken from the allocation it frees.  The reference orders them by their offset in
    their own thread's line (so two threads whose lines start microseconds apart interleave
    by offset, not by time): so do we, times staying absolute."""
    tl = raw.sort_values("line_offset_ps", kind="stable").reset_index(drop=True)
    last_known = tl.step.where(tl.step >= 0).shift().ffill().fillna(-1).astype(np.int64)
    tl["step"] = np.where(tl.step >= 0, tl.step, last_known + 1)
    source = inherit_from_allocations(tl.is_alloc.to_numpy(), tl.address.to_numpy(np.int64))
    inherit = source >= 0
    for col in ("tf_op", "region_type", "data_type", "tensor_shape"):
        values = tl[col].to_numpy(dtype=object).copy()
        values[inherit] = values[source[inherit]]
        tl[col] = values
    return tl


def _breakdown_at_peak(tl: pd.DataFrame, peak: pd.Series, peak_step: int) -> pd.DataFrame:
    """The allocations live at the peak, grouped (with rows for the stack and for heap no
    live allocation accounts for), largest first.  The walk to the peak stops, as the
    reference's, at the first event whose offset in its own line passes the peak event's
    offset in its line (events of lines that start apart are not cut at the peak's time)."""
    active, unattributed = active_at_peak(
        tl.is_alloc.to_numpy(), tl.address.to_numpy(np.int64), tl.step.to_numpy(np.int64),
        tl.line_offset_ps.to_numpy(np.int64), tl.allocation.to_numpy(np.int64),
        int(peak.line_offset_ps), peak_step)
    unmapped = int(peak.heap) + unattributed
    items = tl.loc[active, ["tf_op", "allocation", "requested", "region_type", "data_type",
                           "tensor_shape"]].copy()
    specials = []
    if unmapped > 0:
        specials.append((UNMAPPED_OP, unmapped, unmapped,
                         "persist/dynamic", "INVALID", "unknown"))
    if int(peak.reserved) > 0:
        specials.append(("stack", int(peak.reserved), int(peak.reserved), "stack", "INVALID",
                         "unknown"))
    if specials:
        items = pd.concat([items, pd.DataFrame(specials, columns=items.columns)],
                          ignore_index=True)
    key = ["allocation", "requested", "tf_op", "region_type", "data_type", "tensor_shape"]
    grouped = items.groupby(key, sort=False).size().rename("occurrences").reset_index() \
        .sort_values(key, ascending=[False, False, True, True, True, True], kind="stable")
    return pd.DataFrame({
        "tf_op": grouped.tf_op, "allocation_bytes": grouped.allocation,
        "requested_bytes": grouped.requested, "occurrences": grouped.occurrences,
        "region_type": grouped.region_type, "data_type": grouped.data_type,
        "tensor_shape": grouped.tensor_shape, "step": peak_step})


def _timeline(host: str, name: str, tl: pd.DataFrame) -> pd.DataFrame:
    """The allocator's memory timeline table (see TIMELINE_COLUMNS)."""
    return pd.DataFrame({
        "host": host, "allocator": name, "time_us": tl.time_ps / 1e6,
        "event": np.where(tl.is_alloc, "allocation", "deallocation"),
        "requested_bytes": tl.requested, "allocation_bytes": tl.allocation,
        "address": tl.address, "tf_op": tl.tf_op, "step": tl.step,
        "region_type": tl.region_type, "data_type": tl.data_type,
        "tensor_shape": tl.tensor_shape,
        "stack_bytes": tl.reserved, "heap_bytes": tl.heap, "in_use_bytes": tl.reserved + tl.heap,
        "free_bytes": tl.free, "fragmentation_pct": tl.fragmentation * 100,
        "peak_bytes_in_use": tl.peak, "event_id": tl.event_id})


def host_memory(hd: HostData, shift_ps: int = 0,
                steps: pd.DataFrame | None = None) -> list[AllocatorMemory]:
    """The memory of each allocator of one host, allocators sorted;
    times are shifted by ``shift_ps``, ``event_id`` holds the host's own event rows.  An
    event's step is its ``group_id`` stat, else the group our grouping gave it (``steps``: the
    host's step table, which carries them), as the reference groups a raw file first."""
    raw = _memory_events(hd, memory_groups(steps))
    if raw is None:
        return []
    raw["time_ps"] = raw.time_ps + shift_ps
    kind = _device_type(hd)
    return [_per_allocator(hd.name, name, raw[raw.allocator == name], kind)
            for name in sorted(raw.allocator.unique())]


def combine_memory(parts: dict[str, list[AllocatorMemory]],
                   event_offsets: dict[str, int]) -> MemoryAnalysis:
    """The memory tables over all hosts; ``event_offsets`` turn each host's event rows into
    global event ids."""
    summaries, timelines, breakdowns = [], [], []
    for host, allocators in parts.items():
        offset = event_offsets[host]
        for one in allocators:
            summaries.append(one.summary)
            timelines.append(one.timeline.assign(event_id=one.timeline.event_id + offset))
            breakdowns.append(one.breakdown)
    summary = pd.DataFrame(summaries, columns=SUMMARY_COLUMNS)
    summary.attrs[LABELS] = {(s["host"], s["allocator"]): s.get(LABELS, s["allocator"])
                             for s in summaries}
    timeline = pd.concat(timelines, ignore_index=True) if timelines else \
        pd.DataFrame({c: np.empty(0, object) for c in TIMELINE_COLUMNS})  # (not empty
    breakdown = pd.concat(breakdowns, ignore_index=True) if breakdowns else \
        pd.DataFrame({c: np.empty(0, object) for c in BREAKDOWN_COLUMNS})  # Series: 8x faster)
    return MemoryAnalysis(summary, timeline[TIMELINE_COLUMNS], breakdown[BREAKDOWN_COLUMNS])


ANALYSES = (Analysis("memory", host=host_memory, combine=combine_memory,
                     needs=("event_offsets",), host_needs=("steps",)),)
