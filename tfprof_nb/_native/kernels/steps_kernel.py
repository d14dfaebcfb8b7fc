"""Step-time breakdown, per-step rows of a host and the TensorFlow op stack walk."""

from __future__ import annotations

import numpy as np

from .. import lib
from ._calls import N_TYPES, _c, _p, _threads, check
from .order_kernel import _codes

__all__ = ["step_breakdown", "op_stack_walk", "op_walk_rows", "host_step_rows"]


def step_breakdown(rows, kind, group, step_of_group, events: tuple, step_begin, step_end,
                   threads: int | None = None):
    """(time per step and type int64 (n_steps, N_TYPES), types present (bool)) of the event
    ``rows`` typed ``kind``: row r belongs to step step_of_group[group[r]] and reads its
    (begin, duration) from ``events``.  The highest type code wins where events overlap."""
    rows, kind, group = _c(rows, np.int32), _c(kind, np.int8), _c(group, np.int32)
    step_of_group = _c(step_of_group, np.int32)
    begin, dur = _c(events[0], np.int64), _c(events[1], np.int64)
    step_begin, step_end = _c(step_begin, np.int64), _c(step_end, np.int64)
    n_steps = len(step_begin)
    out = np.zeros((n_steps, N_TYPES), np.int64)
    present = np.zeros((n_steps, N_TYPES), np.uint8)
    check(lib().tfp_step_breakdown(len(rows), _p(rows), _p(kind), _p(group), _p(step_of_group),
                                   len(step_of_group), _p(begin), _p(dur), n_steps,
                                   _p(step_begin), _p(step_end), _p(out), _p(present),
                                   _threads(threads)))
    return out, present.astype(bool)


def _op_outputs(n_keys: int, n_lines: int) -> list:
    return [np.zeros(n_keys, np.int64), np.zeros(n_keys, np.int64), np.zeros(n_keys, np.int64),
            np.full(n_keys, -1, np.int32), np.zeros(n_lines, np.int64),
            np.full(n_lines, np.iinfo(np.int64).min, np.int64), np.zeros(n_lines, np.int64)]


def op_stack_walk(act, inst_line, inst_begin, inst_end, inst_key, inst_type, n_keys, n_lines):
    """Occurrences, time and self time per op key, first type per key, and per line the op
    self time and first/last activity times (INT64_MIN first: a line without ops) of
    activities sorted by (line, time, insertion order) (see tfp_op_stack_walk)."""
    act = _c(act, np.int32)
    inst_line, inst_key, inst_type = (_c(a, np.int32) for a in (inst_line, inst_key, inst_type))
    inst_begin, inst_end = _c(inst_begin, np.int64), _c(inst_end, np.int64)
    out = _op_outputs(n_keys, n_lines)
    check(lib().tfp_op_stack_walk(_p(act), len(act), _p(inst_line), _p(inst_begin),
                                  _p(inst_end), _p(inst_key), _p(inst_type),
                                  *(_p(a) for a in out)))
    return tuple(out)


def op_walk_rows(rows, line, begin, dur, inst_key, inst_type, n_keys, n_lines):
    """:func:`op_stack_walk` of instances at event ``rows`` (columns ``line``, ``begin``,
    ``dur`` of every event) without sorting their activities; None when the instances are not
    ordered by (line, begin) (then sort them and use op_stack_walk)."""
    rows, line = _c(rows, np.int32), _c(line, np.int32)
    begin, dur = _c(begin, np.int64), _c(dur, np.int64)
    inst_key, inst_type = _c(inst_key, np.int32), _c(inst_type, np.int32)
    out = _op_outputs(n_keys, n_lines)
    rc = check(lib().tfp_op_walk_rows(_p(rows), len(rows), _p(line), _p(begin), _p(dur),
                                      _p(inst_key), _p(inst_type), *(_p(a) for a in out)))
    return None if rc == 1 else tuple(out)


def host_step_rows(line, code, line_ok, group, explicit, not_compute, kind_of, flag_rows,
                   flag_bits, cap: int):
    """(work rows int32, their types int8, marker rows int32) of the events on ``line_ok``
    lines in a group (see tfp_host_step_rows); ``cap`` bounds both."""
    line, group = _c(line, np.int32), _c(group, np.int32)
    code, width = _codes(code)
    line_ok, explicit, not_compute = (_c(a, np.bool_) for a in (line_ok, explicit, not_compute))
    kind_of = _c(kind_of, np.int8)
    flag_rows, flag_bits = _c(flag_rows, np.int32), _c(flag_bits, np.uint8)
    rows, kinds = np.empty(cap, np.int32), np.empty(cap, np.int8)
    markers, counts = np.empty(cap, np.int32), np.zeros(2, np.int64)
    check(lib().tfp_host_step_rows(_p(line), _p(code), width, len(code), _p(line_ok), _p(group),
                                   _p(explicit), _p(not_compute), _p(kind_of), _p(flag_rows),
                                   _p(flag_bits), len(flag_rows), _p(rows), _p(kinds),
                                   _p(markers), _p(counts)))
    k, km = (int(x) for x in counts)
    return rows[:k], kinds[:k], markers[:km]
