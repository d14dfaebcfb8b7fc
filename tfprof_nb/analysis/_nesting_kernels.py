"""Compiled kernels for nesting events by time on each line (thread or stream)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def is_nesting_order(line, start, duration) -> bool:
    """Whether events are ordered by (line, start, longest first) already."""
    for i in range(1, line.shape[0]):
        if line[i] < line[i - 1]:
            return False
        if line[i] == line[i - 1]:
            if start[i] < start[i - 1]:
                return False
            if start[i] == start[i - 1] and duration[i] > duration[i - 1]:
                return False
    return True


@njit(cache=True, nogil=True)
def nest(order, line, start, duration, parent, depth, child_ps):
    """Walk events in ``order`` (by line, start, longest first) keeping a stack of open events.

    An event's parent is the innermost open event on its line that ends after it starts.
    Writes ``parent`` (-1 for roots) and ``depth``, and adds each event's duration, clipped to
    its parent's end, to the parent's ``child_ps`` (so self time = duration - child_ps).
    """
    n = order.shape[0]
    stack = np.empty(n, dtype=np.int64)
    top = -1
    current_line = -1
    for k in range(n):
        i = order[k]
        if line[i] != current_line:
            current_line = line[i]
            top = -1
        s = start[i]
        while top >= 0 and start[stack[top]] + duration[stack[top]] <= s:
            top -= 1
        if top >= 0:
            p = stack[top]
            parent[i] = p
            depth[i] = top + 1
            end = s + duration[i]
            p_end = start[p] + duration[p]
            child_ps[p] += (end if end < p_end else p_end) - s
        else:
            parent[i] = -1
            depth[i] = 0
        top += 1
        stack[top] = i


@njit(cache=True, nogil=True)
def merge_nesting_order(n_first, extra, line, start, duration):
    """Merge rows 0..n_first-1 (already in nesting order) with the rows ``extra`` (sorted the
    same way) into one order by (line, start, longest first); the first run wins ties."""
    n = n_first + extra.shape[0]
    out = np.empty(n, dtype=np.int64)
    i = 0
    j = 0
    for k in range(n):
        take_first = False
        if j >= extra.shape[0]:
            take_first = True
        elif i < n_first:
            b = extra[j]
            if line[i] != line[b]:
                take_first = line[i] < line[b]
            elif start[i] != start[b]:
                take_first = start[i] < start[b]
            else:
                take_first = duration[i] >= duration[b]
        if take_first:
            out[k] = i
            i += 1
        else:
            out[k] = extra[j]
            j += 1
    return out
