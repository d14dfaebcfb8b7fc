""":class:`Profile`, the facade over one profiling run's analyses (``tp.load`` makes one).

Each host's file is decoded and analysed on its own (threads here, or Dask workers with
``tp.load(path, client=client)``); every table is an analysis unit (``tfprof_nb.analysis``)
computed on first use and cached by :class:`~.analysis.runtime.results.Results`.  The data
properties are declared in :mod:`tfprof_nb.table_catalogue` (a lookup of a result by name,
installed below); the methods build on them.  What is no analysis is cached in the same
``Results`` (``events``, from the decoded hosts; the SQL session).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from . import events as _events
from ._outputs import ProfileOutputs
from ._profile_deprecated import DeprecatedPeaks, op_profile_with_peaks
from .analysis.runtime.results import HostSpaces, Results
from .analysis.xla.device_peaks import user_peaks
from .table_catalogue import profile_entries, queried_entries

__all__ = ["Profile"]


class Profile(ProfileOutputs, DeprecatedPeaks):
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

    def _events(self) -> pd.DataFrame:
        return self._results.cached("events", lambda: _events.events_table(
            self.spaces, self.result("shifts")))

    events = property(_events, doc=queried_entries()["events"].description)

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

    # ---- the profiler's tools (their tables: the catalogue's properties) --------------------
    def op_stats_table(self, include_idle: bool = True) -> pd.DataFrame:
        """TensorFlow stats with or without the IDLE rows (percentages follow)."""
        return self.result("op_stats" if include_idle else "op_stats_without_idle")

    def scope_stats(self, min_bytes: int = 0, max_depth: int | None = None,
                    side: str = "Host") -> pd.DataFrame:
        """Time and memory along the name-scope hierarchy (see analysis.tf.scopes)."""
        from .analysis.tf.scopes import scope_stats_table

        return scope_stats_table(self.op_stats_table(False), self.memory_timeline,
                                 min_bytes=min_bytes, max_depth=max_depth, side=side)

    def overview(self):
        """The overview page: step time, input-bound verdict, precision, top ops, run
        environment, recommendations, what bounds the steps, and reasons for what is missing."""
        from .analysis.findings.overview import with_bound_by
        return with_bound_by(self.result("overview"), self._results)

    def recommendations(self) -> list:
        """Findings with evidence and a suggested fix (see analysis.findings.recommendations)."""
        return self.result("recommendations")

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

    def op_profile(self, group_by: str = "program", include_idle: bool = True,
                   peak_flops_per_s: float | None = None,
                   memory_bw_bytes_per_s: float | None = None) -> pd.DataFrame:
        """XLA time as a tree (program -> category -> op, or category -> op) with utilisation
        against the device's peaks (``device_peaks``; see analysis.xla.op_profile).  The
        peak arguments are deprecated (they go in the next release): ``set_device_peaks``."""
        from .analysis.xla.op_profile import op_profile_for

        if peak_flops_per_s is not None or memory_bw_bytes_per_s is not None:
            return op_profile_with_peaks(self, peak_flops_per_s, memory_bw_bytes_per_s,
                                         group_by, include_idle)
        return op_profile_for(self.result("xla"), self.device_peaks, self.hlo_stats,
                              group_by=group_by, include_idle=include_idle)

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


for _name, _entry in profile_entries().items():  # the catalogue's tables, bundles and facts
    setattr(Profile, _name, _entry.property())
