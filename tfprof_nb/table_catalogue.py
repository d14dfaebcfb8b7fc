"""Every table a profile holds, declared once: its name, one text saying what it holds, the
analysis result it reads, the columns that identify a row, and its kind.

This catalogue is the one source of :class:`~tfprof_nb.profile.Profile`'s data properties
(their docstrings are the descriptions), of the tables ``prof.sql`` queries
(:mod:`tfprof_nb.sql`), of ``tfprof table`` and its ``--list`` (:mod:`tfprof_nb.cli.tables`),
and of docs/API.md's table of tables (``python -m tfprof_nb.table_catalogue`` rewrites it; a
test checks it is current).  A new table is one entry here, beside the analysis computing it.

Kinds: a ``table`` is a DataFrame that is a ``Profile`` property, an SQL table and a
``tfprof table``; a ``bundle`` (one tool's tables under names) and a ``fact`` (a plain value)
are properties only; a ``part`` (a bundle's table, or a method's table without arguments) is
an SQL table and a ``tfprof table`` only; the ``events`` kind (``events``, ``stats``) is read
from the decoded hosts by :mod:`tfprof_nb.sql` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CATALOGUE", "KINDS", "TableEntry", "api_section", "profile_entries",
           "queried_entries"]

KINDS = ("table", "bundle", "fact", "part", "events")
PROPERTY_KINDS = ("table", "bundle", "fact")
QUERIED_KINDS = ("events", "table", "part")


def _programs(value):
    from .analysis.xla.memory.program_memory import programs_table

    return programs_table(value)


@dataclass(frozen=True)
class TableEntry:
    """One table: ``result`` is the analysis result it reads (``field``: that result's key or
    attribute), ``keys`` the columns that identify a row (none: rows are occurrences),
    ``index_column``: the SQL table has the frame's index as a column (``step``, ``key``);
    ``frame_of`` makes the SQL table of a result that is not a DataFrame."""

    name: str
    description: str
    result: str = ""
    field: str | None = None
    keys: tuple[str, ...] = ()
    kind: str = "table"
    index_column: bool = False
    frame_of: Callable | None = None

    def value(self, results):
        """What the property holds, from ``results`` (analysis results by name)."""
        value = results[self.result]
        if self.field is None:
            return value
        return value[self.field] if isinstance(value, Mapping) else getattr(value, self.field)

    def frame(self, results):
        """The DataFrame ``prof.sql`` queries and ``tfprof table`` writes."""
        value = self.value(results)
        if self.frame_of is not None:
            return self.frame_of(value)
        return value.reset_index() if self.index_column else value

    def property(self) -> property:
        """A read-only property holding :meth:`value` of the profile's results."""
        return property(lambda prof: self.value(prof._results), doc=self.description)


def _t(name, description, result=None, keys=(), kind="table", field=None, **more):
    return TableEntry(name, description, name if result is None else result, field,
                      tuple(keys), kind, **more)


