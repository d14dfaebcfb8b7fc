"""What a trace export writes, gathered once from a profile as flat columns.

Slices are every event of ``prof.events`` (slice i is event i) followed by one slice per step
of ``prof.steps``.  Each slice lies on a *line*: an XLine of one host's plane, or a host's
steps line.  Annotations are the slices' arguments, one row per (slice, key, value), sorted
by slice: an event's arguments (its own stats, then its event metadata's, keyed and written
as the trace viewer's details and ``prof.sql``'s ``stats`` show them:
``analysis.trace.event_arguments``; every one, each key once on a slice) and a step's
step-time breakdown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.trace.event_arguments import (TextTable, argument_keys, argument_rows,
                                              stat_texts, value_text)
from ..constants import HOST_PLANE, STEPS_LINE

__all__ = ["NONE", "DOUBLE", "UINT", "INT", "STRING", "Annotations", "TraceContent",
           "trace_content"]

# annotation value kinds (the XStat oneof cases, with str, bytes and refs all as STRING)
NONE, DOUBLE, UINT, INT, STRING = 0, 1, 2, 3, 4


@dataclass
class Annotations:
    """Arguments of the slices, one row each, sorted by ``owner``.

    ``raw`` holds a double's bits (DOUBLE), the 64 bits of an integer (UINT, INT) or the
    code of the value's text in ``strings`` (STRING: strings, refs, bytes).
    """

    owner: np.ndarray  # int64 slice
    key: np.ndarray  # int32 code into keys
    kind: np.ndarray  # int8
    raw: np.ndarray  # int64
    keys: list[str]
    strings: list[str]

    def __len__(self) -> int:
        return len(self.owner)

    def bounds(self, n_slices: int) -> np.ndarray:
        """Row offsets (n_slices + 1): the rows of slice i are ``off[i]:off[i + 1]``."""
        return np.searchsorted(self.owner, np.arange(n_slices + 1), side="left")


@dataclass
class TraceContent:
    """Slices (events, then steps), their lines and processes, and their annotations."""

    start_ps: np.ndarray  # int64, relative to the profile start
    duration_ps: np.ndarray  # int64
    name: np.ndarray  # int32 code into names
    names: list[str]
    line: np.ndarray  # int32 line of each slice
    line_names: list[str]
    line_process: np.ndarray  # int32 process of each line
    n_event_lines: int  # lines from n_event_lines on are steps lines
    process_names: list[str]
    n_events: int
    annotations: Annotations

    def __len__(self) -> int:
        return len(self.start_ps)


def _host_stat_rows(space, offset: int, keys: TextTable, strings: TextTable) -> tuple:
    """(owner, key, kind, raw) of the arguments of one host's events."""
    st = space.stats
    owner, row, origin = argument_rows(space)
    key = argument_keys(st, owner, row, origin, keys).astype(np.int32)
    kind = st.kind[row].astype(np.int8)
    raw = st.raw_value[row].astype(np.int64)
    text = np.flatnonzero(kind >= 4)
    raw[text] = stat_texts(st, row[text], strings)
    kind[text] = STRING
    return owner + offset, key, kind, raw


def _step_rows(steps: pd.DataFrame, first_slice: int, keys: TextTable, strings: TextTable) -> tuple:
    """(owner, key, kind, raw) of the steps' arguments: step number, then every column but
    host, start and duration (missing values left out)."""
    n = len(steps)
    columns = {"step": steps.index.to_numpy()}
    columns.update({c: steps[c].to_numpy() for c in steps.columns
                    if c not in ("host", "start_us", "duration_ms")})
    kinds, raws, present = [], [], []
    for values in columns.values():
        if values.dtype.kind in "iub":
            kinds.append(np.full(n, INT, np.int8))
            raws.append(values.astype(np.int64))
            present.append(np.ones(n, bool))
        elif values.dtype.kind == "f":
            kinds.append(np.full(n, DOUBLE, np.int8))
            raws.append(values.astype(np.float64).view(np.int64))
            present.append(~np.isnan(values))
        else:
            ok = np.array([v is not None and not (isinstance(v, float) and math.isnan(v))
                           for v in values], bool)
            kinds.append(np.full(n, STRING, np.int8))
            raws.append(np.array([strings.code(value_text(v)) if k else 0
                                  for v, k in zip(values, ok)], np.int64))
            present.append(ok)
    key = np.array([keys.code(c) for c in columns], np.int32)
    keep = np.stack(present, axis=1).ravel()
    owner = np.repeat(np.arange(first_slice, first_slice + n, dtype=np.int64), len(columns))
    return (owner[keep], np.tile(key, n)[keep], np.stack(kinds, axis=1).ravel()[keep],
            np.stack(raws, axis=1).ravel()[keep])


