"""Processes and threads of an exported trace: a process per (host, plane), a thread per line.

Trace viewers draw the slices of a thread as a stack, so a thread's slices must nest: each one
ends before the slice it starts inside of.  XLines almost always do; the slices of a line that
do not (they start inside a slice and end after it) go to extra threads next to it, named
``"<line> (overlap k)"``, chosen so that every thread nests.  Ids are unique across the whole
trace and never shared by a process and a thread (a reader may take a thread whose tid is a
pid for that process's main thread): pids are 1..P, tids P+1..P+T in display order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._native.kernels import nest_loose, nesting_order

__all__ = ["TrackLayout", "track_layout"]


@dataclass
class TrackLayout:
    """Where each slice is drawn: ``track`` (index into the thread tables) per slice."""

    track: np.ndarray  # int32 thread of each slice
    group: np.ndarray  # int32 (line, lane) of each slice, increasing along the events' order
    thread_pid: np.ndarray  # int64 per thread
    thread_tid: np.ndarray  # int64 per thread
    thread_names: list[str]
    process_pid: np.ndarray  # int64 per process
    process_names: list[str]

    def thread_process(self) -> np.ndarray:
        """Process index of each thread."""
        return np.searchsorted(self.process_pid, self.thread_pid)


def _greedy_lanes(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Lane of each slice (given in nesting order) such that the slices of every lane nest."""
    lanes: list[list[int]] = []  # open slice ends per lane, innermost last
    out = np.empty(len(start), np.int64)
    for i, (s, e) in enumerate(zip(start.tolist(), end.tolist())):
        for k, stack in enumerate(lanes):
            while stack and stack[-1] <= s:
                stack.pop()
            if not stack or stack[-1] >= e:
                stack.append(e)
                out[i] = k
                break
        else:
            out[i] = len(lanes)
            lanes.append([e])
    return out


def _lanes(line: np.ndarray, start: np.ndarray, duration: np.ndarray) -> np.ndarray:
    """Lane of each slice on its line (0 unless the line's slices do not nest)."""
    lane = np.zeros(len(line), np.int64)
    if not len(line):
        return lane
    parent, _, _ = nest_loose(line, start, duration)
    end = start + duration
    bad = (parent >= 0) & (end > end[np.maximum(parent, 0)])
    if not bad.any():
        return lane
    order = nesting_order(line, start, duration)
    for one in np.unique(line[bad]).tolist():
        rows = order[line[order] == one]
        lane[rows] = _greedy_lanes(start[rows], end[rows])
    return lane


def track_layout(content) -> TrackLayout:
    """The processes and threads of ``content`` (a TraceContent) and each slice's thread."""
    lane = _lanes(content.line, content.start_ps, content.duration_ps)
    n_lines = len(content.line_names)
    # threads: (line, lane) pairs in use, ordered by process, steps lines first, line, lane
    key = content.line.astype(np.int64) * (int(lane.max()) + 1 if len(lane) else 1) + lane
    used, track = np.unique(key, return_inverse=True)
    lanes_per = int(lane.max()) + 1 if len(lane) else 1
    t_line, t_lane = used // lanes_per, used % lanes_per
    is_steps = np.arange(max(n_lines, 1)) >= content.n_event_lines
    process = content.line_process[t_line] if n_lines else np.empty(0, np.int32)
    display = np.lexsort((t_lane, t_line, ~is_steps[t_line], process)) if len(used) \
        else np.empty(0, np.int64)
    rank = np.empty(len(used), np.int64)
    rank[display] = np.arange(len(used))
    names = [content.line_names[li] if la == 0 else f"{content.line_names[li]} (overlap {la})"
             for li, la in zip(t_line[display].tolist(), t_lane[display].tolist())]
    return TrackLayout(
        track=rank[track.reshape(-1)].astype(np.int32), group=track.reshape(-1).astype(np.int32),
        thread_pid=process[display].astype(np.int64) + 1,
        thread_tid=np.arange(1, len(used) + 1, dtype=np.int64) + len(content.process_names),
        thread_names=names,
        process_pid=np.arange(1, len(content.process_names) + 1, dtype=np.int64),
        process_names=list(content.process_names))
