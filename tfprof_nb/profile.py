"""``tp.load`` and :class:`Profile`, the facade over one profiling run's analyses.

Each host's file is decoded and analysed on its own (threads here, or Dask workers with
``tp.load(path, client=client)``); every table is an analysis unit (``tfprof_nb.analysis``)
computed on first use and cached by :class:`~.analysis.results.Results`.  ``Profile`` only
delegates: each public table is a one-line lookup by the analysis' name.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import pandas as pd

from .analysis import events as _events
from .analysis.device_peaks import DevicePeaks
from .analysis.results import HostSpaces, Results
from .errors import LoadWarning
from .xspace.files import find_profile_files, host_names

__all__ = ["Profile", "load"]


def load(path, *, parallel: bool = True, strict: bool = False, client=None,
         timeout: float = 600.0) -> "Profile":
    """Load a profile: a logdir (newest run), a run directory (all hosts), one ``.xplane.pb``
    file, or a list of these.

    Each host's file is decoded independently (in parallel threads: the decoder releases the
    GIL).  A host that cannot be read is left out with a :class:`LoadWarning` and named in
    ``prof.load_errors``; with ``strict=True`` it raises :class:`ProfileFormatError` instead.
    With ``client`` (a ``dask.distributed.Client``) every host is decoded and analysed on a
    worker and only partial results come back; ``timeout`` (s) bounds each wait for workers.
    A profile too large for this machine's free memory fails before decoding, suggesting
    ``client=``.
    """
    from .analysis.engine import open_hosts

    files = find_profile_files(path)
    named = host_names(files)
    hosts = open_hosts(named, path, client=client, strict=strict, parallel=parallel,
                       timeout=timeout)
    if hosts.errors:
        warnings.warn(f"{len(hosts.errors)} of {len(named)} host(s) could not be read and "
                      f"are left out: {', '.join(hosts.errors)} (see prof.load_errors)",
                      LoadWarning, stacklevel=2)
    return Profile(hosts, source=[str(f) for f in files])


class Profile:
    """A profiling run: one decoded XSpace per host, and every analysis of it.

    Tables are built on first access and cached.  Times are relative to the profile start
    (the earliest host's start), in the unit their column name says.  ``hosts`` is where the
    hosts live (``LocalHosts``/``DaskHosts``) or a mapping {host: XSpaceData}.
    """

    def __init__(self, hosts, source: list[str] | None = None, inputs: dict | None = None):
        if isinstance(hosts, Mapping):
            from .analysis.engine import LocalHosts

            if not hosts:
                raise ValueError("a Profile needs at least one host")
            hosts = LocalHosts.from_spaces(dict(hosts))
        self._results = Results(hosts, inputs)
        self.source = list(source or [])
        self.spaces = HostSpaces(hosts)

    def result(self, name: str):
        """The result of the analysis ``name`` (see ``tfprof_nb.analysis.registry``)."""
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

    @property
    def aligned(self) -> bool:
        """Whether hosts share one time axis (every host's start is a wall-clock time)."""
        return all(i["wall_clock"] for i in self.result("info").values())

    @property
    def event_offsets(self) -> dict[str, int]:
        """{host: global event id of its first event}."""
        return self.result("event_offsets")

    @property
    def start_time(self) -> pd.Timestamp | None:
        """Wall-clock start of the profile (UTC), from the Task Environment plane."""
        return _events.wall_clock(self.result("info"), "start_ns", min)

    @property
    def stop_time(self) -> pd.Timestamp | None:
        """Wall-clock end of the profile (UTC), from the Task Environment plane."""
        return _events.wall_clock(self.result("info"), "stop_ns", max)

    @property
    def duration_us(self) -> float:
        """Profile duration: stop minus start when known, else the span of the events."""
        return _events.duration_us(self.result("info"), self.result("shifts"))

    @property
    def n_events(self) -> int:
        """Number of events of all hosts."""
        return sum(i["events"] for i in self.result("info").values())

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

    @property
    def planes(self) -> pd.DataFrame:
        """One row per plane: host, plane, plane_id, lines, events, and its plane-level stats."""
        return self.result("planes")

    @property
    def lines(self) -> pd.DataFrame:
        """One row per line (thread or stream): host, plane, line, line_id, display name,
        display id, start_us and events."""
        return self.result("lines")

    # ---- the profiler's tools ------------------------------------------------------------------
    @property
    def steps(self) -> pd.DataFrame:
        """One row per step (index ``step``, plus ``host``): ``duration_ms`` and one ``*_ms``
        column per step-time category; ``source`` says where the steps came from."""
        return self.result("steps")

    @property
    def op_stats(self) -> pd.DataFrame:
        """TensorFlow stats: one row per op on the host and on devices, occurrences, total and
        self time, self-time % and cumulative % per side (IDLE included)."""
        return self.result("op_stats")

    def op_stats_table(self, include_idle: bool = True) -> pd.DataFrame:
        """TensorFlow stats with or without the IDLE rows (percentages follow)."""
        return self.result("op_stats" if include_idle else "op_stats_without_idle")

    @property
    def kernel_stats(self) -> pd.DataFrame:
        """GPU kernel stats: one row per kernel, launch configuration and op, occupancy,
        Tensor Core eligibility and use, occurrences and total/avg/min/max duration (us)."""
        return self.result("kernel_stats")

    @property
    def input_pipeline(self):
        """Input pipeline analysis: ``summary`` (verdict, shares), ``device_side``,
        ``host_side`` (reading, preprocessing, enqueue) and ``input_ops``."""
        return self.result("input_pipeline")

    @property
    def tf_data(self):
        """tf.data bottleneck analysis: ``pipelines``, per-call iterator ``graph``,
        ``bottlenecks`` with suggestions, ``summary``."""
        return self.result("tf_data")

    @property
    def pod(self) -> pd.DataFrame:
        """Pod view: each step's breakdown on every host, with the slowest host marked."""
        return self.result("pod")

    @property
    def framework(self):
        """What wrote the profile: ``.name`` (jax, tensorflow, unknown), ``.gpu_vendors``."""
        return self.result("framework")

    def scope_stats(self, min_bytes: int = 0, max_depth: int | None = None,
                    side: str = "Host") -> pd.DataFrame:
        """Time and memory along the name-scope hierarchy (``scope``, ``parent``, ``depth``);
        ``min_bytes`` drops scopes that allocate less (see analysis.scopes)."""
        from .analysis.scopes import scope_stats_table

        return scope_stats_table(self.result("op_stats_without_idle"), self.memory_timeline,
                                 min_bytes=min_bytes, max_depth=max_depth, side=side)

    def overview(self):
        """The overview page: step-time summary and breakdown, input-bound verdict, precision,
        top 10 device and host ops, run environment, recommendations, reasons."""
        return self.result("overview")

    def recommendations(self) -> list:
        """Findings with evidence and a suggested fix (see analysis.recommendations)."""
        return self.result("recommendations")

    @property
    def memory_summary(self) -> pd.DataFrame:
        """One row per allocator: allocations, capacity, peaks (time, step, stack, heap,
        free, fragmentation)."""
        return self.result("memory")[0]

    @property
    def memory_timeline(self) -> pd.DataFrame:
        """One row per allocation/deallocation, by allocator and time, with memory in use."""
        return self.result("memory")[1]

    @property
    def memory_breakdown(self) -> pd.DataFrame:
        """Allocations active at each allocator's peak, largest first (equal ones merged)."""
        return self.result("memory")[2]

    # ---- XLA programs --------------------------------------------------------------------------
    @property
    def hlo_stats(self) -> pd.DataFrame:
        """One row per HLO op (GPU kernels, XLA:CPU thunks): category, expression, framework
        op, times, FLOPs, bytes, bound-by; ``attrs["reasons"]`` says what is missing."""
        return self.result("hlo_stats")

    @property
    def roofline(self) -> pd.DataFrame:
        """Per HLO op: arithmetic intensity and FLOP/s against the device's roofline (first
        row: the whole program); see :meth:`roofline_for` for other peaks."""
        return self.result("roofline")

    @property
    def device_peaks(self) -> DevicePeaks:
        """Peak FLOP/s and memory bandwidth the XLA tables use: those set with
        :meth:`set_device_peaks`, else the first device plane's; empty for CPUs."""
        return self.result("device_peaks")

    def set_device_peaks(self, peak_flops_per_s: float, memory_bw_bytes_per_s: float,
                         device: str = "user") -> None:
        """Use these peaks (FLOP/s, bytes/s) for ``hlo_stats``, ``op_profile()`` and
        ``roofline`` (CPUs, devices without peak stats, or to override them)."""
        self._results.set_input("user_peaks", _peaks(peak_flops_per_s, memory_bw_bytes_per_s,
                                                     device, "set_device_peaks"))

    def with_device_peaks(self, peak_flops_per_s: float, memory_bw_bytes_per_s: float,
                          device: str = "user") -> "Profile":
        """A profile sharing this one's decoded hosts whose XLA tables use these peaks."""
        peaks = _peaks(peak_flops_per_s, memory_bw_bytes_per_s, device, "with_device_peaks")
        return Profile(self._results.hosts, self.source,
                       {**self._results.inputs, "user_peaks": peaks})

    def op_profile(self, group_by: str = "program", include_idle: bool = True,
                   peak_flops_per_s: float | None = None,
                   memory_bw_bytes_per_s: float | None = None) -> pd.DataFrame:
        """XLA time as a tree (``node``, ``parent``, ``depth``, ``kind``) by program ->
        category -> op or category -> op, with utilisation against the device's (or these)
        peaks.  See analysis.op_profile."""
        from .analysis.op_profile import op_profile_for

        if peak_flops_per_s is None and memory_bw_bytes_per_s is None:
            return op_profile_for(self.result("xla"), self.device_peaks, self.hlo_stats,
                                  group_by=group_by, include_idle=include_idle)
        return op_profile_for(self.result("xla"), _peaks(peak_flops_per_s,
                              memory_bw_bytes_per_s, "user", "argument"),
                              group_by=group_by, include_idle=include_idle)

    def roofline_for(self, peak_flops_per_s: float,
                     memory_bw_bytes_per_s: float) -> pd.DataFrame:
        """The roofline table against the given peak FLOP/s and memory bandwidth (bytes/s)."""
        from .analysis.roofline import roofline_for

        return roofline_for(self.result("xla"), _peaks(peak_flops_per_s, memory_bw_bytes_per_s,
                                                       "user", "argument"))

    def program_memory(self, program=None, memory_space: int = 0):
        """XLA buffer assignment (XProf's memory viewer): without ``program``, one row per
        program (peak heap, ...); with a program id or module name, its ``ProgramMemory``:
        peak heap, ``buffers`` live at the peak, ``heap`` over the program order."""
        from .analysis.program_memory import program_memory_for

        return program_memory_for(self.result("program_memory"), program, memory_space)

    def analyse(self, release: bool = True) -> "Profile":
        """Run every analysis now (host steps where hosts live, in parallel); with
        ``release`` drop the per-event arrays the hosts derived afterwards."""
        from .analysis.registry import analyses

        self._results.compute(list(analyses()))
        if release:
            self._results.hosts.release()
        return self

    # ---- views and files -----------------------------------------------------------------------
    @property
    def plot(self):
        """The profile's charts as plotly figures (``prof.plot.step_time()``, ...)."""
        from .plot import ProfilePlots

        return ProfilePlots(self)

    def show(self):
        """The dashboard widget of this profile (overview, trace viewer, stats, memory)."""
        from .widgets.dashboard import Dashboard

        return Dashboard(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from ._display import view_bundle

        return view_bundle(self.show, self.summary, include, exclude)

    def _ipython_display_(self):
        from ._display import display_view

        display_view(self.show, self.summary)

    def to_html(self, path, title: str | None = None):
        """Write one self-contained offline HTML report (the whole dashboard); returns its
        path."""
        from .report.html import write_report

        return write_report(self, path, title)

    def export_notebook(self, path, title: str | None = None):
        """Write a small report notebook (summary and dashboard, rendered offline)."""
        from .report.notebook import export_notebook

        return export_notebook(self, path, title)

    def to_chrome_trace(self, path, compress: bool | None = None):
        """Write every event and the steps as Chrome Trace Event Format JSON (gzip when
        ``compress``, default: ``path`` ends with ``.gz``); returns the file's path."""
        from .export import write_chrome_trace

        return write_chrome_trace(self, path, compress=compress)

    def to_perfetto(self, path):
        """Write every event and the steps as a Perfetto protobuf trace; returns its path."""
        from .export import write_perfetto

        return write_perfetto(self, path)

    def summary(self) -> str:
        """A few lines describing the profile (hosts, planes, events, duration)."""
        return _events.summary_text(self.result("info"), self.n_events, self.duration_us,
                                    self.start_time, self.load_errors)

    def __repr__(self) -> str:
        return f"<tfprof_nb.Profile hosts={self.hosts!r} events={self.n_events}>"


def _peaks(flops, bandwidth, device: str, source: str) -> DevicePeaks:
    if flops is None or bandwidth is None:
        raise ValueError("give both peak_flops_per_s and memory_bw_bytes_per_s")
    return DevicePeaks(float(flops), float(bandwidth), 0.0, device, source)