_H, _HD = ("host",), ("host", "device")
CATALOGUE: tuple[TableEntry, ...] = (
    _t("events", "Every event of every host, one row each, by its global event id (the "
       "index of prof.events, the column event in SQL and tfprof table): host, plane, line, "
       "name, start_us and duration_us (relative to the profile start), line_id, start_ps, "
       "duration_ps, num_occurrences (not in SQL).", "", ("event",), "events"),
    _t("stats", "Every argument of every event, one row each (its own stats, then its "
       "event metadata's): host, event, name, kind, the value, origin, key and text as the "
       "details and exports write them (read with prof.sql: needs DuckDB).", "", (),
       "events"),
    _t("steps", "One row per step (index step, plus host): duration_ms and one *_ms column "
       "per step-time category; source says where steps came from (markers, device, "
       "group_id, inferred); step is the marker's number, or its group id where markers "
       "number several steps alike (each epoch from 0).", keys=("host", "step"),
       index_column=True),
    _t("op_stats", "TensorFlow stats: one row per op on the host and devices: occurrences, "
       "total and self time, self-time % (IDLE included); device ops' FLOP rates, bandwidth, "
       "intensity, tensor-core share and bound-by, as XProf's.",
       keys=("host_or_device", "type", "operation")),
    _t("kernel_stats", "GPU kernel stats: one row per kernel and op: launch configuration, "
       "occupancy, Tensor Core use, durations (us).",
       keys=_H + ("kernel_name", "op_name", "block_dim", "grid_dim", "registers_per_thread",
                  "shmem_bytes")),
    _t("hlo_stats", "One row per HLO op of the XLA programs: category, expression, framework "
       "op, times, FLOPs, bytes, bound-by; attrs['reasons'] says what is missing.",
       keys=("program_id", "hlo_op_name")),
    _t("roofline", "Per HLO op: arithmetic intensity and FLOP/s against the device's roofline "
       "(first row: the whole program).", keys=("program_id", "operation")),
    _t("source_lines", "Device time by the user's code: one row per source location (file, "
       "line, function) with self time, share of the device op time, ops, occurrences; ops "
       "without a location in rows of their own (no_source says why); sums to hlo_stats' "
       "self time.", keys=("file", "line", "function", "no_source")),
    _t("source_stacks", "Device time by Python stack: one row per stack (frames outermost "
       "first, their functions), as source_lines.", keys=("stack", "no_source")),
    _t("memory_summary", "One row per allocator: allocations, capacity, peaks.", "memory",
       _H + ("allocator",), field="summary"),
    _t("memory_timeline", "One row per allocation or deallocation, with memory in use after "
       "it.", "memory", field="timeline"),
    _t("memory_breakdown", "Allocations active at each allocator's peak.", "memory",
       field="breakdown"),
    _t("pod", "Each step's breakdown on every host, the hosts' steps aligned as XProf's pod "
       "viewer aligns them (step: the first host's number, host_step: the host's own, "
       "xprof_step: the pod viewer's number, bottleneck: its largest category by XProf's "
       "names), the slowest host marked; steps inferred from a repeated program, which XProf's "
       "pod viewer does not show, are matched by number (xprof_step empty).",
       keys=("host", "step")),
    _t("planes", "One row per plane: host, plane, plane_id, lines, events, stats.",
       keys=("host", "plane")),
    _t("lines", "One row per line (thread or stream): host, plane, line, line_id, display "
       "name and id, start_us, events.", keys=("host", "plane", "line_id")),
    _t("gpu_utilization", "Per host, device, stream ('all': the device) and step: wall, busy "
       "and idle time by cause (sync/memcpy, input, launch-bound, host-bound, other), summing "
       "to the wall; step -2: the device's time outside every step, step -1: its active span "
       "on a host without steps.", keys=_HD + ("stream", "step")),
    _t("gpu_overlap", "Per device and step: collective time, the part hidden under compute, "
       "the exposed part (with none in any step, attrs['collectives_outside']: the ms and "
       "devices of collectives outside every step).", keys=_HD + ("step",)),
    _t("duty_cycle", "Per device: busy time over its active span (attrs['device_duty_cycle_pct']"
       ": every device with activity combined, XProf's figure on TPUs; the overview's measure "
       "counts the devices active in the steps).", keys=_HD),
    _t("stragglers", "Per step: the host and device that finished last, and by how much.",
       keys=("step",)),
    _t("measures", "The headline measures, one row each (index: key): value, unit, scope "
       "(devices, time), rule, spread over devices, XProf's figure where its rule differs "
       "(see analysis.findings.measures).", keys=("key",), index_column=True),
    _t("critical_path", "Per step, the chain of events that bounds it, covering the step: one "
       "row per segment (see analysis.critical).", keys=("host", "step", "order")),
    _t("critical_path_summary", "Critical-path time per category and op, shares of the "
       "steps' time; attrs['sentence'] says what bounds the steps.",
       keys=("level", "category", "name", "resource")),
    _t("launch_latency", "Launch-to-start latency per kernel (mean, percentiles, max; "
       "graph_launches: those one call started with other kernels, a CUDA graph): "
       "launch_latency's per_kernel.", "launch_latency", _H + ("kernel_name",), "part",
       "per_kernel"),
    _t("launch_histogram", "Launch-to-start latencies as a histogram per device: "
       "launch_latency's histogram.", "launch_latency", _HD + ("bin",), "part", "histogram"),
    _t("launch_outliers", "The kernels that waited longest between launch and start: "
       "launch_latency's outliers.", "launch_latency", (), "part", "outliers"),
    _t("launch_queue", "Kernels launched and not yet started, over time, per device: "
       "launch_latency's queue.", "launch_latency", _HD + ("time_us",), "part", "queue"),
    _t("program_memory", "One row per XLA program: peak heap and buffers (memory space 0); "
       "prof.program_memory().", keys=("program_id", "memory_space"), kind="part",
       frame_of=_programs),
    _t("counters", "Hardware counter samples, one row each: host, device, counter, time_us, "
       "value, unit, source (the sampler's file, the profile's counter lines); tfprof table "
       "counters --wide: one column per counter."),
    _t("op_counters", "Per op and counter: samples inside the op's executions and their "
       "mean, median, max (NaN below 5 samples).",
       keys=_HD + ("kind", "program", "op", "counter")),
    _t("input_pipeline", "Input pipeline analysis: summary (verdict), device_side, host_side, "
       "input_ops.", kind="bundle"),
    _t("tf_data", "tf.data bottleneck analysis: pipelines, iterator graph, bottlenecks with "
       "suggestions, summary.", kind="bundle"),
    _t("launch_latency", "Kernel launch latency: per_kernel (launch-to-start latency per "
       "kernel), histogram, outliers, queue (kernels launched and not yet started, over "
       "time), reasons.", kind="bundle"),
    _t("start_time", "Wall-clock start of the profile (UTC) or None.", "timing",
       kind="fact", field="start_time"),
    _t("stop_time", "Wall-clock end of the profile (UTC) or None.", "timing", kind="fact",
       field="stop_time"),
    _t("duration_us", "Stop minus start, else the span of the events.", "timing",
       kind="fact", field="duration_us"),
    _t("n_events", "Number of events of all hosts.", "timing", kind="fact",
       field="n_events"),
    _t("aligned", "Whether hosts share one wall-clock time axis.", "timing", kind="fact",
       field="aligned"),
    _t("event_offsets", "{host: global event id of its first event}.", kind="fact"),
    _t("framework", "What wrote the profile: .name, .gpu_vendors.", kind="fact"),
    _t("device_peaks", "Peak FLOP/s and memory bandwidth the XLA tables use "
       "(set_device_peaks's, else the first device plane's).", kind="fact"),
)


