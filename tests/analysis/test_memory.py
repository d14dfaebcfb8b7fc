"""Memory profile tables against xprof's memory_profile on the GPU fixture (TensorFlow) and
on the H200 captures (JAX's GPU and pinned-host BFC allocators)."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp

from .oracle import run_tool
from .real_xla import AMD, NVIDIA


# Captures whose allocators have under 1,000 events: above that xprof samples its timeline down
# to 1,000 snapshots (the counts below are read from its timeline; ours keeps every event)
_UNSAMPLED = [p.name for p in NVIDIA if p.parent.name == "data"]


@pytest.fixture(scope="module", params=["gpu_fixture"] + _UNSAMPLED)
def both(request):
    path = request.getfixturevalue("gpu_fixture_file") if request.param == "gpu_fixture" \
        else next(p for p in NVIDIA if p.name == request.param)
    return tp.load(path), run_tool(path, "memory_profile")


@pytest.fixture(scope="module", params=[p.name for p in AMD])
def amd(request):
    """The MI300X captures: their allocators' lines start up to 0.8 ms apart, so the walk to
    the peak must stop by each event's offset in its own line, as xprof's does (stopping at
    the peak's time left 6 of the conv capture's 8 allocators' breakdowns wrong)."""
    path = next(p for p in AMD if p.name == request.param)
    return tp.load(path), run_tool(path, "memory_profile")


def test_summary_matches_xprof(both):
    prof, ref = both
    summary = prof.memory_summary.set_index("allocator")
    assert sorted(summary.index) == ref["memoryIds"]
    # our times are relative to the profile start; the reference's to the timestamp of the
    # line holding the memory events
    ev = prof.events
    memory_line = ev.loc[ev.name == "MemoryAllocation", "line"].iloc[0]
    lines = prof.lines
    line_start_us = lines.loc[(lines.plane == "/host:CPU") & (lines.line == memory_line),
                              "start_us"].iloc[0]
    for name, alloc in ref["memoryProfilePerAllocator"].items():
        s, ps = summary.loc[name], alloc["profileSummary"]
        peak = ps["peakStats"]
        assert s.peak_bytes_in_use == int(peak["peakBytesInUse"])
        assert s.heap_at_peak_bytes == int(peak["heapAllocatedBytes"])
        assert s.stack_at_peak_bytes == int(peak["stackReservedBytes"])
        assert s.free_at_peak_bytes == int(peak["freeMemoryBytes"])
        assert s.fragmentation_at_peak_pct == pytest.approx(peak["fragmentation"] * 100)
        assert s.memory_capacity_bytes == int(ps["memoryCapacity"])
        assert s.peak_heap_usage_lifetime_bytes == int(ps["peakBytesUsageLifetime"])
        assert s.peak_time_us - line_start_us == pytest.approx(int(ps["peakStatsTimePs"]) / 1e6)
        timeline = alloc["sampledTimelineSnapshots"]  # no sampling below 1000 events
        kinds = [t["activityMetadata"]["memoryActivity"] for t in timeline]
        assert s.num_allocations == kinds.count("ALLOCATION")
        assert s.num_deallocations == kinds.count("DEALLOCATION")


def test_timeline_matches_xprof(both):
    prof, ref = both
    tl = prof.memory_timeline
    for name, alloc in ref["memoryProfilePerAllocator"].items():
        ours = tl[tl.allocator == name]
        theirs = alloc["sampledTimelineSnapshots"]
        assert len(ours) == len(theirs)
        meta = [t["activityMetadata"] for t in theirs]
        agg = [t["aggregationStats"] for t in theirs]
        assert ours.tf_op.tolist() == [m["tfOpName"] for m in meta]
        assert ours.tensor_shape.tolist() == [m["tensorShape"] for m in meta]
        assert ours.data_type.tolist() == [m["dataType"] for m in meta]
        assert ours.region_type.tolist() == [m["regionType"] for m in meta]
        assert ours.step.tolist() == [int(m["stepId"]) for m in meta]
        assert ours.requested_bytes.tolist() == [int(m["requestedBytes"]) for m in meta]
        assert ours.heap_bytes.tolist() == [int(a["heapAllocatedBytes"]) for a in agg]


def test_breakdown_matches_xprof(both):
    _assert_breakdown_is_xprofs(*both)


def test_amd_breakdown_matches_xprof(amd):
    _assert_breakdown_is_xprofs(*amd)


def _assert_breakdown_is_xprofs(prof, ref):
    bd = prof.memory_breakdown
    for name, alloc in ref["memoryProfilePerAllocator"].items():
        ours = bd[bd.allocator == name].reset_index(drop=True)
        rows = []
        snaps, specials = alloc["memoryProfileSnapshots"], alloc["specialAllocations"]
        for a in alloc["activeAllocations"]:
            special = int(a["specialIndex"])
            m = specials[-special - 1] if special >= 0 else \
                snaps[int(a["snapshotIndex"])]["activityMetadata"]
            rows.append((m["tfOpName"], int(m["allocationBytes"]), int(m["requestedBytes"]),
                         int(a["numOccurrences"]), m["regionType"], m["dataType"],
                         m["tensorShape"]))
        mine = list(zip(ours.tf_op, ours.allocation_bytes, ours.requested_bytes,
                        ours.occurrences, ours.region_type, ours.data_type, ours.tensor_shape))
        assert sorted(mine, key=str) == sorted(rows, key=str)
        assert ours.allocation_bytes.is_monotonic_decreasing


def test_deallocations_inherit_allocation_metadata(both):
    prof, _ = both
    tl = prof.memory_timeline
    dealloc = tl[tl.event == "deallocation"]
    if (tl.tf_op == "").all():  # JAX's allocation events name no op
        assert prof.events.name.eq("MemoryAllocation").sum() == (tl.event == "allocation").sum()
        return
    assert (dealloc.tf_op != "").mean() > 0.5


def test_cpu_profile_memory_tables_have_columns(cpu_file):
    prof = tp.load(cpu_file)
    from tfprof_nb.analysis.tf.memory import BREAKDOWN_COLUMNS, SUMMARY_COLUMNS, TIMELINE_COLUMNS

    assert list(prof.memory_summary.columns) == SUMMARY_COLUMNS
    assert list(prof.memory_timeline.columns) == TIMELINE_COLUMNS
    assert list(prof.memory_breakdown.columns) == BREAKDOWN_COLUMNS
    if len(prof.memory_timeline):  # CPU memory events appear only for some allocators
        assert np.all(prof.memory_timeline.in_use_bytes >= 0)
