"""SQL over a profile with DuckDB (``prof.sql("SELECT ...")``; ``pip install "tfprof-nb[sql]"``).

Tables (each registered when a query first names it):

* ``events``: every event of every host: ``event`` (global id, as ``prof.events``), ``host``,
  ``plane``, ``line``, ``name``, ``start_us``, ``duration_us`` (profile axis), ``start_ps``,
  ``duration_ps``, ``line_id``.  DuckDB scans each host's decoded columns in place (no copy:
  names are an enum over the host's name table, plane and line come from a small lines table);
* ``stats``: every argument of every event, one row each: its own stats, then its event
  metadata's, as the trace viewer's details and the exports show them
  (``analysis.trace.event_arguments``): ``host``, ``event``, ``name``, ``kind`` (1
  double, 2 uint64, 3 int64, 4 str, 5 bytes, 6 ref), ``int_value``, ``double_value``,
  ``str_value`` (the one that fits the kind; uint64 values above 2**63-1 show as negative),
  ``origin`` (``own`` or ``metadata``), ``key`` and ``text`` (as the details and exports
  write them);
* the tool tables: every table of :mod:`tfprof_nb.table_catalogue` (``steps``, ``op_stats``,
  ..., the ``launch_latency`` bundle's tables, ``program_memory``: one row per XLA program);
  ``tfprof table --list`` names them with what each holds.

A profile loaded on Dask keeps its events on the workers: ``events`` and ``stats`` are refused
there (with a message saying so); the tool tables work.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .analysis.trace.event_arguments import (ORIGINS, OWN, TextTable, stat_row_keys,
                                             value_text)
from .table_catalogue import queried_entries

__all__ = ["SqlSession", "TOOL_TABLES", "EVENT_TABLES"]

_QUERIED = queried_entries()
EVENT_TABLES = tuple(n for n, e in _QUERIED.items() if e.kind == "events")
# {name: function(results) -> the table's DataFrame}, in the catalogue's order
TOOL_TABLES = {n: e.frame for n, e in _QUERIED.items() if e.kind != "events"}


def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise ImportError('prof.sql needs DuckDB: pip install "tfprof-nb[sql]" '
                          "(or pip install duckdb)") from None
    return duckdb


def _scalar_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its index name and without columns DuckDB cannot hold (dicts, lists,
    bytes, frames in object columns)."""
    drop = []
    for col in df.columns:
        if df[col].dtype == object:
            sample = df[col].dropna()
            if len(sample) and isinstance(sample.iloc[0], (dict, list, tuple, bytes,
                                                           pd.DataFrame)):
                drop.append(col)
    return df.drop(columns=drop) if drop else df


class SqlSession:
    """One DuckDB connection over a profile's hosts (``spaces``: {host: XSpaceData}) and
    analysis ``results``; tables are registered when a query first names them."""

    def __init__(self, results, spaces):
        self._results = results
        self._spaces = spaces
        self._con = None
        self._done: set[str] = set()
        self._frames: list = []  # registered frames stay alive with the session

    @property
    def remote(self) -> bool:
        """Whether hosts live on Dask workers (events stay there)."""
        return self._results.hosts.remote

    def connection(self):
        """The DuckDB connection (created on first use)."""
        if self._con is None:
            self._con = _duckdb().connect()
            self._con.execute("SET enable_progress_bar = false")
        return self._con

    def query(self, text: str) -> pd.DataFrame:
        """Run ``text`` and return its result as a DataFrame."""
        duckdb = _duckdb()
        names = {n.lower() for n in duckdb.get_table_names(text)}
        for name in sorted(names):
            self.ensure(name)
        return self.connection().sql(text).df() if names or text.strip() else pd.DataFrame()

    def ensure(self, name: str) -> None:
        """Register table ``name`` if it is one of the profile's and not registered yet."""
        if name in self._done:
            return
        if name in EVENT_TABLES:
            if self.remote:
                raise ValueError(
                    f"table {name!r}: this profile was loaded on Dask (tp.load(..., "
                    "client=...)), so its events stay on the workers and are not queried "
                    "here; the tool tables work (" + ", ".join(sorted(TOOL_TABLES)) + ")")
            self._register_events() if name == "events" else self._register_stats()
        elif name in TOOL_TABLES:
            frame = _scalar_columns(TOOL_TABLES[name](self._results))
            self._register(name, frame)
        else:
            return
        self._done.add(name)

    def _register(self, name: str, frame: pd.DataFrame) -> None:
        self._frames.append(frame)
        self.connection().register(name, frame)

    def _hosts(self) -> list[str]:
        return list(self._spaces)

    def _register_lines(self) -> None:
        if "_lines" in self._done:
            return
        spaces = [self._spaces[h] for h in self._hosts()]
        n = [len(sp.line_names) for sp in spaces]
        planes = [np.asarray(sp.plane_names, dtype=object)[sp.line_plane] for sp in spaces]
        self._register("_lines", pd.DataFrame({
            "host_index": np.repeat(np.arange(len(spaces), dtype=np.int32), n),
            "line_index": np.concatenate([np.arange(k, dtype=np.int32) for k in n]),
            "host": np.repeat(np.asarray(self._hosts(), dtype=object), n),
            "plane": np.concatenate(planes).astype(object),
            "line": np.concatenate([np.asarray(sp.line_names, dtype=object)
                                    for sp in spaces]),
            "line_id": np.concatenate([sp.line_ids for sp in spaces])}))
        self._done.add("_lines")

    def register_events(self) -> None:
        """Register the ``events`` view now (what a query naming it does first)."""
        self.ensure("events")

    def _register_events(self) -> None:
        self._register_lines()
        shifts, offsets = self._results["shifts"], self._results["event_offsets"]
        selects = []
        for i, host in enumerate(self._hosts()):
            ev = self._spaces[host].events
            frame = pd.DataFrame({
                "row": np.arange(len(ev), dtype=np.int32), "line": ev.line,
                "name": pd.Categorical.from_codes(_signed(ev.name_code), validate=False,
                                                  categories=pd.Index(_unique(ev.names))),
                "start_ps": ev.start_ps, "duration_ps": ev.duration_ps}, copy=False)
            self._register(f"_events_{i}", frame)
            shift, offset = int(shifts[host]), int(offsets[host])
            selects.append(
                f"SELECT {offset} + e.row AS event, l.host, l.plane, l.line, "
                f"CAST(e.name AS VARCHAR) AS name, (e.start_ps + {shift}) / 1e6 AS start_us, "
                f"e.duration_ps / 1e6 AS duration_us, e.start_ps + {shift} AS start_ps, "
                f"e.duration_ps, l.line_id FROM _events_{i} e JOIN _lines l "
                f"ON l.host_index = {i} AND l.line_index = e.line")
        self.connection().execute("CREATE OR REPLACE VIEW events AS "
                                  + " UNION ALL ".join(selects))

    def _register_stats(self) -> None:
        self._register_lines()
        offsets = self._results["event_offsets"]
        selects = []
        for i, host in enumerate(self._hosts()):
            space = self._spaces[host]
            self._register(f"_stats_{i}", _stats_frame(space.stats))
            self._register(f"_metadata_of_{i}", pd.DataFrame({
                "row": np.arange(len(space.events), dtype=np.int32),
                "metadata_row": space.events.metadata_row}, copy=False))
            selects += [_stats_select(i, int(offsets[host]), origin) for origin in ORIGINS]
        self.connection().execute("CREATE OR REPLACE VIEW stats AS "
                                  + " UNION ALL ".join(selects))


