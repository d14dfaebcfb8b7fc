"""``prof.critical_path``: per step, the chain of events that bounds it.

Each host's dependency graph (:mod:`.graph`) is walked backwards from each step's end to its
start (:mod:`.walk`).  One row per segment of the path, latest last: ``host``, ``step``,
``order`` (0 at the step's start), ``start_us``, ``duration_us`` (the segment's time on the
path: segments cover the step end to end without overlap), ``resource`` (``plane / line``),
``category`` (as the step-time breakdown's, plus ``host_wait``: a host still blocked after
the device event it waited for ended, and ``idle``), ``kind`` (``event``: an event's own
time; ``wait``: an event waiting for another one, named in ``waited_on``; ``idle``: nothing
ran), ``name``, ``event_id`` (the row of ``prof.events``; -1 for idle), ``waited_on`` and
``waited_on_id``, and ``devices_busy_us``: on an idle segment, how much of it any device of
its host was running something (a kernel, an op, a copy: the trace has no event tying the
path to it, as on TPUs, whose clocks need not agree with the host's; NaN where the host has
no device activity); 0 on other segments.  Summaries: :mod:`.path_summary`.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from ..gpu.activity import device_busy
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..trace.intervals import measure_in
from .graph import CATEGORIES, dependency_graph
from .text_columns import text_column
from .walk import SEGMENT_KINDS, beside, walk_windows

__all__ = ["ANALYSES", "CRITICAL_PATH_COLUMNS", "host_critical_path", "combine_critical_path",
           "empty_critical_path", "names_of", "window_order"]

_BESIDE_MIN_SEGMENTS = 1 << 20  # paths this long build some columns on a helper thread
CRITICAL_PATH_COLUMNS = ["host", "step", "order", "start_us", "duration_us", "resource",
                         "category", "kind", "name", "event_id", "waited_on", "waited_on_id",
                         "devices_busy_us"]


def empty_critical_path() -> pd.DataFrame:
    types = {"host": object, "step": "int64", "order": "int64", "start_us": "float64",
             "duration_us": "float64", "resource": object, "category": object, "kind": object,
             "name": object, "event_id": "int64", "waited_on": object, "waited_on_id": "int64",
             "devices_busy_us": "float64"}
    return pd.DataFrame({c: pd.Series(dtype=types[c]) for c in CRITICAL_PATH_COLUMNS})


def _windows(steps: pd.DataFrame, shift_ps: int) -> tuple[np.ndarray, np.ndarray]:
    """(begin, end) ps of each step on the host's own axis."""
    begin = np.rint(steps.start_us.to_numpy(float) * 1e6).astype(np.int64) - shift_ps
    return begin, begin + np.rint(steps.duration_ms.to_numpy(float) * 1e9).astype(np.int64)


def host_critical_path(hd: HostData, shift_ps: int = 0, steps: pd.DataFrame | None = None,
                       launch_links: pd.DataFrame | None = None,
                       flow_links: pd.DataFrame | None = None,
                       replay_graph=None) -> pd.DataFrame:
    """One host's segments (``event_id``/``waited_on_id``: host rows); ``replay_graph``: the
    host's :class:`.replay_graph.ReplayGraph`, whose dependency graph it walks (built here
    when it is not given)."""
    if steps is None or steps.empty or not len(hd):
        return empty_critical_path()
    g = replay_graph.graph if replay_graph is not None else \
        dependency_graph(hd, launch_links, flow_links)
    if not len(g):
        return empty_critical_path()
    begin, end = _windows(steps, shift_ps)
    segs = walk_windows(g, begin, end)
    return _table(hd, g, segs, steps.index.to_numpy(np.int64), shift_ps)


def window_order(window: np.ndarray) -> np.ndarray:
    """Each segment's place in its window (0 at the window's start): windows come in order,
    so its place is its distance to its run's first segment (one linear pass, not a binary
    search per segment)."""
    n = len(window)
    first = np.zeros(n, np.int64)
    if n > 1:
        starts = np.flatnonzero(window[1:] != window[:-1]) + 1
        first[starts] = starts
        np.maximum.accumulate(first, out=first)
    return np.arange(n, dtype=np.int64) - first


