"""Compiled op-stack walk for self times of TensorFlow ops on each thread."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def op_stack_walk(line, ts, is_end, instance, key, type_code, occ, time_ps, self_ps,
                  first_type, line_op_ps, line_first, line_last):
    """Walk begin/end activities sorted by (line, time, insertion order).

    An end pops the stack down to its own begin; entries popped on the way are dropped (a
    partially overlapping op is lost, as in the reference).  Records occurrences, time and self
    time per op ``key``; per line the summed self time and the first/last activity times.
    ``first_type[key]`` is the ``type_code`` of the first recorded instance that has one (>= 0).
    """
    n = ts.shape[0]
    stack_inst = np.empty(n, dtype=np.int64)
    stack_start = np.empty(n, dtype=np.int64)
    stack_child = np.empty(n, dtype=np.int64)
    top = -1
    current = -1
    for k in range(n):
        ln = line[k]
        if ln != current:
            current = ln
            top = -1
            line_first[ln] = ts[k]
        line_last[ln] = ts[k]
        if not is_end[k]:
            top += 1
            stack_inst[top] = instance[k]
            stack_start[top] = ts[k]
            stack_child[top] = 0
            continue
        found = -1
        while top >= 0:
            t = top
            top -= 1
            if stack_inst[t] == instance[k]:
                found = t
                break
        if found < 0:
            continue
        dur = ts[k] - stack_start[found]
        self_time = dur - stack_child[found]
        op = key[k]
        occ[op] += 1
        time_ps[op] += dur
        self_ps[op] += self_time
        line_op_ps[ln] += self_time
        if first_type[op] < 0 and type_code[k] >= 0:
            first_type[op] = type_code[k]
        if top >= 0:
            stack_child[top] += dur