def profile_entries(catalogue=None) -> dict[str, TableEntry]:
    """{name: entry} of the entries that are ``Profile`` properties (``events`` is one too,
    written in profile.py: it is built from the decoded hosts)."""
    return {e.name: e for e in catalogue or CATALOGUE if e.kind in PROPERTY_KINDS}


def queried_entries(catalogue=None) -> dict[str, TableEntry]:
    """{name: entry} of the tables ``prof.sql`` and ``tfprof table`` know, in the
    catalogue's order (the event tables first)."""
    return {e.name: e for e in catalogue or CATALOGUE if e.kind in QUERIED_KINDS}


# ---- docs/API.md's table of tables ------------------------------------------------------------
API = Path(__file__).resolve().parents[1] / "docs" / "API.md"
BEGIN = "<!-- tables: generated by `python -m tfprof_nb.table_catalogue`; do not edit -->"
END = "<!-- end of tables -->"


def api_section(catalogue=None) -> str:
    """The generated part of docs/API.md: one row per entry (name, kind, where it is, keys,
    what it holds)."""
    rows = [BEGIN, "", "| name | kind | in | key columns | what it holds |",
            "| --- | --- | --- | --- | --- |"]
    for e in catalogue or CATALOGUE:
        keys = ", ".join(f"`{k}`" for k in e.keys) or "-"
        where = ([f"`prof.{e.name}`"] if e.kind in PROPERTY_KINDS or e.name == "events"
                 else []) + (["SQL", "`tfprof table`"] if e.kind in QUERIED_KINDS else [])
        rows.append(f"| `{e.name}` | {e.kind} | {', '.join(where)} | {keys} | "
                    f"{e.description.replace('|', '/')} |")
    return "\n".join(rows + ["", END])


def api_text(text: str, catalogue=None) -> str:
    """``text`` (docs/API.md) with its generated section replaced by the catalogue's."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not (begin and end):
        raise ValueError(f"docs/API.md lacks the lines {BEGIN!r} and {END!r}")
    return head + api_section(catalogue) + tail


if __name__ == "__main__":
    API.write_text(api_text(API.read_text()))