def _table(hd: HostData, g, segs: dict, step_ids: np.ndarray, shift_ps: int) -> pd.DataFrame:
    if not len(segs["window"]):
        return empty_critical_path()
    start, end = segs["start"], segs["end"]
    with beside(len(start) >= _BESIDE_MIN_SEGMENTS, _waited_columns, hd, g, segs) as waited:
        node = segs["node"]
        row = np.where(node >= 0, g.rows[np.maximum(node, 0)], -1)
        columns = {
            "host": hd.name, "step": step_ids[segs["window"]],
            "order": window_order(segs["window"]), "start_us": (start + shift_ps) / 1e6,
            "duration_us": (end - start) / 1e6, "resource": None,
            "category": text_column(CATEGORIES, segs["category"]),
            "kind": text_column(SEGMENT_KINDS, segs["kind"]),
            "name": _names(hd, row, "idle"), "event_id": row}
        on_device = (node >= 0) & np.asarray(g.is_device, bool)[np.maximum(node, 0)] \
            if len(g.is_device) else np.zeros(len(node), bool)
        columns["devices_busy_us"] = _devices_busy(hd, start, end, ~on_device)
        columns["resource"], columns["waited_on"], columns["waited_on_id"] = \
            waited()  # (the text columns of what waited: beside the rest on a long path)
    return pd.DataFrame(columns)


def _devices_busy(hd: HostData, start: np.ndarray, end: np.ndarray,
                  off_device: np.ndarray) -> np.ndarray:
    """float64 us of each segment ``[start, end)`` (ps) off the devices (``off_device``: a
    host event's, a wait or an idle gap) in which a device of the host runs something (NaN
    without device activity); 0 on a device event's segments."""
    out = np.zeros(len(start), np.float64)
    at = np.flatnonzero(off_device)
    busy = device_busy(hd) if len(at) else None
    out[at] = np.nan if busy is None else measure_in(busy, start[at], end[at]) / 1e6
    return out


def _waited_columns(hd: HostData, g, segs: dict) -> tuple:
    """(resource, waited_on, waited_on_id) of the segments (see :func:`_table`)."""
    waited = segs["waited_on"]
    wrow = np.where(waited >= 0, g.rows[np.maximum(waited, 0)], -1)
    keys = np.array(sorted(g.resource_names), np.int64)  # (every segment's resource is one)
    resource = text_column([g.resource_names[k] for k in keys.tolist()],
                           np.searchsorted(keys, segs["resource"]))
    return resource, _names(hd, wrow, ""), wrow


def _names(hd: HostData, rows: np.ndarray, none: str):
    """The event name of each row, ``none`` where it is -1 (see :func:`names_of`)."""
    codes = np.full(len(rows), len(hd.names), np.int64)
    ok = rows >= 0
    codes[ok] = hd.name_code[rows[ok]]
    return text_column(np.append(np.asarray(hd.names, object), none), codes)


def names_of(table: np.ndarray, code: np.ndarray, rows: np.ndarray, none: str) -> np.ndarray:
    """Object array: the name (``table[code[row]]``) of each row, ``none`` where it is -1."""
    out = np.full(len(rows), none, object)
    ok = rows >= 0
    out[ok] = table[code[rows[ok]]]
    return out


def combine_critical_path(parts: dict, event_offsets: dict) -> pd.DataFrame:
    """Every host's segments, event ids as rows of ``prof.events``."""
    frames = []
    for host, part in parts.items():
        if len(part):
            offset = event_offsets[host]
            frames.append(part.assign(
                event_id=np.where(part.event_id >= 0, part.event_id + offset, -1),
                waited_on_id=np.where(part.waited_on_id >= 0, part.waited_on_id + offset, -1)))
    if not frames:
        return empty_critical_path()
    return pd.concat(frames, ignore_index=True)[CRITICAL_PATH_COLUMNS]


ANALYSES = (Analysis("critical_path", host=host_critical_path, combine=combine_critical_path,
                     host_needs=("steps", "replay_graph"), needs=("event_offsets",),
                     host_cost=25.0),)
