"""The :class:`Profile`: one profiling run, one decoded XSpace per host, as pandas tables."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property

import numpy as np
import pandas as pd

from ._tables import categorical_from_tables, stat_series
from .xspace import XSpaceData, read_xspace
from .xspace.files import find_profile_files, host_name_of

__all__ = ["Profile", "load"]


def load(path, *, parallel: bool = True) -> "Profile":
    """Load a profile: a logdir (newest run), a run directory (all hosts), one ``.xplane.pb``
    file, or a list of these.  Each host's file is decoded independently (in parallel threads:
    the decoder releases the GIL).
    """
    files = find_profile_files(path)
    hosts = [host_name_of(f) for f in files]
    dupes = {h for h in hosts if hosts.count(h) > 1}
    if dupes:  # same file name in different runs: keep them apart
        hosts = [f"{h} ({f.parent.name})" if h in dupes else h for h, f in zip(hosts, files)]
    if parallel and len(files) > 1:
        with ThreadPoolExecutor(max_workers=min(len(files), os.cpu_count() or 1)) as pool:
            spaces = list(pool.map(read_xspace, files))
    else:
        spaces = [read_xspace(f) for f in files]
    order = np.argsort(hosts, kind="stable")
    return Profile({hosts[i]: spaces[i] for i in order}, source=[str(f) for f in files])


class Profile:
    """A profiling run: one decoded XSpace per host.

    Tables are built lazily on first access and cached.  Times are relative to the profile
    start (the earliest host's start), in the unit their column name says.
    """

    def __init__(self, spaces: dict[str, XSpaceData], source: list[str] | None = None):
        if not spaces:
            raise ValueError("a Profile needs at least one host")
        self.spaces = dict(spaces)
        self.source = list(source or [])

    # ---- hosts and time -----------------------------------------------------------------
    @property
    def hosts(self) -> list[str]:
        """Host names, one per ``.xplane.pb`` file."""
        return list(self.spaces)

    @cached_property
    def aligned(self) -> bool:
        """Whether hosts share one time axis: true when every host's start is a wall-clock time
        (otherwise each host's times are relative to its own start)."""
        return all(s.origin_is_wall_clock() for s in self.spaces.values())

    def _host_shift_ps(self, space: XSpaceData) -> int:
        if not self.aligned:
            return 0
        origin = min(s.origin_ns() for s in self.spaces.values())
        return (space.origin_ns() - origin) * 1000

    @property
    def start_time(self) -> pd.Timestamp | None:
        """Wall-clock start of the profile (UTC), from the Task Environment plane."""
        starts = [s.profile_start_ns for s in self.spaces.values() if s.profile_start_ns]
        return pd.Timestamp(min(starts), unit="ns", tz="UTC") if starts else None

    @property
    def stop_time(self) -> pd.Timestamp | None:
        """Wall-clock end of the profile (UTC), from the Task Environment plane."""
        stops = [s.profile_stop_ns for s in self.spaces.values() if s.profile_stop_ns]
        return pd.Timestamp(max(stops), unit="ns", tz="UTC") if stops else None

    @property
    def duration_us(self) -> float:
        """Profile duration: stop minus start when known, else the span of the events."""
        if self.start_time is not None and self.stop_time is not None:
            return (self.stop_time - self.start_time).value / 1e3
        ev = self.events
        if ev.empty:
            return 0.0
        return float((ev.start_us + ev.duration_us).max() - ev.start_us.min())

    # ---- events ---------------------------------------------------------------------------
    @cached_property
    def _event_offsets(self) -> dict[str, int]:
        offsets, total = {}, 0
        for host, space in self.spaces.items():
            offsets[host] = total
            total += len(space.events)
        return offsets

    @cached_property
    def events(self) -> pd.DataFrame:
        """Every event of every host, one row each; the index is the global event id.

        Columns: host, plane, line, name (categoricals), start_us, duration_us (float, relative
        to the profile start), line_id, start_ps, duration_ps, num_occurrences (int64).
        """
        spaces = list(self.spaces.values())
        n = [len(s.events) for s in spaces]
        host_codes = np.repeat(np.arange(len(spaces), dtype=np.int32), n)
        plane = categorical_from_tables(
            [s.events.plane for s in spaces], [s.plane_names for s in spaces])
        line = categorical_from_tables(
            [s.events.line for s in spaces], [s.line_names for s in spaces])
        name = categorical_from_tables(
            [s.events.name_code for s in spaces], [s.events.names for s in spaces])
        start_ps = np.concatenate(
            [s.event_start_ps() + self._host_shift_ps(s) for s in spaces]) if spaces else []
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
        for host, space in self.spaces.items():
            st = space.stats
            try:
                code = st.names.index(name)
            except ValueError:
                continue
            rows = np.flatnonzero((st.name_code == code) & (st.owner_kind == 0))
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
        from .analysis.steps import steps_table

        return steps_table(self)

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
        from .analysis.kernel_stats import kernel_stats_table

        return kernel_stats_table(self)

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
        from .analysis.tf_data import tf_data_analysis

        return tf_data_analysis(self)

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

    def recommendations(self) -> list:
        """Findings with evidence and a suggested fix (see analysis.recommendations)."""
        from .analysis.recommendations import recommendations

        return recommendations(self)

    @cached_property
    def _memory(self):
        from .analysis.memory import memory_tables

        return memory_tables(self)

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
        rows = []
        for host, space in self.spaces.items():
            n_events = np.bincount(space.events.plane, minlength=len(space.plane_names))
            n_lines = np.bincount(space.line_plane, minlength=len(space.plane_names))
            for i, pname in enumerate(space.plane_names):
                rows.append({"host": host, "plane": pname, "plane_id": int(space.plane_ids[i]),
                             "lines": int(n_lines[i]), "events": int(n_events[i]),
                             "stats": space.plane_stats(i)})
        return pd.DataFrame(rows, columns=["host", "plane", "plane_id", "lines", "events",
                                           "stats"])

    @cached_property
    def lines(self) -> pd.DataFrame:
        """One row per line (thread or stream): host, plane, line, line_id, display name,
        display id, start_us and events."""
        rows = []
        for host, space in self.spaces.items():
            n_events = np.bincount(space.events.line, minlength=len(space.line_names))
            start = (space.line_start_ps() + self._host_shift_ps(space)) / 1e6
            for i, lname in enumerate(space.line_names):
                rows.append({"host": host, "plane": space.plane_names[space.line_plane[i]],
                             "line": lname, "line_id": int(space.line_ids[i]),
                             "display_name": space.line_display_names[i],
                             "display_id": int(space.line_display_ids[i]),
                             "start_us": float(start[i]), "events": int(n_events[i])})
        return pd.DataFrame(rows, columns=["host", "plane", "line", "line_id", "display_name",
                                           "display_id", "start_us", "events"])

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

    def summary(self) -> str:
        """A few lines describing the profile (hosts, planes, events, duration)."""
        n_events = sum(len(s.events) for s in self.spaces.values())
        lines = [f"Profile: {len(self.hosts)} host(s), {n_events:,} events, "
                 f"{self.duration_us / 1e3:,.1f} ms"]
        if self.start_time is not None:
            lines.append(f"  captured {self.start_time:%Y-%m-%d %H:%M:%S} UTC")
        for host, space in self.spaces.items():
            planes = ", ".join(f"{p} ({c:,})" for p, c in zip(
                space.plane_names, np.bincount(space.events.plane,
                                               minlength=len(space.plane_names))))
            lines.append(f"  {host}: {planes}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        n_events = sum(len(s.events) for s in self.spaces.values())
        return f"<tfprof_nb.Profile hosts={self.hosts!r} events={n_events}>"
