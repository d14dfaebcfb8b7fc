"""Compiled kernels for event grouping: strict nesting, CSR graphs and group BFS."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def nest_strict(order, line, begin, end, skip, parent):
    """Parent of each event = innermost earlier event on its line that fully contains it.

    ``order`` sorts events by (line, begin, longest first).  Events with ``skip`` set (async
    events) get no parent and are never parents.  ``parent`` is -1 for roots.
    """
    n = order.shape[0]
    stack = np.empty(n, dtype=np.int64)
    top = -1
    current = -1
    for k in range(n):
        i = order[k]
        parent[i] = -1
        if line[i] != current:
            current = line[i]
            top = -1
        if skip[i]:
            continue
        while top >= 0:
            t = stack[top]
            if begin[t] <= begin[i] and end[i] <= end[t]:
                parent[i] = t
                break
            top -= 1
        top += 1
        stack[top] = i


@njit(cache=True, nogil=True)
def csr(src, dst, n):
    """Adjacency lists of the edges src -> dst as (offsets, targets), edges kept in order."""
    counts = np.zeros(n + 1, dtype=np.int64)
    for e in range(src.shape[0]):
        counts[src[e] + 1] += 1
    for i in range(n):
        counts[i + 1] += counts[i]
    fill = counts[:-1].copy()
    targets = np.empty(src.shape[0], dtype=np.int64)
    for e in range(src.shape[0]):
        s = src[e]
        targets[fill[s]] = dst[e]
        fill[s] += 1
    return counts, targets


@njit(cache=True, nogil=True)
def has_root_ancestor(r, level, is_root, root_level, par_off, par_tgt, seen, stamp):
    """Whether an ancestor of ``r`` (over all parent edges) is a root of the same level."""
    queue = np.empty(64, dtype=np.int64)
    head = 0
    tail = 0
    seen[r] = stamp
    for k in range(par_off[r], par_off[r + 1]):
        if tail == queue.shape[0]:
            queue = np.concatenate((queue, np.empty(queue.shape[0], dtype=np.int64)))
        queue[tail] = par_tgt[k]
        tail += 1
    while head < tail:
        v = queue[head]
        head += 1
        if seen[v] == stamp:
            continue
        seen[v] = stamp
        if is_root[v] and root_level[v] == level:
            return True
        for k in range(par_off[v], par_off[v + 1]):
            if tail == queue.shape[0]:
                queue = np.concatenate((queue, np.empty(queue.shape[0], dtype=np.int64)))
            queue[tail] = par_tgt[k]
            tail += 1
    return False


@njit(cache=True, nogil=True)
def assign_groups(roots, is_root, root_level, ch_off, ch_tgt, par_off, par_tgt, group,
                  root_of_group):
    """Give each root (in order) a new group unless it is grouped already or has a root
    ancestor of its level, then spread the group breadth-first to ungrouped descendants.
    Returns the number of groups; ``root_of_group[g]`` is the root event of group g."""
    n = group.shape[0]
    seen = np.zeros(n, dtype=np.int64)
    queue = np.empty(ch_tgt.shape[0] + 1, dtype=np.int64)  # each edge is followed at most once
    next_group = 0
    for k in range(roots.shape[0]):
        r = roots[k]
        if group[r] >= 0:
            continue
        if has_root_ancestor(r, root_level[r], is_root, root_level, par_off, par_tgt, seen,
                             k + 1):
            continue
        g = next_group
        next_group += 1
        root_of_group[g] = r
        group[r] = g
        head = 0
        tail = 0
        for j in range(ch_off[r], ch_off[r + 1]):
            queue[tail] = ch_tgt[j]
            tail += 1
        while head < tail:
            v = queue[head]
            head += 1
            if group[v] >= 0:
                continue
            group[v] = g
            for j in range(ch_off[v], ch_off[v + 1]):
                queue[tail] = ch_tgt[j]
                tail += 1
    return next_group
