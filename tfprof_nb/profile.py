""":class:`Profile`, the facade over one profiling run's analyses (``tp.load`` makes one).

Each host's file is decoded and analysed on its own (threads here, or Dask workers with
``tp.load(path, client=client)``); every table is an analysis unit (``tfprof_nb.analysis``)
computed on first use and cached by :class:`~.analysis.runtime.results.Results`.  ``Profile``
only delegates: each public table is a lookup of an analysis' result by name.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from . import events as _events
from ._deprecated import renamed
from ._outputs import ProfileOutputs
from .analysis.runtime.results import HostSpaces, Results
from .analysis.xla.device_peaks import user_peaks

__all__ = ["Profile"]


def _result(name: str, doc: str, key: str | None = None, field: str | None = None) -> property:
    """A read-only property: the result of analysis ``name`` (its ``key`` of a dict, or its
    ``field`` of a result object, when given)."""
    def get(self):
        value = self._results[name]
        if key is not None:
            return value[key]
        return value if field is None else getattr(value, field)
    return property(get, doc=doc)


class Profile(ProfileOutputs):
    """A profiling run: one decoded XSpace per host, and every analysis of it.

    Tables are built on first access and cached.  Times are relative to the profile start
    (the earliest host's start), in the unit their column name says.  ``hosts`` is where the
    hosts live (``LocalHosts``/``DaskHosts``) or a mapping {host: XSpaceData}.
    """

    def __init__(self, hosts, source: list[str] | None = None, inputs: dict | None = None):
        if isinstance(hosts, Mapping):
            from .analysis.runtime.scheduling.local_hosts import LocalHosts

            if not hosts:
                raise ValueError("a Profile needs at least one host")
            hosts = LocalHosts(dict(hosts))
        self._results = Results(hosts, inputs)
        self.source = list(source or [])
        self.spaces = HostSpaces(hosts)

    def result(self, name: str):
        """The result of the analysis ``name`` (see ``tfprof_nb.analysis.runtime.registry``)."""
        return self._results[name]

    def host_partials(self, name: str) -> dict:
        """{host: partial} of analysis ``name``'s per-host step, computed where hosts live."""
        return self._results.partials(name)

    # ---- hosts, time and events -------------------------------------------------------------
    @property
    def hosts(self) -> list[str]:
        """Host names, one per ``.xplane.pb`` file that could be read."""
        return self._results.host_names

    @property
    def load_errors(self) -> dict[str, str]:
        """{host: what is wrong} for the host files that could not be read."""
        return dict(self._results.hosts.errors)

    def skipped(self, name: str) -> dict[str, str]:
        """{host: why} of the hosts left out of result ``name`` (``tp.load(on_error="skip")``)."""
        return self._results.skipped(name)

    start_time = _result("timing", "Wall-clock start of the profile (UTC) or None.", "start_time")
    stop_time = _result("timing", "Wall-clock end of the profile (UTC) or None.", "stop_time")
    duration_us = _result("timing", "Stop minus start, else the span of the events.",
                          "duration_us")
    n_events = _result("timing", "Number of events of all hosts.", "n_events")
    aligned = _result("timing", "Whether hosts share one wall-clock time axis.", "aligned")
    event_offsets = _result("event_offsets", "{host: global event id of its first event}.")
    planes = _result("planes", "One row per plane: host, plane, plane_id, lines, events, stats.")
    lines = _result("lines", "One row per line (thread or stream): host, plane, line, line_id, "
                    "display name and id, start_us, events.")

    @property
    def events(self) -> pd.DataFrame:
        """Every event of every host, one row each; the index is the global event id.
        Columns: host, plane, line, name (categoricals), start_us, duration_us (float,
        relative to the profile start), line_id, start_ps, duration_ps, num_occurrences."""
        return self._results.cached("events", lambda: _events.events_table(
            self.spaces, self.result("shifts")))

    def stat(self, name: str) -> pd.Series:
        """Values of the event stat ``name``, indexed by global event id (vectorised).
        Integers come as int64 (uint64 values above 2**63-1 as their int64 bit pattern when
        mixed with int64 values, else as uint64), doubles as float64, strings and resolved
        refs as a categorical, bytes as objects.  Events without the stat are absent."""
        return _events.host_stat_series(self.spaces, self.event_offsets, name)

    def event_stats(self, names, events: pd.DataFrame | None = None) -> pd.DataFrame:
        """``events`` (default: all) with one column per stat in ``names`` (NaN where absent;
        the last value where an event carries a stat twice)."""
        names = [names] if isinstance(names, str) else list(names)
        return _events.with_stats(self.events if events is None else events,
                                  {n: self.stat(n) for n in names})

    # ---- the profiler's tools ------------------------------------------------------------------
    steps = _result("steps", "One row per step (index ``step``, plus ``host``): duration_ms and "
                    "one *_ms column per step-time category; ``source`` says where steps came "
                    "from (markers, device, group_id, inferred).")
    op_stats = _result("op_stats", "TensorFlow stats: one row per op on the host and devices: "
                       "occurrences, total and self time, self-time % (IDLE included).")
    kernel_stats = _result("kernel_stats", "GPU kernel stats: one row per kernel and op, launch "
                           "configuration, occupancy, Tensor Core use, durations (us).")
    input_pipeline = _result("input_pipeline", "Input pipeline analysis: summary (verdict), "
                             "device_side, host_side, input_ops.")
    tf_data = _result("tf_data", "tf.data bottleneck analysis: pipelines, iterator graph, "
                      "bottlenecks with suggestions, summary.")
    pod = _result("pod", "Each step's breakdown on every host, the slowest host marked.")
    measures = _result("measures", "The headline measures, one row each (index: key): value, "
                       "unit, scope (devices, time), rule, spread over devices, XProf's figure "
                       "where its rule differs (see analysis.findings.measures).")
    framework = _result("framework", "What wrote the profile: .name, .gpu_vendors.")
    counters = _result("counters", "Hardware counter samples, one row each: host, device, "
                       "counter, time_us, value, unit, source (the sampler's file, the "
                       "profile's counter lines); see analysis.hardware.counters.")
    op_counters = _result("op_counters", "Per op and counter: samples inside the op's "
                          "executions and their mean, median, max (NaN below 5 samples).")
    memory_summary = _result("memory", "One row per allocator: allocations, capacity, peaks.",
                             field="summary")
    memory_timeline = _result("memory", "One row per allocation or deallocation, with memory in "
                              "use after it.", field="timeline")
    memory_breakdown = _result("memory", "Allocations active at each allocator's peak.",
                               field="breakdown")
    hlo_stats = _result("hlo_stats", "One row per HLO op of the XLA programs: category, "
                        "expression, framework op, times, FLOPs, bytes, bound-by; "
                        "attrs['reasons'] says what is missing.")
    source_lines = _result("source_lines", "Device time by the user's code: one row per source "
                           "location (file, line, function) with self time, share of the "
                           "device op time, ops, occurrences; ops without a location in rows "
                           "of their own (no_source says why); sums to hlo_stats' self time.")
    source_stacks = _result("source_stacks", "Device time by Python stack: one row per stack "
                            "(frames outermost first, their functions), as source_lines.")
    roofline = _result("roofline", "Per HLO op: arithmetic intensity and FLOP/s against the "
                       "device's roofline (first row: the whole program).")
    critical_path = _result("critical_path", "Per step, the chain of events that bounds it, "
                            "covering the step: one row per segment (see analysis.critical).")
    critical_path_summary = _result("critical_path_summary", "Critical-path time per category "
                                    "and op; attrs['sentence'] says what bounds the steps.")
    device_peaks = _result("device_peaks", "Peak FLOP/s and memory bandwidth the XLA tables use "
                           "(set_device_peaks's, else the first device plane's).")

    def op_stats_table(self, include_idle: bool = True) -> pd.DataFrame:
        """TensorFlow stats with or without the IDLE rows (percentages follow)."""
        return self.result("op_stats" if include_idle else "op_stats_without_idle")

    def scope_stats(self, min_bytes: int = 0, max_depth: int | None = None,
                    side: str = "Host") -> pd.DataFrame:
        """Time and memory along the name-scope hierarchy (see analysis.tf.scopes)."""
        from .analysis.tf.scopes import scope_stats_table

        return scope_stats_table(self.result("op_stats_without_idle"), self.memory_timeline,
                                 min_bytes=min_bytes, max_depth=max_depth, side=side)

    def overview(self):
        """The overview page: step time, input-bound verdict, precision, top ops, run
        environment, recommendations, and reasons for what is missing."""
        return self.result("overview")

    def recommendations(self) -> list:
        """Findings with evidence and a suggested fix (see analysis.findings.recommendations)."""
        return self.result("recommendations")

    # ---- GPU time ----------------------------------------------------------------------------
    gpu_utilization = _result("gpu_utilization", "Per host, device, stream ('all': the device) "
                              "and step: wall, busy and idle time by cause (sync/memcpy, input, "
                              "launch-bound, host-bound, other), summing to the wall; step -2: "
                              "the device's time outside every step, step -1: its active span "
                              "on a host without steps.")
    gpu_overlap = _result("gpu_overlap", "Per device and step: collective time, the part hidden "
                          "under compute, the exposed part.")
    launch_latency = _result("launch_latency", "Launch-to-start latency per kernel, histogram, "
                             "outliers and the queue length over time.")
    duty_cycle = _result("duty_cycle", "Per device: busy time over its active span "
                         "(attrs['device_duty_cycle_pct']).")
    stragglers = _result("stragglers", "Per step: the host and device that finished last, and "
                         "by how much.")

    def sql(self, query: str) -> pd.DataFrame:
        """Run a DuckDB query over events, stats, steps and the tool tables (a DataFrame);
        needs ``pip install "tfprof-nb[sql]"``.  See tfprof_nb.sql for the tables."""
        from .sql import SqlSession

        return self._results.cached("sql", lambda: SqlSession(self._results, self.spaces)) \
            .query(query)

    # ---- XLA programs --------------------------------------------------------------------------
    def set_device_peaks(self, peak_flops_per_s: float, memory_bw_bytes_per_s: float,
                         device: str = "user") -> None:
        """Use these peaks (FLOP/s, bytes/s) from now on: ``device_peaks``, ``hlo_stats``,
        ``roofline``, ``op_profile()``, ``overview()`` and the charts and views follow (the
        one way to give peaks: CPUs, devices whose plane has none)."""
        self._results.set_input("user_peaks", user_peaks(
            peak_flops_per_s, memory_bw_bytes_per_s, device, "set_device_peaks"))

    def with_device_peaks(self, peak_flops_per_s: float, memory_bw_bytes_per_s: float,
                          device: str = "user") -> "Profile":
        """Deprecated (goes in the next release): use ``set_device_peaks``.  A profile
        sharing this one's decoded hosts whose XLA tables use these peaks."""
        renamed("Profile.with_device_peaks(...)", "prof.set_device_peaks(...)")
        peaks = user_peaks(peak_flops_per_s, memory_bw_bytes_per_s, device, "with_device_peaks")
        return Profile(self._results.hosts, self.source,
                       {**self._results.inputs, "user_peaks": peaks})

    def op_profile(self, group_by: str = "program", include_idle: bool = True,
                   peak_flops_per_s: float | None = None,
                   memory_bw_bytes_per_s: float | None = None) -> pd.DataFrame:
        """XLA time as a tree (program -> category -> op, or category -> op) with utilisation
        against the device's peaks (``device_peaks``; see analysis.xla.op_profile).  The
        peak arguments are deprecated (they go in the next release): ``set_device_peaks``."""
        from .analysis.xla.op_profile import op_profile_for

        if peak_flops_per_s is None and memory_bw_bytes_per_s is None:
            return op_profile_for(self.result("xla"), self.device_peaks, self.hlo_stats,
                                  group_by=group_by, include_idle=include_idle)
        peaks = user_peaks(peak_flops_per_s, memory_bw_bytes_per_s, "user", "argument")
        renamed("op_profile(peak_flops_per_s=..., memory_bw_bytes_per_s=...)",
                "prof.set_device_peaks(...), then prof.op_profile()")
        return op_profile_for(self.result("xla"), peaks, group_by=group_by,
                              include_idle=include_idle)

    def roofline_for(self, peak_flops_per_s: float,
                     memory_bw_bytes_per_s: float) -> pd.DataFrame:
        """Deprecated (goes in the next release): ``set_device_peaks``, then ``roofline``.  The
        roofline table against the given peak FLOP/s and memory bandwidth (bytes/s)."""
        from .analysis.xla.roofline import roofline_for

        peaks = user_peaks(peak_flops_per_s, memory_bw_bytes_per_s, "user", "argument")
        renamed("Profile.roofline_for(...)", "prof.set_device_peaks(...), then prof.roofline")
        return roofline_for(self.result("xla"), peaks)

    def program_memory(self, program=None, memory_space: int = 0):
        """XLA buffer assignment (XProf's memory viewer): without ``program``, one row per
        program (peak heap, ...); with a program id or module name, its ``ProgramMemory``:
        peak heap, ``buffers`` live at the peak, ``heap`` over the program order."""
        from .analysis.xla.memory.program_memory import program_memory_for

        return program_memory_for(self.result("program_memory"), program, memory_space)

    def analyze(self, release: bool = True) -> "Profile":
        """Run every analysis now (host steps where hosts live, in parallel); ``release``
        drops the per-event arrays the hosts derived afterwards.  Returns the profile."""
        from .analysis.runtime.registry import analyses

        self._results.compute(list(analyses()))
        if release:
            self._results.hosts.release()
        return self

    analyse = analyze  # British spelling: users type both, so an alias without a warning

    def summary(self) -> str:
        """A few lines describing the profile (hosts, planes, events, duration, errors)."""
        return "\n".join([self.result("summary")] + [
            f"  {h}: not loaded ({why})" for h, why in self.load_errors.items()])

    def __repr__(self) -> str:
        return f"<tfprof_nb.Profile hosts={self.hosts!r} events={self.n_events}>"