class _Tracks:
    """The trace's processes (one per host and plane) and threads (lines), numbered in the
    order they are first asked for."""

    def __init__(self):
        self.process_names: list[str] = []
        self.line_names: list[str] = []
        self.line_process: list[int] = []
        self._process: dict = {}  # (host, plane index or None) -> process

    def line(self, key: tuple, process_name: str, line_name: str) -> int:
        """A new line of the process ``key`` (made with ``process_name`` when new)."""
        if key not in self._process:
            self._process[key] = len(self._process)
            self.process_names.append(process_name)
        self.line_names.append(line_name)
        self.line_process.append(self._process[key])
        return len(self.line_names) - 1


def _event_lines(prof, tracks: _Tracks, keys: TextTable, strings: TextTable):
    """(the line of every event, each host's stat rows): one line per (host, line) that has
    events, in host order."""
    lines, stats = [], []
    for host in prof.hosts:
        space = prof.spaces[host]
        code = np.full(len(space.line_ids), -1, np.int64)
        for li in np.unique(space.events.line).tolist():
            plane = int(space.line_plane[li])
            code[li] = tracks.line((host, plane), f"{host} {space.plane_names[plane]}",
                                   space.line_display_names[li] or space.line_names[li])
        lines.append(code[space.events.line])
        stats.append(_host_stat_rows(space, prof.event_offsets[host], keys, strings))
    return lines, stats


def _step_slices(prof, tracks: _Tracks, names: TextTable, first: int, keys: TextTable,
                 strings: TextTable) -> list[tuple]:
    """(start, duration, name, line, stat rows) of each host's steps, on a ``Steps`` line of
    the host's CPU process; slice ids follow ``first``."""
    out = []
    steps = prof.steps
    if not len(steps):
        return out
    for host, group in steps.groupby("host", sort=True, observed=True):
        plane = prof.spaces[host].plane_index(HOST_PLANE)
        line = tracks.line((host, plane), host if plane is None else f"{host} {HOST_PLANE}",
                           STEPS_LINE)
        out.append((np.round(group["start_us"].to_numpy() * 1e6).astype(np.int64),
                    np.round(group["duration_ms"].to_numpy() * 1e9).astype(np.int64),
                    names.codes([f"step {s}" for s in group.index.tolist()]).astype(np.int32),
                    np.full(len(group), line, np.int64),
                    _step_rows(group, first, keys, strings)))
        first += len(group)
    return out


def trace_content(prof) -> TraceContent:
    """The slices, lines, processes and annotations of ``prof`` (see the module doc)."""
    ev = prof.events
    tracks, keys, strings = _Tracks(), TextTable(), TextTable()
    line, stat_parts = _event_lines(prof, tracks, keys, strings)
    n_event_lines = len(tracks.line_names)
    names = TextTable(str(x) for x in ev["name"].cat.categories)
    name = [ev["name"].cat.codes.to_numpy().astype(np.int32)]
    start, duration = [ev["start_ps"].to_numpy()], [ev["duration_ps"].to_numpy()]
    for s, d, nm, ln, st in _step_slices(prof, tracks, names, len(ev), keys, strings):
        start.append(s)
        duration.append(d)
        name.append(nm)
        line.append(ln)
        stat_parts.append(st)
    owner, key, kind, raw = (np.concatenate([p[i] for p in stat_parts]) if stat_parts
                             else np.empty(0, dt)
                             for i, dt in enumerate((np.int64, np.int32, np.int8, np.int64)))
    return TraceContent(
        start_ps=np.concatenate(start).astype(np.int64),
        duration_ps=np.concatenate(duration).astype(np.int64),
        name=np.concatenate(name).astype(np.int32), names=names.items,
        line=np.concatenate(line).astype(np.int32), line_names=tracks.line_names,
        line_process=np.array(tracks.line_process, np.int32),
        process_names=tracks.process_names, n_event_lines=n_event_lines, n_events=len(ev),
        annotations=Annotations(owner, key.astype(np.int32), kind.astype(np.int8),
                                raw.astype(np.int64), keys.items, strings.items))
