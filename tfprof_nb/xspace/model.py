"""Column containers for one decoded XSpace (one host's ``.xplane.pb``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._native.kernels import rows_where, stat_name_counts
from .._native.layout import COLUMNS, TIME_LIMIT_PS
from ..constants import TASK_ENVIRONMENT_PLANE

_EX = COLUMNS["EX"]  # event extras: row, what (0 num_occurrences, 1 metadata id), value

__all__ = ["EventTable", "StatTable", "XSpaceData", "TASK_ENVIRONMENT_PLANE"]

# Line timestamps at or above this many ns since the epoch (1973) are absolute wall times;
# smaller ones were normalised to the profile start by the profiler.
_ABSOLUTE_NS = 10**17


@dataclass
class EventTable:
    """All XEvents of one XSpace, in file order (plane, line, event), in narrow columns.

    ``metadata_row`` is the row of the event's metadata in ``XSpaceData.event_metadata_*``
    (-1 when the plane has no metadata of the event's id); ``name_code`` indexes ``names``.
    The rare per-event extras (``num_occurrences`` of aggregated events, the metadata id of
    events whose metadata is missing) are kept sparse and expanded by the properties.
    """

    line: np.ndarray  # int32 line index (into XSpaceData.line_*)
    metadata_row: np.ndarray  # int8, int16 or int32 (the narrowest that fits)
    name_code: np.ndarray  # uint8, uint16 or int32 code into ``names`` (the same)
    start_ps: np.ndarray  # int64 start relative to the space's origin (see XSpaceData)
    duration_ps: np.ndarray  # int64
    names: list[str]  # distinct event names
    line_plane: np.ndarray = field(repr=False)  # int32 plane of each line
    metadata_key: np.ndarray = field(repr=False)  # int64 map key of each metadata row
    extras: np.ndarray = field(repr=False)  # int64 (n, 3): event row, what, value
    line_start_ps: np.ndarray = field(repr=False)  # int64 start of each line (same origin)
    # (earliest start, latest end) in ps, found by the decoder; None: not known yet
    span_ps: tuple | None = field(default=None, repr=False, compare=False)
    # events of each name code and of each line, counted by the decoder (None: not known)
    name_counts: np.ndarray | None = field(default=None, repr=False, compare=False)
    line_counts: np.ndarray | None = field(default=None, repr=False, compare=False)
    # whether the rows are sorted by (line, start, longest first), found by the decoder as it
    # made the starts (None: not known)
    in_nesting_order: bool | None = field(default=None, repr=False, compare=False)

    @property
    def offset_ps(self) -> np.ndarray:
        """int64 offset of every event from its line's timestamp, as stored in the file."""
        return self.start_ps - self.line_start_ps[self.line]

    def __len__(self) -> int:
        return len(self.line)

    @property
    def plane(self) -> np.ndarray:
        """int32 plane index of every event."""
        return self.line_plane[self.line]

    @property
    def num_occurrences(self) -> np.ndarray:
        """int64 occurrences of aggregated events (0 for timed events)."""
        out = np.zeros(len(self), dtype=np.int64)
        ex = self.extras[self.extras[:, _EX.what] == 0]
        out[ex[:, _EX.row]] = ex[:, _EX.value]
        return out

    @property
    def metadata_id(self) -> np.ndarray:
        """int64 metadata id of every event, as stored in the file."""
        known = self.metadata_row >= 0
        out = np.where(known, self.metadata_key[np.where(known, self.metadata_row, 0)], 0) \
            if len(self.metadata_key) else np.zeros(len(self), dtype=np.int64)
        ex = self.extras[self.extras[:, _EX.what] == 1]
        out[ex[:, _EX.row]] = ex[:, _EX.value]
        return out


@dataclass
class StatTable:
    """All XStats of one XSpace: of events, of event metadata and of planes.

    ``owner`` is an event row, an event-metadata row or a plane index depending on
    ``owner_kind`` (0, 1, 2).  ``kind`` is the value's oneof case: 1 double, 2 uint64, 3 int64,
    4 str, 5 bytes, 6 ref (0: no value).  ``raw_value`` holds the 64 bits of numeric values (a
    double's bit pattern for kind 1) and, for kinds 4, 5 and 6, the code of the value in
    ``values`` (refs resolved to the referenced stat-metadata name).
    """

    owner_kind: np.ndarray  # int8
    owner: np.ndarray  # int32
    name_code: np.ndarray  # uint8, uint16 or int32 code into ``names``
    kind: np.ndarray  # int8
    raw_value: np.ndarray  # int64
    names: list[str]
    values: list
    # number of event stats (owner kind 0) of each name code; found when first needed if None
    event_counts: np.ndarray | None = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.kind)

    def counts_by_name(self) -> np.ndarray:
        """int64 number of event stats of each name code (an upper bound on the events
        carrying it)."""
        if self.event_counts is None:
            self.event_counts = stat_name_counts(self.name_code, self.owner_kind,
                                                 len(self.names))
        return self.event_counts

    def owned_by(self, owner_kind: int) -> np.ndarray:
        """int32 rows of the stats of event metadata (1) or planes (2), increasing; found
        once (they are few), without a pass over every stat per call."""
        rows = self._not_events()
        return rows[self.owner_kind[rows] == owner_kind]

    def _not_events(self) -> np.ndarray:
        if "not_events" not in self._cache:
            self._cache["not_events"] = rows_where(self.owner_kind, 0, equal=False)
        return self._cache["not_events"]

    def other_owner_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) int64 of the maximal runs of rows of stats not owned by events
        (event metadata's and planes'), increasing; found once.  Event stats are in event
        order around them."""
        if "runs" not in self._cache:
            rows = self._not_events().astype(np.int64)
            breaks = np.flatnonzero(np.diff(rows) != 1) + 1
            starts = rows[np.concatenate([[0], breaks])] if len(rows) else rows
            ends = rows[np.concatenate([breaks - 1, [len(rows) - 1]])] + 1 if len(rows) \
                else rows
            self._cache["runs"] = (np.ascontiguousarray(starts), np.ascontiguousarray(ends))
        return self._cache["runs"]

    def rows_of_event(self, event: int) -> np.ndarray:
        """int64 rows of the stats of event row ``event``, increasing, found by bisection:
        event stats are in event order, each event's together, with runs of other owners'
        stats between them (:meth:`other_owner_runs`), so no pass over every stat."""
        owner, n = self.owner, len(self.owner)
        starts, ends = self.other_owner_runs()

        def event_row_from(i: int) -> int:  # the first event stat at or after row i (n: none)
            k = int(np.searchsorted(starts, i, side="right")) - 1
            return int(ends[k]) if k >= 0 and i < ends[k] else i

        lo, hi = 0, n  # event stats before lo own earlier events; from hi on, later or equal
        while lo < hi:
            mid = (lo + hi) // 2
            at = event_row_from(mid)
            if at < hi and owner[at] < event:
                lo = at + 1
            else:
                hi = mid
        first = event_row_from(lo)
        last = first
        while last < n and self.owner_kind[last] == 0 and owner[last] == event:
            last += 1
        return np.arange(first, last, dtype=np.int64)

    @property
    def value_code(self) -> np.ndarray:
        """Code into ``values`` of kinds 4, 5 and 6; -1 for numeric kinds (computed)."""
        text = self.kind >= 4
        return np.where(text, self.raw_value, -1)

    @property
    def double_value(self) -> np.ndarray:
        """``raw_value`` as float64 (meaningful where kind == 1)."""
        return self.raw_value.view(np.float64)

    @property
    def uint64_value(self) -> np.ndarray:
        """``raw_value`` as uint64 (meaningful where kind == 2)."""
        return self.raw_value.view(np.uint64)

    def rows_named(self, name: str, owner_kind: int = 0) -> np.ndarray:
        """Rows of the stat ``name`` owned by ``owner_kind`` (0: events), in row order."""
        try:
            code = self.names.index(name)
        except ValueError:
            return np.empty(0, dtype=np.int64)
        return np.flatnonzero((self.name_code == code) & (self.owner_kind == owner_kind))


@dataclass
class XSpaceData:
    """One decoded XSpace: planes, lines, events, stats and metadata as numpy columns."""

    path: str | None
    n_bytes: int
    hostnames: list[str]
    errors: list[str]
    warnings: list[str]
    plane_ids: np.ndarray
    plane_names: list[str]
    line_plane: np.ndarray
    line_ids: np.ndarray
    line_display_ids: np.ndarray
    line_names: list[str]
    line_display_names: list[str]
    line_timestamp_ns: np.ndarray
    line_duration_ps: np.ndarray
    event_metadata_plane: np.ndarray
    event_metadata_key: np.ndarray
    event_metadata_id: np.ndarray
    event_metadata_names: list[str]
    event_metadata_display_names: list[str]
    event_metadata_bytes: list[bytes]
    event_metadata_children: np.ndarray  # (n, 2): event-metadata row, child id
    stat_metadata_plane: np.ndarray
    stat_metadata_key: np.ndarray
    stat_metadata_id: np.ndarray
    stat_metadata_names: list[str]
    stat_metadata_descriptions: list[str]
    events: EventTable
    stats: StatTable
    _cache: dict = field(default_factory=dict, repr=False)
    # where it was read from (a local path or a RemoteFile; None for bytes): files written
    # beside it, such as the hardware sampler's, are found from here
    read_from: object = field(default=None, repr=False, compare=False)
    # each line's events in the file, whatever a selecting decode kept (None: not known), and
    # from a selecting decode (see selection.py) their earliest start and latest end, ps
    # relative to the line's timestamp ((n, 2); None: not read)
    line_file_events: np.ndarray | None = field(default=None, repr=False, compare=False)
    line_file_span_ps: np.ndarray | None = field(default=None, repr=False, compare=False)
    # the Selection (selection.py) a part of a host was decoded with (None: the whole host)
    selection: object = field(default=None, repr=False, compare=False)

    # ---- planes -------------------------------------------------------------------------
    def plane_index(self, name: str) -> int | None:
        """Index of the first plane called ``name``, or None."""
        try:
            return self.plane_names.index(name)
        except ValueError:
            return None

    def plane_stats(self, plane: int) -> dict[str, object]:
        """Plane-level stats of plane ``plane`` as {name: value} (a name given twice keeps
        its last value).  Made per plane on first use: a plane can hold a million stats
        (JAX's ``/host:__ScopeRangeCallStack__``, all under one empty name)."""
        cache = self._cache.setdefault("plane_stats", {})
        if plane not in cache:
            st = self.stats
            if "plane_rows" not in self._cache:
                rows = st.owned_by(2)
                self._cache["plane_rows"] = (rows, st.owner[rows])
            rows, owners = self._cache["plane_rows"]
            mine = rows[owners == plane]
            _, last = np.unique(st.name_code[mine][::-1], return_index=True)
            keep = mine[np.sort(len(mine) - 1 - last)]
            cache[plane] = {st.names[st.name_code[r]]: stat_value(st, r)
                            for r in keep.tolist()}
        return dict(cache[plane])

    # ---- time ---------------------------------------------------------------------------
    @property
    def profile_start_ns(self) -> int | None:
        """Wall-clock start of the profile (ns since the epoch) from the Task Environment."""
        return self._task_env_time("profile_start_time")

    @property
    def profile_stop_ns(self) -> int | None:
        """Wall-clock end of the profile (ns since the epoch) from the Task Environment."""
        return self._task_env_time("profile_stop_time")

    def _task_env_time(self, name: str) -> int | None:
        plane = self.plane_index(TASK_ENVIRONMENT_PLANE)
        if plane is None:
            return None
        value = self.plane_stats(plane).get(name)
        # (a uint64 from the file: past 2^63 - 1 ns it is no date, and no int64 holds it)
        ok = isinstance(value, (int, np.integer)) and 0 < value < 2**63
        return int(value) if ok else None

    def line_start_ps(self) -> np.ndarray:
        """Start of every line in ps relative to :meth:`origin_ns` (int64).  A line more than
        ``TIME_LIMIT_PS`` (2^61 ps, 26.7 days) from the origin, which only corrupt times give,
        starts at +-(``TIME_LIMIT_PS`` + 1) (never a wrapped number): the decoder refuses
        a file with an event there."""
        ts = self.line_timestamp_ns
        origin = self.origin_ns()
        if not self._timestamps_absolute():
            start = self.profile_start_ns
            origin = 0 if start is None else origin - start
        # ts - origin exactly where it is in range (checked in floats first: both are int64,
        # the origin a line's timestamp or a Task Environment time below 2^63; their
        # difference may not be)
        limit_ns = TIME_LIMIT_PS // 1000
        offset = ts.astype(np.float64) - float(origin)
        near = np.abs(offset) < float(limit_ns)
        rel = np.where(near, ts - np.int64(origin), 0)
        if near.all():
            return rel * 1000
        far = np.where(offset > 0, TIME_LIMIT_PS + 1, -TIME_LIMIT_PS - 1)
        return np.where(near & (np.abs(rel) <= limit_ns), rel * 1000, far).astype(np.int64)

    def origin_ns(self) -> int:
        """The time zero of this host's relative times, ns since the epoch when known.

        The profile start from the Task Environment plane when present; else the first line
        timestamp for absolute timestamps; else 0 (times stay relative to the profiler's own
        zero, which for normalised files is the profile start).
        """
        if "origin" not in self._cache:
            start = self.profile_start_ns
            if start is not None:
                origin = start
            elif self._timestamps_absolute():
                # (the lines with events in the file: the same origin whatever a selecting
                # decode kept)
                counts = self.line_file_events if self.line_file_events is not None else \
                    np.bincount(self.events.line, minlength=len(self.line_timestamp_ns))
                lines_used = counts > 0
                used = self.line_timestamp_ns[lines_used] if lines_used.any() else \
                    self.line_timestamp_ns
                origin = int(used.min()) if len(used) else 0
            else:
                origin = 0
            self._cache["origin"] = int(origin)
        return self._cache["origin"]

    def file_span_ps(self) -> tuple[int, int] | None:
        """(earliest start, latest end) of every event in the file, ps relative to
        :meth:`origin_ns`, as a selecting decode read them (None: not read, or no event)."""
        counts, span = self.line_file_events, self.line_file_span_ps
        if counts is None or span is None or not (counts > 0).any():
            return None
        used = counts > 0
        starts = self.line_start_ps()[used]
        return int((starts + span[used, 0]).min()), int((starts + span[used, 1]).max())

    def origin_is_wall_clock(self) -> bool:
        """Whether :meth:`origin_ns` is a wall-clock time (so hosts can be aligned)."""
        return self.profile_start_ns is not None or self._timestamps_absolute()

    def file_origin_ns(self) -> int:
        """Where this host's relative times start in the file's own timestamps (ns): a time
        relative to :meth:`origin_ns` plus this is the time a reader of the raw file (XProf)
        sees.  :meth:`origin_ns` where the file's timestamps are absolute; 0 where the profiler
        normalised them to the profile start (TensorFlow's and JAX's files)."""
        return self.origin_ns() if self._timestamps_absolute() else 0

    def _timestamps_absolute(self) -> bool:
        ts = self.line_timestamp_ns
        return bool(len(ts)) and int(ts.max()) >= _ABSOLUTE_NS

    def event_start_ps(self) -> np.ndarray:
        """Start of every event in ps relative to :meth:`origin_ns` (int64; no copy)."""
        return self.events.start_ps


def stat_value(st: StatTable, row: int):
    """The Python value of stat row ``row`` (int, float, str or bytes; None if unset)."""
    kind = int(st.kind[row])
    if kind == 1:
        return float(st.double_value[row])
    if kind == 2:
        return int(st.uint64_value[row])
    if kind == 3:
        return int(st.raw_value[row])
    if kind in (4, 5, 6):
        return st.values[st.raw_value[row]]
    return None
