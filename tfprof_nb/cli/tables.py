"""The tables ``tfprof table`` writes: the same set ``prof.sql`` queries (``events``,
``stats`` and the tool tables of :mod:`tfprof_nb.sql`), in its order, each with one
line saying what it holds."""

from __future__ import annotations

import pandas as pd

from ..sql import EVENT_TABLES, TOOL_TABLES

__all__ = ["DESCRIPTIONS", "table", "table_list", "table_names"]

# one line per table, for ``tfprof table --list`` (a test checks every table has one)
DESCRIPTIONS = {
    "events": "every event of every host: host, plane, line, name, start and duration",
    "stats": "every event stat, one row each (needs DuckDB)",
    "steps": "one row per step: duration and the step-time breakdown (*_ms per category)",
    "op_stats": "TensorFlow stats: host and device ops, occurrences, total and self time",
    "kernel_stats": "GPU kernel stats: one row per kernel and op, launch configuration, "
                    "occupancy, Tensor Core use, durations",
    "hlo_stats": "XLA programs: one row per HLO op, category, framework op, times, FLOPs",
    "roofline": "per HLO op: arithmetic intensity and FLOP/s against the device's roofline",
    "source_lines": "device time per line of the user's code: file, line, function, share",
    "source_stacks": "device time per Python stack of the user's code (frames outermost first)",
    "memory_summary": "one row per allocator: allocations, capacity, peaks",
    "memory_timeline": "one row per allocation or deallocation, with memory in use after it",
    "memory_breakdown": "allocations active at each allocator's peak",
    "pod": "each step's breakdown on every host, the slowest host marked",
    "planes": "one row per plane of every host: lines, events, stats",
    "lines": "one row per line (thread or stream): start and event count",
    "gpu_utilization": "per device, stream and step: wall, busy and idle time by cause",
    "gpu_overlap": "per device and step: collective time hidden under compute and exposed",
    "duty_cycle": "per device: busy time over its active span",
    "stragglers": "per step: the host and device that finished last, and by how much",
    "measures": "the headline measures: value, scope (devices, time), rule, XProf's figure",
    "critical_path": "per step, the chain of events that bounds it (segments covering the step)",
    "critical_path_summary": "critical-path time per category and per op, shares of step time",
    "launch_latency": "launch-to-start latency per kernel (mean, percentiles, max)",
    "launch_histogram": "launch-to-start latencies as a histogram per device",
    "launch_outliers": "the kernels that waited longest between launch and start",
    "launch_queue": "kernels launched and not yet started, over time, per device",
    "program_memory": "one row per XLA program: peak heap and buffers (memory space 0)",
    "counters": "hardware counter samples (GPU, CPU, memory): one row each; --wide: one "
                "column per counter",
    "op_counters": "per op and counter: samples inside its executions, mean, median, max",
}


def table_names() -> list[str]:
    """Every table's name, in ``prof.sql``'s order."""
    return list(EVENT_TABLES) + list(TOOL_TABLES)


def table_list() -> list[dict]:
    """Every table's name and description (``tfprof table --list``), in
    :func:`table_names`' order."""
    return [{"name": n, "description": DESCRIPTIONS.get(n, "")} for n in table_names()]


class _Results:
    """A profile's analysis results by name (what :data:`TOOL_TABLES` reads)."""

    def __init__(self, prof):
        self._prof = prof

    def __getitem__(self, name: str):
        return self._prof.result(name)


def table(prof, name: str) -> pd.DataFrame:
    """Table ``name`` of ``prof`` as a DataFrame (the frame ``prof.sql`` queries; ``events``
    with its global event id as a column, ``event``).  Raises KeyError for an unknown name."""
    if name == "events":
        return prof.events.reset_index()
    if name == "stats":
        return prof.sql("SELECT * FROM stats")
    if name not in TOOL_TABLES:
        raise KeyError(name)
    return TOOL_TABLES[name](_Results(prof))