def _stats_frame(st) -> pd.DataFrame:
    """One host's stat rows for DuckDB: owner, name, kind and value, and each row's key as an
    event argument and the text of its string, bytes or ref value (numbers: made in SQL)."""
    value_code = np.where(st.kind >= 4, st.raw_value, -1).astype(np.int32)
    arg_keys = TextTable()
    key = stat_row_keys(st, arg_keys)

    def codes(c, items):
        return pd.Categorical.from_codes(_signed(c), validate=False,
                                         categories=pd.Index(_unique(items) or [""]))
    def values(text_of):  # a text per value, one category per distinct text
        table = TextTable()
        per = np.array([-1 if t is None else table.code(t) for t in map(text_of, st.values)]
                       + [-1], np.int32)
        return pd.Categorical.from_codes(per[value_code], validate=False,
                                         categories=pd.Index(table.items or [""]))
    return pd.DataFrame({
        "owner_kind": st.owner_kind, "owner": st.owner, "name": codes(st.name_code, st.names),
        "kind": st.kind, "int_value": st.raw_value,
        "double_value": st.raw_value.view(np.float64),
        "str_value": values(lambda v: v if isinstance(v, str) else None),
        "value_text": values(value_text), "key": codes(key, arg_keys.items)}, copy=False)


# an argument's text (analysis.trace.event_arguments.value_text), numbers written by DuckDB as
# Python does (a double's shortest round trip; NaN reads as NULL), a uint64 past 2**63 - 1
# from its int64 bits
_TEXT = ("CASE s.kind WHEN 1 THEN coalesce(CAST(s.double_value AS VARCHAR), 'nan') "
         "WHEN 2 THEN CAST(CASE WHEN s.int_value < 0 THEN CAST(s.int_value AS HUGEINT) "
         "+ 18446744073709551616 ELSE s.int_value END AS VARCHAR) "
         "WHEN 3 THEN CAST(s.int_value AS VARCHAR) WHEN 0 THEN '' "
         "ELSE CAST(s.value_text AS VARCHAR) END AS text")


def _stats_select(i: int, offset: int, origin: str) -> str:
    """The SELECT of host ``i``'s events' own stats, or their event metadata's."""
    values = ("CAST(s.name AS VARCHAR) AS name, s.kind, "
              "CASE WHEN s.kind IN (2, 3) THEN s.int_value END AS int_value, "
              "CASE WHEN s.kind = 1 THEN s.double_value END AS double_value, "
              f"CAST(s.str_value AS VARCHAR) AS str_value, '{origin}' AS origin, "
              f"CAST(s.key AS VARCHAR) AS key, {_TEXT}")
    host = f"JOIN (SELECT DISTINCT host FROM _lines WHERE host_index = {i}) h ON TRUE"
    if origin == ORIGINS[OWN]:
        return (f"SELECT h.host, {offset} + s.owner AS event, {values} FROM _stats_{i} s "
                f"{host} WHERE s.owner_kind = 0")
    return (f"SELECT h.host, {offset} + e.row AS event, {values} FROM _metadata_of_{i} e "
            f"JOIN _stats_{i} s ON s.owner_kind = 1 AND s.owner = e.metadata_row {host}")


def _signed(codes: np.ndarray) -> np.ndarray:
    """Codes as a signed integer array: a view when they already are, or when unsigned codes
    all fit the signed type of their size (a categorical's codes are signed)."""
    if codes.dtype.kind == "i":
        return codes
    signed = np.dtype(f"i{codes.dtype.itemsize}")
    if not len(codes) or int(codes.max()) <= np.iinfo(signed).max:
        return codes.view(signed)
    return codes.astype(np.int64)


def _unique(names: list) -> list:
    """Names made distinct (a categorical needs distinct, non-null categories): a repeated
    name, or a missing one, gets its code appended."""
    seen: set = set()
    out = []
    for code, name in enumerate(names):
        out.append(name if name is not None and name not in seen else f"{name} #{code}")
        seen.add(name)
    return out
