"""The :class:`Profile`: one profiling run, one decoded XSpace per host, as pandas tables.

Each host is decoded and analysed on its own (here in threads, or on Dask workers with
``tp.load(path, client=client)``); the tables combine the hosts' small partial results.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from functools import cached_property

import numpy as np
import pandas as pd

from ._tables import categorical_from_tables, stat_series
from .errors import LoadWarning, ProfileFormatError
from .xspace.files import file_size, find_profile_files, host_name_of

__all__ = ["Profile", "load"]

# decoding keeps about 2x a file's size in columns; the analyses need about as much again
_MEMORY_PER_FILE_BYTE = 4.0


def load(path, *, parallel: bool = True, strict: bool = False, client=None,
         timeout: float = 600.0, storage_options: dict | None = None) -> "Profile":
    """Load a profile: a logdir (newest run), a run directory (all hosts), one ``.xplane.pb``
    file, or a list of these.

    Each host's file is decoded independently (in parallel threads: the decoder releases the
    GIL).  A host that cannot be read is left out with a :class:`LoadWarning` and named in
    ``prof.load_errors``; with ``strict=True`` it raises :class:`ProfileFormatError` instead.
    With ``client`` (a ``dask.distributed.Client``) every host is decoded and analysed on a
    worker and only partial results come back; ``timeout`` (s) bounds each wait for workers.
    A profile too large for this machine's free memory fails before decoding, suggesting
    ``client=``.  ``path`` may be a URL (``s3://``, ``gs://``, ``https://``, any fsspec URL;
    ``storage_options`` go to its file system): hosts are read through a local cache, on the
    workers themselves with ``client``.
    """
    files = find_profile_files(path, storage_options)
    hosts = [host_name_of(f) for f in files]
    dupes = {h for h in hosts if hosts.count(h) > 1}
    if dupes:  # same file name in different runs: keep them apart
        hosts = [f"{h} ({f.parent.name})" if h in dupes else h for h, f in zip(hosts, files)]
    named = {h: f for h, f in sorted(zip(hosts, files), key=lambda hf: hf[0])}
    if client is None:
        from .analysis.engine import LocalHosts

        _check_memory(named, parallel)
        engine = LocalHosts(named, strict=strict, parallel=parallel)
    else:
        from .analysis.engine import DaskHosts

        engine = DaskHosts(named, client, strict=strict, timeout=timeout)
    if not engine.names:
        problems = "; ".join(f"{h}: {e}" for h, e in engine.errors.items())
        raise ProfileFormatError(path, f"no host could be read ({problems})")
    if engine.errors:
        warnings.warn(f"{len(engine.errors)} of {len(named)} host(s) could not be read and "
                      f"are left out: {', '.join(engine.errors)} (see prof.load_errors)",
                      LoadWarning, stacklevel=2)
    return Profile(engine, source=[str(f) for f in files])


def _available_memory() -> int | None:
    """Bytes of memory available to this process now (None when unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _check_memory(files: Mapping, parallel: bool) -> None:
    """Refuse (MemoryError) a profile whose decoded size would not fit in free memory."""
    available = _available_memory()
    if available is None:
        return
    sizes = [file_size(f) for f in files.values()]
    need = _MEMORY_PER_FILE_BYTE * sum(sizes)
    if need > available:
        raise MemoryError(
            f"this profile ({len(sizes)} host file(s), {sum(sizes) / 2**30:.2f} GiB) needs "
            f"about {need / 2**30:.1f} GiB of memory to load and analyse, and "
            f"{available / 2**30:.1f} GiB are free: load it on a Dask cluster with "
            "tp.load(path, client=dask.distributed.Client(...)), or load fewer hosts")


class _Spaces(Mapping):
    """{host: XSpaceData}, brought over from where each host lives when first asked."""

    def __init__(self, engine):
        self._engine = engine
        self._fetched: dict = {}

    def __getitem__(self, host):
        if host not in self._fetched:
            if host not in self._engine.names:
                raise KeyError(host)
            self._fetched[host] = self._engine.space(host)
        return self._fetched[host]

    def __iter__(self):
        return iter(sorted(self._engine.names))

    def __len__(self):
        return len(self._engine.names)


class Profile:
    """A profiling run: one decoded XSpace per host.

    Tables are built lazily on first access and cached.  Times are relative to the profile
    start (the earliest host's start), in the unit their column name says.
    """

    def __init__(self, hosts, source: list[str] | None = None):
        if isinstance(hosts, Mapping):  # {host: XSpaceData}
            from .analysis.engine import LocalHosts

            if not hosts:
                raise ValueError("a Profile needs at least one host")
            hosts = LocalHosts.from_spaces(dict(hosts))
        self._engine = hosts
        self.source = list(source or [])
        self.spaces = _Spaces(hosts)

    # ---- hosts and time -----------------------------------------------------------------
    @property
    def hosts(self) -> list[str]:
        """Host names, one per ``.xplane.pb`` file that could be read."""
        return sorted(self._engine.names)

    @property
    def load_errors(self) -> dict[str, str]:
        """{host: what is wrong} for the host files that could not be read."""
        return dict(self._engine.errors)

    def host_partials(self, step: str) -> dict:
        """{host: partial result} of the per-host analysis ``step`` (see analysis.partials),
        in host order, computed where each host lives."""
        shifts = {} if step == "info" else self._shifts_ps
        parts = self._engine.partials(step, shifts)
        return {h: parts[h] for h in self.hosts}

    @cached_property
    def _infos(self) -> dict:
        return self.host_partials("info")

    @cached_property
    def aligned(self) -> bool:
        """Whether hosts share one time axis: true when every host's start is a wall-clock time
        (otherwise each host's times are relative to its own start)."""
        return all(i["wall_clock"] for i in self._infos.values())

    @cached_property
    def _shifts_ps(self) -> dict[str, int]:
        if not self.aligned:
            return {h: 0 for h in self.hosts}
        origin = min(i["origin_ns"] for i in self._infos.values())
        return {h: (i["origin_ns"] - origin) * 1000 for h, i in self._infos.items()}

    def _host_shift_ps(self, host: str) -> int:
        return self._shifts_ps[host]

    @property
    def start_time(self) -> pd.Timestamp | None:
        """Wall-clock start of the profile (UTC), from the Task Environment plane."""
        starts = [i["start_ns"] for i in self._infos.values() if i["start_ns"]]
        return pd.Timestamp(min(starts), unit="ns", tz="UTC") if starts else None

    @property
    def stop_time(self) -> pd.Timestamp | None:
        """Wall-clock end of the profile (UTC), from the Task Environment plane."""
        stops = [i["stop_ns"] for i in self._infos.values() if i["stop_ns"]]
        return pd.Timestamp(max(stops), unit="ns", tz="UTC") if stops else None

    @property
    def duration_us(self) -> float:
        """Profile duration: stop minus start when known, else the span of the events."""
        if self.start_time is not None and self.stop_time is not None:
            return (self.stop_time - self.start_time).value / 1e3
        spans = [(i["span_ps"][0] + self._shifts_ps[h], i["span_ps"][1] + self._shifts_ps[h])
                 for h, i in self._infos.items() if i["span_ps"] is not None]
        if not spans:
            return 0.0
        return (max(b for _, b in spans) - min(a for a, _ in spans)) / 1e6

    @property
    def n_events(self) -> int:
        """Number of events of all hosts."""
        return sum(i["events"] for i in self._infos.values())

    # ---- events ---------------------------------------------------------------------------
    @cached_property
    def _event_offsets(self) -> dict[str, int]:
        """Global event id of each host's first event."""
        offsets, total = {}, 0
        for host in self.hosts:
            offsets[host] = total
            total += self._infos[host]["events"]
        return offsets

    @cached_property
    def events(self) -> pd.DataFrame:
        """Every event of every host, one row each; the index is the global event id.

        Columns: host, plane, line, name (categoricals), start_us, duration_us (float, relative
        to the profile start), line_id, start_ps, duration_ps, num_occurrences (int64).
        """
        spaces = [self.spaces[h] for h in self.hosts]
        n = [len(s.events) for s in spaces]
        host_codes = np.repeat(np.arange(len(spaces), dtype=np.int32), n)
        plane = categorical_from_tables(
            [s.events.plane for s in spaces], [s.plane_names for s in spaces])
        line = categorical_from_tables(
            [s.events.line for s in spaces], [s.line_names for s in spaces])
        name = categorical_from_tables(
            [s.events.name_code for s in spaces], [s.events.names for s in spaces])
        start_ps = np.concatenate(
            [s.event_start_ps() + self._host_shift_ps(h) for h, s in zip(self.hosts, spaces)])
        duration_ps = np.concatenate([s.events.duration_ps for s in spaces])
        df = pd.DataFrame({
            "host": pd.Categorical.from_codes(host_codes, categories=self.hosts),
            "plane": plane,
            "line": line,
            "name": name,
            "start_us": start_ps / 1e6,
            "duration_us": duration_ps / 1e6,
            "line_id": np.concatenate([s.line_ids[s.events.line] for s in spaces]),
            "start_ps": start_ps,
            "duration_ps": duration_ps,
            "num_occurrences": np.concatenate([s.events.num_occurrences for s in spaces]),
        }, copy=False)
        df.index.name = "event"
        return df

    def stat(self, name: str) -> pd.Series:
        """Values of the event stat ``name``, indexed by global event id (vectorised).

        Integers come as int64 (uint64 values above 2**63-1 as their int64 bit pattern when
        mixed with int64 values, else as uint64), doubles as float64, strings and resolved refs
        as a categorical, bytes as objects.  Events without the stat are absent.
        """
        parts = []
        for host in self.hosts:
            st = self.spaces[host].stats
            rows = st.rows_named(name)
            if len(rows):
                parts.append((self._event_offsets[host], st, rows))
        return stat_series(parts, name)

    def event_stats(self, names, events: pd.DataFrame | None = None) -> pd.DataFrame:
        """``events`` (default: all) with one column per stat in ``names`` (NaN where absent)."""
        names = [names] if isinstance(names, str) else list(names)
        base = self.events if events is None else events
        out = base.copy()
        for n in names:
            values = self.stat(n)
            # an event may carry a stat twice (e.g. Trace.set_metadata): the last one wins
            values = values[~values.index.duplicated(keep="last")]
            out[n] = values.reindex(base.index)
        return out

    # ---- analyses -----------------------------------------------------------------------
    @cached_property
    def steps(self) -> pd.DataFrame:
        """One row per step (index ``step``, plus ``host``): ``duration_ms`` and one ``*_ms``
        column per step-time category.  ``source`` says where the steps came from; profiles
        without step markers get steps inferred from the repeated tf.function call."""
        from .analysis.steps import combine_steps

        return combine_steps(list(self.host_partials("steps").values()))

    @cached_property
    def op_stats(self) -> pd.DataFrame:
        """TensorFlow stats: one row per op on the host and on devices (``host_or_device``),
        occurrences, total and self time, self-time % and cumulative % per side (IDLE
        included; see :meth:`op_stats_table` to exclude it)."""
        return self.op_stats_table(include_idle=True)

    def op_stats_table(self, include_idle: bool = True) -> pd.DataFrame:
        """TensorFlow stats with or without the IDLE rows (percentages follow)."""
        from .analysis.op_stats import op_stats_table

        return op_stats_table(self, include_idle=include_idle)

    @cached_property
    def kernel_stats(self) -> pd.DataFrame:
        """GPU kernel stats: one row per kernel, launch configuration and op, with registers,
        shared memory, block and grid dims, occupancy, Tensor Core eligibility and use,
        occurrences and total/avg/min/max duration (us)."""
        from .analysis.kernel_stats import combine_kernels

        return combine_kernels(list(self.host_partials("kernels").values()))

    @cached_property
    def input_pipeline(self):
        """Input pipeline analysis: ``summary`` (verdict, shares), ``device_side`` (input wait
        per step), ``host_side`` (reading, preprocessing, enqueue) and ``input_ops``."""
        from .analysis.input_pipeline import input_pipeline_analysis

        return input_pipeline_analysis(self)

    @cached_property
    def tf_data(self):
        """tf.data bottleneck analysis: ``pipelines``, per-call iterator ``graph`` (total and
        self time, critical path, bottleneck), ``bottlenecks`` with suggestions, ``summary``."""
        from .analysis.tf_data import combine_tf_data

        return combine_tf_data(list(self.host_partials("tf_data").values()))

    @cached_property
    def pod(self) -> pd.DataFrame:
        """Pod view: each step's breakdown on every host, with the slowest host marked."""
        from .analysis.pod import pod_table

        return pod_table(self.steps)

    def scope_stats(self, min_bytes: int = 0, max_depth: int | None = None,
                    side: str = "Host") -> pd.DataFrame:
        """Time and memory aggregated along the name-scope hierarchy, as a tree table
        (``scope``, ``parent``, ``depth``); ``min_bytes`` drops scopes that allocate less."""
        from .analysis.scopes import scope_stats_table

        return scope_stats_table(self, min_bytes=min_bytes, max_depth=max_depth, side=side)

    def overview(self):
        """The overview page: step-time summary and breakdown, input-bound verdict, device
        compute precision, top 10 device and host ops, run environment, recommendations, and
        the reasons for anything missing."""
        from .analysis.overview import overview

        result = overview(self)
        result.recommendations = self.recommendations()
        return result

    @property
    def plot(self):
        """The profile's charts as plotly figures: ``prof.plot.step_time()``, ``memory()``,
        ``op_stats()``, ``kernels()``, ``input_pipeline()``, ``pod()``, ``roofline()``."""
        from .plot import ProfilePlots

        return ProfilePlots(self)

    # ---- XLA programs ---------------------------------------------------------------------
    @cached_property
    def _xla(self):
        from .analysis.hlo_stats import combine_xla

        return combine_xla(list(self.host_partials("xla_ops").values()),
                           list(self.host_partials("tf_kernels").values()))

    @property
    def device_peaks(self):
        """Peak FLOP/s and memory bandwidth used by the XLA tables (a ``DevicePeaks``): those
        set with :meth:`set_device_peaks`, else the first device plane's (GPU/TPU plane
        stats); empty for CPUs and unknown devices."""
        return getattr(self, "_user_peaks", None) or self._xla.peaks

    def set_device_peaks(self, peak_flops_per_s: float, memory_bw_bytes_per_s: float,
                         device: str = "user") -> None:
        """Set the device's peak FLOP/s and memory bandwidth (bytes/s) for ``hlo_stats``
        (bound-by), ``op_profile()`` and ``roofline``: for CPUs and devices whose planes do
        not carry them, or to override them."""
        from .analysis.device_peaks import DevicePeaks

        self._user_peaks = DevicePeaks(float(peak_flops_per_s), float(memory_bw_bytes_per_s),
                                       0.0, device, "set_device_peaks")
        for name in ("hlo_stats", "roofline"):
            self.__dict__.pop(name, None)

    @cached_property
    def hlo_stats(self) -> pd.DataFrame:
        """XLA programs: one row per HLO op (GPU kernels, XLA:CPU thunks): program, category,
        expression, framework op, occurrences, total/avg/self time, FLOPs and bytes, rates,
        arithmetic intensity, bound-by, source.  ``attrs["reasons"]`` lists what is missing
        and why (see analysis.hlo_stats)."""
        from .analysis.hlo_stats import hlo_stats_table

        return hlo_stats_table(self._xla, self.device_peaks)

    def op_profile(self, group_by: str = "program", include_idle: bool = True,
                   peak_flops_per_s: float | None = None,
                   memory_bw_bytes_per_s: float | None = None) -> pd.DataFrame:
        """XLA time as a tree (one row per node: ``node``, ``parent``, ``depth``, ``kind``) by
        program -> category -> op (``group_by="program"``) or category -> op
        (``"category"``), with FLOP and bandwidth utilisation against the device's peaks (or
        the peaks given here).  See analysis.op_profile."""
        from .analysis.op_profile import op_profile_table

        return op_profile_table(self._xla, self._peaks(peak_flops_per_s, memory_bw_bytes_per_s),
                                group_by=group_by, include_idle=include_idle)

    @cached_property
    def roofline(self) -> pd.DataFrame:
        """Per HLO op: arithmetic intensity and achieved FLOP/s against the device's roofline
        (``attrs["peaks"]``, ``attrs["ridge_point_flops_per_byte"]``); the first row is the
        whole program.  For other peaks see :meth:`roofline_for`."""
        from .analysis.roofline import roofline_table

        return roofline_table(self._xla, self.device_peaks)

    def roofline_for(self, peak_flops_per_s: float,
                     memory_bw_bytes_per_s: float) -> pd.DataFrame:
        """The roofline table against the given peak FLOP/s and memory bandwidth (bytes/s)."""
        from .analysis.roofline import roofline_table

        return roofline_table(self._xla, self._peaks(peak_flops_per_s, memory_bw_bytes_per_s))

    def _peaks(self, peak_flops_per_s, memory_bw_bytes_per_s):
        from .analysis.device_peaks import DevicePeaks

        if peak_flops_per_s is None and memory_bw_bytes_per_s is None:
            return self.device_peaks
        if peak_flops_per_s is None or memory_bw_bytes_per_s is None:
            raise ValueError("give both peak_flops_per_s and memory_bw_bytes_per_s")
        return DevicePeaks(float(peak_flops_per_s), float(memory_bw_bytes_per_s), 0.0, "user",
                           "argument")

    def recommendations(self) -> list:
        """Findings with evidence and a suggested fix (see analysis.recommendations)."""
        from .analysis.recommendations import recommendations

        return recommendations(self)

    def analyse(self, release: bool = True) -> "Profile":
        """Run every analysis now: each host's steps where the host lives (hosts in
        parallel), then every table (steps, TensorFlow and kernel stats, memory, input
        pipeline, tf.data, pod, name scopes, overview with recommendations).  With
        ``release`` the per-event arrays the hosts derived are dropped afterwards.  Returns
        the profile."""
        self._engine.run_steps(["steps", "host_ops", "device_ops", "kernels", "memory",
                                "tf_data"], self._shifts_ps)
        if release:
            self._engine.release()
        for table in ("steps", "op_stats", "kernel_stats", "memory_summary", "input_pipeline",
                      "tf_data", "pod"):
            getattr(self, table)
        self.scope_stats()
        self.overview()
        return self

    @cached_property
    def _memory(self):
        from .analysis.memory import combine_memory

        parts = self.host_partials("memory")
        return combine_memory(list(parts.values()),
                              [self._event_offsets[h] for h in parts])

    @property
    def memory_summary(self) -> pd.DataFrame:
        """One row per allocator: allocations, deallocations, capacity, lifetime peak, peak in
        the profile (time, step, stack, heap, free, fragmentation)."""
        return self._memory[0]

    @property
    def memory_timeline(self) -> pd.DataFrame:
        """One row per allocation/deallocation, by allocator and time, with what was asked
        and given, the op, step, region, data type, shape and memory in use after it."""
        return self._memory[1]

    @property
    def memory_breakdown(self) -> pd.DataFrame:
        """Allocations active at each allocator's peak, largest first (equal ones merged)."""
        return self._memory[2]

    # ---- planes and lines ---------------------------------------------------------------
    @cached_property
    def planes(self) -> pd.DataFrame:
        """One row per plane: host, plane, plane_id, lines, events, and its plane-level stats."""
        rows = [{"host": h, **p} for h in self.hosts for p in self._infos[h]["planes"]]
        return pd.DataFrame(rows, columns=["host", "plane", "plane_id", "lines", "events",
                                           "stats"])

    @cached_property
    def lines(self) -> pd.DataFrame:
        """One row per line (thread or stream): host, plane, line, line_id, display name,
        display id, start_us and events."""
        parts = []
        for h in self.hosts:
            lines = self._infos[h]["lines"]
            parts.append(pd.DataFrame({
                "host": h, "plane": lines.plane, "line": lines.line, "line_id": lines.line_id,
                "display_name": lines.display_name, "display_id": lines.display_id,
                "start_us": (lines.start_ps + self._shifts_ps[h]) / 1e6,
                "events": lines.events}))
        columns = ["host", "plane", "line", "line_id", "display_name", "display_id",
                   "start_us", "events"]
        return pd.concat(parts, ignore_index=True)[columns] if parts else \
            pd.DataFrame(columns=columns)

    # ---- display --------------------------------------------------------------------------
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
        """Write one self-contained offline HTML report of this profile (the whole dashboard,
        interactive, no network needed) to ``path``; returns the file's path."""
        from .report.html import write_report

        return write_report(self, path, title)

    def export_notebook(self, path, title: str | None = None):
        """Write a small report notebook (summary and dashboard, rendered offline) to
        ``path``; returns the path.  Same as ``tp.export_notebook(prof, path)``."""
        from .report.notebook import export_notebook

        return export_notebook(self, path, title)

    def to_chrome_trace(self, path, compress: bool | None = None):
        """Write every event (no cap) and the steps as Chrome Trace Event Format JSON, for
        chrome://tracing or ui.perfetto.dev; gzip when ``compress`` (None: when ``path`` ends
        with ``.gz``).  A directory gets ``trace.json(.gz)``.  Returns the file's path.
        See :mod:`tfprof_nb.export.chrome`."""
        from .export import write_chrome_trace

        return write_chrome_trace(self, path, compress=compress)

    def to_perfetto(self, path):
        """Write every event and the steps as a Perfetto protobuf trace (ui.perfetto.dev,
        trace_processor).  A directory gets ``trace.perfetto-trace``.  Returns the file's
        path.  See :mod:`tfprof_nb.export.perfetto`."""
        from .export import write_perfetto

        return write_perfetto(self, path)

    def summary(self) -> str:
        """A few lines describing the profile (hosts, planes, events, duration)."""
        lines = [f"Profile: {len(self.hosts)} host(s), {self.n_events:,} events, "
                 f"{self.duration_us / 1e3:,.1f} ms"]
        if self.start_time is not None:
            lines.append(f"  captured {self.start_time:%Y-%m-%d %H:%M:%S} UTC")
        for host in self.hosts:
            planes = ", ".join(f"{p['plane']} ({p['events']:,})"
                               for p in self._infos[host]["planes"])
            lines.append(f"  {host}: {planes}")
        for host, problem in self.load_errors.items():
            lines.append(f"  {host}: not loaded ({problem})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<tfprof_nb.Profile hosts={self.hosts!r} events={self.n_events}>"
