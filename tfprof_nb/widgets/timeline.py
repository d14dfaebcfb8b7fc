"""Trace timeline widget: every event of a profile, zoomable, on a canvas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from ..analysis.nesting import event_nesting
from ._base import bundle
from ._view import View, ViewState

__all__ = ["TraceTimeline", "timeline_payload"]


def timeline_payload(prof) -> tuple[dict, dict, np.ndarray]:
    """Binary columns and small tables for the timeline, and the event id of each row.

    Events are sorted by (track, nesting depth, start) so that the browser finds what is
    visible by binary search; per event the wire carries 16 bytes (start float64, duration
    float32, name code uint32), names go once in a table.
    """
    ev = prof.events
    n = len(ev)
    if not n:
        empty = {"ev_start": b"", "ev_dur": b"", "ev_name": b""}
        return empty, {"names": [], "tracks": [], "segments": [], "steps": [], "t0": 0.0,
                       "t1": 1.0}, np.empty(0, np.int64)
    # one track per (host, plane, line id), numbered in order of first appearance
    host_codes = ev["host"].cat.codes.to_numpy().astype(np.int64)
    plane_codes = ev["plane"].cat.codes.to_numpy().astype(np.int64)
    line_codes, line_ids = pd.factorize(ev["line_id"].to_numpy())
    n_planes = len(ev["plane"].cat.categories)
    key = (host_codes * n_planes + plane_codes) * len(line_ids) + line_codes
    track_codes, _ = pd.factorize(key)
    first_rows = pd.Series(np.arange(n)).groupby(track_codes).first().to_numpy()
    track_places = list(zip(host_codes[first_rows], plane_codes[first_rows]))
    depth = event_nesting(track_codes, ev["start_ps"].to_numpy(),
                          ev["duration_ps"].to_numpy())["depth"].to_numpy()
    order = np.lexsort((ev["start_ps"].to_numpy(), depth, track_codes))
    t_sorted, d_sorted = track_codes[order], depth[order]
    change = np.union1d(np.flatnonzero(np.diff(t_sorted) != 0) + 1,
                        np.flatnonzero(np.diff(d_sorted) != 0) + 1)
    bounds = np.concatenate([[0], change, [n]]).astype(np.int64)
    segments = [[int(t_sorted[lo]), int(d_sorted[lo]), int(lo), int(hi)]
                for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
    hosts = ev["host"].cat.categories
    planes = ev["plane"].cat.categories
    line_names = [str(x) for x in ev["line"].iloc[first_rows]]
    tracks = []
    max_depth = pd.Series(depth).groupby(track_codes).max()
    counts = np.bincount(track_codes, minlength=len(track_places))
    for t, (h, p) in enumerate(track_places):
        tracks.append({"id": t, "section": f"{hosts[h]} {planes[p]}",
                       "host": str(hosts[h]), "plane": str(planes[p]),
                       "name": line_names[t], "depths": int(max_depth[t]) + 1,
                       "events": int(counts[t])})
    start_us = ev["start_us"].to_numpy()[order]
    end_us = start_us + ev["duration_us"].to_numpy()[order]
    steps = []
    try:
        st = prof.steps
        ends = (st.start_us + st.duration_ms * 1e3).tolist()
        steps = [{"name": f"{h} step {s}", "start": float(a), "end": float(b), "host": str(h),
                  "step_name": str(name)}
                 for s, h, a, b, name in zip(st.index.tolist(), st.host.tolist(),
                                             st.start_us.tolist(), ends,
                                             st.step_name.tolist())]
    except Exception:  # the timeline works without steps
        steps = []
    meta = {"names": [str(x) for x in ev["name"].cat.categories], "tracks": tracks,
            "segments": segments, "steps": steps,
            "t0": float(start_us.min()), "t1": float(end_us.max())}
    columns = {
        "ev_start": np.ascontiguousarray(start_us, dtype=np.float64).tobytes(),
        "ev_dur": np.ascontiguousarray(ev["duration_us"].to_numpy()[order],
                                       dtype=np.float32).tobytes(),
        "ev_name": np.ascontiguousarray(ev["name"].cat.codes.to_numpy()[order],
                                        dtype=np.uint32).tobytes(),
    }
    return columns, meta, ev.index.to_numpy()[order]


class TimelineSource:
    """The timeline's data for one profile: payload, event ids and event details."""

    def __init__(self, prof):
        self.prof = prof
        self.columns, self.meta, self.event_ids = timeline_payload(prof)
        self._rank = None

    def on_change(self, name: str, value) -> dict:
        """The view's answer to a front-end change: the details of a selected event."""
        return {"details": self.describe(value)} if name == "selected_index" else {}

    def event_id(self, index: int) -> int | None:
        return int(self.event_ids[index]) if 0 <= index < len(self.event_ids) else None

    def index_of(self, event_id: int) -> int:
        if self._rank is None:
            self._rank = pd.Series(np.arange(len(self.event_ids)), index=self.event_ids)
        return int(self._rank[event_id])

    def window_of(self, event_id: int) -> list[float]:
        ev = self.prof.events.loc[event_id]
        pad = max(ev.duration_us * 0.1, 0.5)
        return [float(ev.start_us - pad), float(ev.start_us + ev.duration_us + pad)]

    def describe(self, index: int) -> dict:
        """Name, times, place, every stat and the step of the event at ``index``."""
        eid = self.event_id(index)
        if eid is None:
            return {}
        prof = self.prof
        ev = prof.events.loc[eid]
        out = {"name": str(ev["name"]), "start": f"{ev.start_us:.3f} us",
               "duration": f"{ev.duration_us:.3f} us", "host": str(ev.host),
               "plane": str(ev.plane), "track": str(ev.line), "event id": int(eid)}
        space = prof.spaces[str(ev.host)]
        local = eid - prof._event_offsets[str(ev.host)]
        st = space.stats
        from ..xspace import stat_value

        for r in np.flatnonzero((st.owner_kind == 0) & (st.owner == local)).tolist():
            value = stat_value(st, r)
            out[st.names[st.name_code[r]]] = value if isinstance(value, (int, float, str)) \
                else repr(value)
        step = self._step_of(ev)
        if step is not None:
            out["step"] = step
        return out

    def _step_of(self, ev):
        try:
            st = self.prof.steps
        except Exception:
            return None
        st = st[st.host == ev.host]
        inside = st[(st.start_us <= ev.start_us) &
                    (ev.start_us < st.start_us + st.duration_ms * 1e3)]
        return str(inside.step_name.iloc[0]) if len(inside) else None


class TraceTimeline(View):
    """The trace viewer in a notebook: one section per host and device, one track per line.

    Zoom with the wheel or W/S, pan by dragging or A/D, search names, zoom to a step, measure
    with alt+drag, click an event for its details.  ``view`` (start, end in us) and
    ``selected_event`` (event id) are synced: set them from Python to zoom or select.
    """

    tab, title = "timeline", "Trace viewer"
    _esm = bundle("timeline")
    ev_start = traitlets.Bytes(b"").tag(sync=True)
    ev_dur = traitlets.Bytes(b"").tag(sync=True)
    ev_name = traitlets.Bytes(b"").tag(sync=True)
    meta = traitlets.Dict().tag(sync=True)
    view = traitlets.List(traitlets.Float(), default_value=[]).tag(sync=True)
    selected_index = traitlets.Int(-1).tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(520).tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if prof.n_events else "No events in this profile."

    @classmethod
    def state(cls, prof) -> ViewState:
        source = TimelineSource(prof)
        return ViewState({**source.columns, "meta": source.meta}, source)

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
