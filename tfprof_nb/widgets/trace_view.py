"""Trace timeline widget: every event of a profile, zoomable, on a canvas."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import traitlets

from .._native import kernels
from ..analysis.trace.display_names import display_names
from ..offline.columns import encode_columns
from ..offline.details import detail_rows
from ._view import View, ViewState
from .timeline_area import area_summary
from .hardware_tables import counters_of
from .hlo_graph_view import graph_answer
from .timeline_critical import critical_answer, offline_paths
from .timeline_counters import COUNTERS_LINE, counter_lines, counter_tables, counter_tables_empty
from .timeline_find import occurrences
from .timeline_links import LINK_KINDS, TimelineLinks
from .timeline_lod import (OVERVIEW_PX, OVERVIEW_STATE_BUDGET, STATE_BUDGET, Tile, TileTrait,
                           TimelineIndex)
from .timeline_search import SearchFacets, find_rows, parse_query
from .timeline_step_labels import relabel_step_markers, step_marker_labels
from .traits import RecordTrait, record_wire

# packed bytes per event of an offline copy, its details included (see offline.details: texts
# coded, each event's start, duration and id as numbers): a 1.16 M-event CPU capture packs to
# 17.7 bytes per event whole and its overview-plus-detail copies to 23 to 26 per detailed
# event (budgets of 20 to 50 % of the whole); with those three numbers as text it took 28.8
# whole and 36 per detailed event
OFFLINE_EVENT_BYTES = 28

__all__ = ["TimelineSource", "TraceTimeline", "TraceView", "first_state", "timeline_index"]


_TRACKS = {"id": np.int32, "section": object, "host": object, "plane": object, "name": object,
           "depths": np.int32, "events": np.int64}
_SEGMENTS = {"track": np.int32, "depth": np.int32, "lo": np.int64, "hi": np.int64}
_STEPS = {"name": object, "start": np.float64, "end": np.float64, "host": object,
          "step_name": object}


def _empty(columns: dict) -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series([], dtype=d) for k, d in columns.items()})


def _empty_meta() -> dict:
    """The timeline's tables (``tracks``, ``segments``, ``steps``: DataFrames, sent as typed
    tables), names, notes, time range and level of detail, for a profile without events."""
    return {"names": [], "long_names": {}, "tracks": _empty(_TRACKS), "segments": _empty(_SEGMENTS),
            "steps": _empty(_STEPS), "notes": [], "t0": 0.0, "t1": 1.0,
            "lod": {"mode": "full", "events": 0}}


def _step_table(prof) -> tuple[pd.DataFrame | None, list[str]]:
    """``prof.steps``, or None and a note the view shows saying why not (the trace viewer
    works without steps: only its step menu and the events' step are missing)."""
    try:
        return prof.steps, []
    except Exception as exc:  # shown in the view, with the error: never hidden
        return None, [(f"No steps: computing them failed ({type(exc).__name__}: {exc}); the "
                       "step menu and each event's step are missing.")]


def _counters(prof, planes: set) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The counter tracks' tables (see timeline_counters), or none and a note saying why
    (the trace viewer works without them); ``planes``: the (host, plane) pairs shown."""
    try:
        return (*counter_tables(prof, planes=planes), [])
    except Exception as exc:  # shown in the view, with the error: never hidden
        tracks, points = counter_tables_empty()
        return tracks, points, [f"No counter tracks: computing them failed "
                                f"({type(exc).__name__}: {exc})."]


def _drawn_as_counters(prof) -> set[tuple[str, str]]:
    """(host, plane) of the ``_counters_`` lines drawn as counter tracks (their samples are
    in ``prof.counters``); none where that table fails (``_counters`` says why)."""
    try:
        return counter_lines(counters_of(prof))
    except Exception:  # the counter tracks' note says what failed
        return set()


def _without_lines(ev: pd.DataFrame, lines: set[tuple[str, str]]) -> pd.DataFrame:
    """``ev`` without the events of the ``_counters_`` lines of ``lines`` (host, plane)."""
    if not lines:
        return ev
    on_line = (ev["line"] == COUNTERS_LINE).to_numpy()
    if not on_line.any():
        return ev
    pairs = pd.Series(list(zip(ev["host"].astype(str)[on_line], ev["plane"].astype(str)[on_line])))
    drop = np.zeros(len(ev), bool)
    drop[np.flatnonzero(on_line)] = pairs.isin(lines).to_numpy()
    return ev[~drop]


def _tracks(ev: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each event's track code and each track's first row: one track per line (the decoder
    lays each line's events out together, so a track is a run of rows with the same host,
    plane and line id)."""
    host_codes = ev["host"].cat.codes.to_numpy()
    plane_codes = ev["plane"].cat.codes.to_numpy()
    line_ids = ev["line_id"].to_numpy()
    change = np.flatnonzero((host_codes[1:] != host_codes[:-1]) |
                            (plane_codes[1:] != plane_codes[:-1]) |
                            (line_ids[1:] != line_ids[:-1])) + 1
    first_rows = np.concatenate([[0], change]).astype(np.int64)
    track_codes = np.zeros(len(ev), np.int32)
    track_codes[change] = 1
    np.cumsum(track_codes, out=track_codes)
    return track_codes, first_rows


def _order(track_codes, shown, start_ps, depth, max_depth) -> np.ndarray:
    """Rows sorted by (track as shown, depth, start); ``shown``: each row's track position."""
    if kernels.is_sorted_by(track_codes, start_ps):  # rows by start within each line: one
        # stable pass by (track, depth) keeps that order
        key = shown.astype(np.int64) * (int(max_depth.max()) + 1) + depth
        return kernels.argsort(key.astype(np.int32) if key.max() < 2**31 else key)
    return kernels.argsort(shown, depth, start_ps.astype(np.int64))


def _track_positions(prof, ev, first_rows) -> np.ndarray:
    """Where each track is shown: XProf's order of planes and lines (``track_order``)."""
    keys = pd.DataFrame({"host": ev["host"].iloc[first_rows].astype(str).to_numpy(),
                         "plane": ev["plane"].iloc[first_rows].astype(str).to_numpy(),
                         "line_id": ev["line_id"].to_numpy()[first_rows].astype(np.int64)})
    order = prof.result("track_order").drop_duplicates(["host", "plane", "line_id"])
    shown = keys.merge(order, how="left", on=["host", "plane", "line_id"], sort=False)
    rank = shown["order"].to_numpy(np.float64)
    by_rank = np.lexsort((np.arange(len(rank)), np.nan_to_num(rank, nan=np.inf)))
    position = np.empty(len(rank), np.int32)
    position[by_rank] = np.arange(len(rank), dtype=np.int32)
    return position


def _track_table(ev, first_rows, max_depth, position) -> pd.DataFrame:
    """One row per track, as shown: its id, section (host and plane), line name, depths and
    events."""
    host = ev["host"].iloc[first_rows].astype(str).reset_index(drop=True)
    plane = ev["plane"].iloc[first_rows].astype(str).reset_index(drop=True)
    table = pd.DataFrame({
        "id": position, "section": host + " " + plane, "host": host, "plane": plane,
        "name": ev["line"].iloc[first_rows].astype(str).reset_index(drop=True),
        "depths": (max_depth + 1).astype(np.int32),
        "events": np.diff(np.append(first_rows, len(ev))).astype(np.int64)})
    return table.sort_values("id", kind="stable").reset_index(drop=True)


def timeline_index(prof, steps: pd.DataFrame | None = None, hidden: set = frozenset()
                   ) -> tuple[TimelineIndex | None, dict, np.ndarray]:
    """The timeline's index (events sorted by track as shown, row and start), its tables
    (names, tracks, segments ``[track, depth, first row, end row]``, ``steps``: a steps table
    or None) and the event id of each row.  Tracks go in XProf's order (device planes
    first); each event goes on the first row of its track free when it starts
    (``kernels.tl_rows``): nested events by depth, overlapping async ops side by side; step
    markers are labelled by their step, as XProf labels them (:mod:`.timeline_step_labels`).
    ``hidden``: (host, plane) of the ``_counters_`` lines left out (drawn as counters)."""
    ev = _without_lines(prof.events, hidden)
    n = len(ev)
    if not n:
        return None, _empty_meta(), np.empty(0, np.int64)
    track_codes, first_rows = _tracks(ev)
    start_ps = ev["start_ps"].to_numpy()
    depth = kernels.tl_rows(track_codes, start_ps, ev["duration_ps"].to_numpy())
    max_depth = np.maximum.reduceat(depth, first_rows)
    position = _track_positions(prof, ev, first_rows)
    order = _order(track_codes, position[track_codes], start_ps, depth, max_depth)
    t_sorted, d_sorted = position[track_codes[order]], depth[order]
    change = np.flatnonzero((np.diff(t_sorted) != 0) | (np.diff(d_sorted) != 0)) + 1
    bounds = np.concatenate([[0], change, [n]]).astype(np.int64)
    seg_lo, seg_hi = bounds[:-1], bounds[1:]
    label_of, names, long_names = _labels(prof, ev["name"])
    labels = relabel_step_markers(label_of[ev["name"].cat.codes.to_numpy()], names, long_names,
                                  *step_marker_labels(prof, ev))
    index = TimelineIndex(ev["start_us"].to_numpy()[order], ev["duration_us"].to_numpy()[order],
                          labels[order], seg_lo, seg_hi, names, long_names)
    meta = {**_empty_meta(), "names": names, "long_names": long_names,
            "tracks": _track_table(ev, first_rows, max_depth, position),
            "segments": pd.DataFrame({"track": t_sorted[seg_lo].astype(np.int32),
                                      "depth": d_sorted[seg_lo].astype(np.int32),
                                      "lo": seg_lo, "hi": seg_hi}),
            "steps": _step_rows(steps), "t0": index.t0, "t1": index.t1}
    return index, meta, ev.index.to_numpy()[order]


def _labels(prof, names: pd.Series) -> tuple[np.ndarray, list[str], dict]:
    """Each event name's label, as XProf's viewer labels events (:mod:`..analysis.trace.
    display_names`): (label code of each name code, the labels, {label code: the names it
    stands for where they differ from it, one a line}: searched too).  Names of one label
    share its code (an area's summary sums them in one row, as the page shows them)."""
    full = [str(x) for x in names.cat.categories]
    shown = display_names(prof.spaces)
    codes, labels = pd.factorize(pd.Series([shown.get(n, n) for n in full], dtype=object))
    long: dict[str, list[str]] = {}
    for n, code in zip(full, codes):
        if n != labels[code]:
            long.setdefault(str(code), []).append(n)
    return (codes.astype(np.int64), [str(x) for x in labels],
            {k: "\n".join(v) for k, v in long.items()})


def _step_rows(st: pd.DataFrame | None) -> pd.DataFrame:
    """One row per step: its menu entry, start and end (us), host and step name."""
    if st is None:
        return _empty(_STEPS)
    host = st["host"].astype(str).reset_index(drop=True)
    start = st["start_us"].to_numpy(np.float64)
    return pd.DataFrame({"name": host + " step " + pd.Series(st.index.astype(str)),
                         "start": start,
                         "end": start + st["duration_ms"].to_numpy(np.float64) * 1e3,
                         "host": host,
                         "step_name": st["step_name"].astype(str).reset_index(drop=True)})


def first_state(index: TimelineIndex | None, meta: dict, budget: int | None = None,
                overview_budget: int | None = None) -> tuple[Tile, dict]:
    """The widget's first tile from the index: every event when they fit ``budget`` at 16
    bytes each, else an overview tile (in ``overview_budget`` bytes, when given);
    ``meta["lod"]`` says which."""
    if index is None:
        return Tile(0, 1, 0, True, {k: np.empty(0, d) for k, d in _EMPTY}), meta
    tile = index.overview(STATE_BUDGET if budget is None else budget)
    full = tile.exact and tile.blocks == len(index)
    if not full and overview_budget is not None and tile.nbytes > overview_budget:
        tile = index.overview(overview_budget)
    meta = {**meta, "lod": {"mode": "full" if full else "overview", "events": len(index)}}
    return (tile.without_blocks() if full else tile), meta


_EMPTY = (("start", np.float64), ("dur", np.float32), ("name", np.uint32), ("off", np.uint32))


class TimelineSource:
    """The timeline's data for one profile: its index, first state, event ids, and the
    answers to the browser (details of a selected event, window tiles, search hits)."""

    def __init__(self, prof, budget: int | None = None):
        self.prof = prof
        self.steps, notes = _step_table(prof)
        self.index, meta, self.event_ids = timeline_index(prof, self.steps,
                                                          _drawn_as_counters(prof))
        planes = set(zip(meta["tracks"]["host"], meta["tracks"]["plane"]))
        meta["counter_tracks"], meta["counter_points"], more = _counters(prof, planes)
        meta["notes"] = notes + more
        # the module's STATE_BUDGET at call time (tests lower it to get an overview)
        self.tile, self.meta = first_state(self.index, meta,
                                           STATE_BUDGET if budget is None else budget,
                                           OVERVIEW_STATE_BUDGET)
        self._rank = None
        self._row_of: np.ndarray | None = None
        self._paths: dict | None = None
        self._links = TimelineLinks(prof, self.index, self.event_ids)
        self._facets = SearchFacets(prof)

    def on_change(self, name: str, value) -> dict:
        """The view's answer to a front-end change: the details of a selected event and the
        events linked to it."""
        if name == "critical_step":
            return {"critical": self.critical_of(int(value))}
        if name != "selected_index":
            return {}
        return {"details": self.describe(value), "links": self.links_of(value)}

    def critical_of(self, step_index: int) -> dict:
        """The critical path of the step menu's row ``step_index`` (see timeline_critical)."""
        if step_index < 0 or self.index is None:
            return {"step": int(step_index), "nodes": [], "more": 0, "sentence": ""}
        return critical_answer(self.prof, self.steps, self._rows_of_events(), step_index)

    def link_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source row, end row, kind) of every link: a launch and its kernel, a producer
        and its consumer (kinds: ``timeline_links.LINK_KINDS``)."""
        return self._links.rows()

    @staticmethod
    def link_labels() -> list[list[str]]:
        """Per kind of link: [the label of its end, of its start] ("kernel", "launch")."""
        return [[to, frm] for _, to, frm in LINK_KINDS]

    def links_of(self, index: int) -> dict:
        """The events linked to row ``index`` (see :meth:`TimelineLinks.of`)."""
        return self._links.of(index)

    def on_message(self, content: dict, buffers=None) -> tuple[dict, list]:
        """Answer a request of the browser: ``{"kind": "window", "t0", "t1", "width"}`` gets
        a tile (header with its schema, and its columns as buffers; see timeline_lod),
        ``{"kind": "search", "query"}`` the matching rows by start (typed columns start, dur,
        row, name), ``{"kind": "area", "t0", "t1", "tracks"}`` the area's summary (see
        timeline_area), ``{"kind": "occurrences", "table", "key"}`` the events behind a
        table's row, as search hits (see timeline_find).  Bad requests get ``error``, never an
        exception."""
        kind = content.get("kind") if isinstance(content, dict) else None
        base = {"kind": kind, "id": content.get("id") if isinstance(content, dict) else None}
        if self.index is None:
            return {**base, "error": "this profile has no events"}, []
        try:
            if kind == "window":
                tile = self.index.window(float(content["t0"]), float(content["t1"]),
                                         float(content["width"]))
                header, out = tile.message()
                return {**base, "tile": header}, out
            if kind == "search":
                return self._search(base, str(content.get("query", "")))
            if kind == "area":
                return self._area(base, content)
            if kind == "occurrences":
                return self._occurrences(base, content)
            if kind == "hlo_graph":  # a kernel's details: the HLO graph around its op
                return graph_answer(self.prof, content)
        except (KeyError, TypeError, ValueError) as exc:
            return {**base, "error": f"bad {kind} request: {exc}"}, []
        return {**base, "error": f"unknown request {kind!r}"}, []

    def _area(self, base: dict, content: dict) -> tuple[dict, list]:
        t0, t1 = float(content["t0"]), float(content["t1"])
        if not (math.isfinite(t0) and math.isfinite(t1) and t1 >= t0):
            raise ValueError(f"the area must be a finite range, not [{t0}, {t1}]")
        tracks = [int(t) for t in content["tracks"]]
        header, buffers, events, names = area_summary(self.index, self.meta["segments"], t0,
                                                      t1, tracks)
        return {**base, "rows": header, "events": events, "names": names}, buffers

    def find(self, query: str) -> np.ndarray:
        """The rows a search for ``query`` finds, in row order (see timeline_search): a
        table row's events, or those whose name, op type, framework op, name scope, HLO op
        or HLO category contains it."""
        rows = find_rows(self.prof, self._facets, self._rows_of_events(), query)
        if parse_query(query) is None:  # (and every row named so, as the index names it)
            rows = np.union1d(rows, self.index.named(query))
        return np.unique(rows)

    def _search(self, base: dict, query: str) -> tuple[dict, list]:
        return self._hits(base, *self.index.hits(self.find(query)))

    def _rows_of_events(self) -> np.ndarray:
        """The timeline row of each event (row of ``prof.events``), -1 where none."""
        if self._row_of is None:
            self._row_of = np.full(len(self.prof.events), -1, np.int64)
            self._row_of[self.event_ids] = np.arange(len(self.event_ids))
        return self._row_of

    def _occurrences(self, base: dict, content: dict) -> tuple[dict, list]:
        """The rows of the events behind a table's row (see timeline_find), by start."""
        ids = occurrences(self.prof, str(content["table"]), dict(content["key"]))
        rows = self._rows_of_events()[ids]
        return self._hits(base, *self.index.hits(rows[rows >= 0]))

    def _hits(self, base: dict, total, start, dur, rows, names) -> tuple[dict, list]:
        hits = encode_columns({"start": np.asarray(start, np.float64),
                               "dur": np.asarray(dur, np.float32), "row": rows, "name": names})
        return ({**base, "total": int(total), "shown": len(rows),
                 "hits": {"schema": hits["schema"]}}, hits["buffers"])

    def offline_state(self, budget: int) -> tuple[dict, np.ndarray | None]:
        """The timeline's traits for a page without a kernel (``tile``, ``meta`` and maybe
        ``detail``, as sent), in about ``budget`` packed bytes with its event details; and
        the rows the details cover.  Every event when they fit (rows None: all of them),
        else the overview plus every event of one time range (from the first step on, as
        long as it fits), whose rows (and the overview's single events') have details."""
        index = self.index
        if index is None or len(index) * OFFLINE_EVENT_BYTES <= budget:
            tile, meta = first_state(index, self.meta, budget=2**62)
            return {"tile": tile.wire(), "meta": record_wire(meta),
                    "critical_paths": self._offline_paths()}, None
        # an overview in at most a third of the budget, the rest for one detailed range
        overview = index.window(index.t0, index.t1 + 1e-9, OVERVIEW_PX,
                                min(STATE_BUDGET, budget // 3))
        room = max(budget - overview.nbytes // 2, 0) // OFFLINE_EVENT_BYTES
        detail = self._detail_range(room)
        traits = {"tile": overview.wire(), "meta": record_wire(
            {**self.meta, "lod": {"mode": "overview", "events": len(index)}}),
            "critical_paths": self._offline_paths()}
        rows = overview.columns["row"][overview.columns["count"] == 1]
        if detail is not None:
            traits["detail"] = detail.wire()
            rows = np.union1d(rows, detail.columns["row"])
        return traits, np.unique(rows).astype(np.int64)

    def _offline_paths(self) -> dict:
        """The first steps' critical paths for the page (see timeline_critical), once."""
        if self._paths is None:
            self._paths = offline_paths(self.prof, self.steps, self._rows_of_events())
        return self._paths

    def _detail_range(self, room: int) -> Tile | None:
        """Every event from the first step on, as far as ``room`` events reach."""
        index = self.index
        steps = self.meta["steps"]
        a = float(steps["start"].min()) if len(steps) else index.t0
        lo, hi = a, index.t1
        if index.count_in(a, hi) > room:  # the longest range from a that fits
            for _ in range(48):
                mid = (lo + hi) / 2
                if index.count_in(a, mid) <= room:
                    lo = mid
                else:
                    hi = mid
            hi = lo
        return index.events_in(a, hi) if room and hi > a else None

    def event_id(self, index: int) -> int | None:
        return int(self.event_ids[index]) if 0 <= index < len(self.event_ids) else None

    def index_of(self, event_id: int) -> int:
        if self._rank is None:
            self._rank = pd.Series(np.arange(len(self.event_ids)), index=self.event_ids)
        if event_id not in self._rank.index and event_id in self.prof.events.index:
            raise ValueError(f"event {event_id} is a counter sample: the trace viewer draws "
                             "it in a counter track, not as an event")
        return int(self._rank[event_id])

    def window_of(self, event_id: int) -> list[float]:
        ev = self.prof.events.loc[event_id]
        pad = max(ev.duration_us * 0.1, 0.5)
        return [float(ev.start_us - pad), float(ev.start_us + ev.duration_us + pad)]

    def describe(self, index: int) -> dict[str, str]:
        """The details of the event at ``index``, label to text: name, times, place, every
        stat and the step (see :mod:`tfprof_nb.offline.details`, which also writes them into
        pages without a kernel)."""
        if self.event_id(index) is None:
            return {}
        return detail_rows(self, [index]).of(0)


class TraceView(View):
    """The trace viewer in a notebook: one section per host and device, one track per line.

    Zoom with the wheel or W/S, pan by dragging or A/D, search names, zoom to a step, measure
    with alt+drag, click an event for its details.  ``view`` (start, end in us) and
    ``selected_event`` (event id) are synced: set them from Python to zoom or select.
    """

    tab, title, bundle, position, zoomable = "timeline", "Trace viewer", "timeline", 20, True
    # what is drawn first: every event, or an overview whose blocks merge neighbours (the
    # kernel answers zooms with more detail; see timeline_lod)
    tile = TileTrait()
    # names, notes, time range and level of detail, and the tables ``tracks``, ``segments``
    # ([track, depth, first row, end row] of each run of rows) and ``steps``
    meta = RecordTrait()
    view = traitlets.List(traitlets.Float(), default_value=[]).tag(sync=True)
    selected_index = traitlets.Int(-1).tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    # the events linked to the selected one (a launch and its kernels): {row, partners, more}
    links = traitlets.Dict().tag(sync=True)
    # the critical path of a step (a row of the step menu; -1: not shown) and its answer
    critical_step = traitlets.Int(-1).tag(sync=True)
    critical = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(520).tag(sync=True)
    # a table's row to show (set by the dashboard's tables: {table, key, label, nonce}); the
    # page asks the kernel for its events, or searches the label without one
    find = traitlets.Dict().tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if prof.n_events else "No events in this profile."

    @classmethod
    def state(cls, prof) -> ViewState:
        source = TimelineSource(prof)
        return ViewState({"tile": source.tile, "meta": source.meta}, source)

    def _timeline_source(self):
        return self._controller

    @property
    def selected_event(self) -> int | None:
        """Global event id of the selected event (None when nothing is selected)."""
        return self._controller.event_id(self.selected_index)

    def select(self, event_id: int, zoom: bool = True) -> None:
        """Select an event by its id (a row of ``prof.events``) and zoom to it."""
        self.selected_index = self._controller.index_of(event_id)
        if zoom:
            self.view = self._controller.window_of(event_id)


TraceTimeline = TraceView  # its name in DESIGN.md's contract: an alias, without a warning
