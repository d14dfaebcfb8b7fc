"""Compiled sweep: per step, time covered by the highest-priority active event type."""

from __future__ import annotations

import numpy as np
from numba import njit

N_TYPES = 18  # event type codes 0..17 (see steps.EVENT_TYPES)


@njit(cache=True, nogil=True)
def breakdown(step_of, begin, end, type_rank, step_begin, step_end, out):
    """Add to ``out[step, type]`` the time of each elementary interval inside the step span
    that belongs to the highest-ranked event type active in it.

    Events must be sorted by step.  ``type_rank`` is the priority rank (0..N_TYPES-1, higher
    wins) of each event.  Boundaries at equal times: ends before starts.
    """
    n = step_of.shape[0]
    lo = 0
    while lo < n:
        s = step_of[lo]
        hi = lo
        while hi < n and step_of[hi] == s:
            hi += 1
        m = hi - lo
        times = np.empty(2 * m, dtype=np.int64)
        kinds = np.empty(2 * m, dtype=np.int64)  # 0 end, 1 start (ends first at ties)
        ranks = np.empty(2 * m, dtype=np.int64)
        for k in range(m):
            i = lo + k
            times[2 * k] = begin[i]
            kinds[2 * k] = 1
            ranks[2 * k] = type_rank[i]
            times[2 * k + 1] = end[i]
            kinds[2 * k + 1] = 0
            ranks[2 * k + 1] = type_rank[i]
        order = np.argsort(times * 2 + kinds, kind="mergesort")
        active = np.zeros(N_TYPES, dtype=np.int64)
        sb = step_begin[s]
        se = step_end[s]
        prev = times[order[0]]
        for k in range(2 * m):
            j = order[k]
            t = times[j]
            if t > prev:
                top = -1
                for r in range(N_TYPES - 1, -1, -1):
                    if active[r] > 0:
                        top = r
                        break
                if top >= 0:
                    a = prev if prev > sb else sb
                    b = t if t < se else se
                    if b > a:
                        out[s, top] += b - a
                prev = t
            if kinds[j] == 1:
                active[ranks[j]] += 1
            else:
                active[ranks[j]] -= 1
        lo = hi
