"""Each op's self time in each step: the per-step values ``tp.compare`` judges ops by.

One row per (side, program, op, step) of the events that start inside a step's interval:

* XLA ops (``program_id`` >= 0, ``side`` "Device"): the events carrying an ``hlo_op`` stat,
  keyed by program and instruction name (its last ``::`` part), as ``hlo_stats`` keys them:
  XLA:CPU thunks on ``/host:CPU`` (their ``end: <op>`` completion event ends them where it
  is later) and kernels on GPU stream lines; host events that launch device work (a
  ``correlation_id``, or any hlo_op event on a host that has GPU kernels of XLA) are not ops;
* TensorFlow ops (``program_id`` -1): host events named ``name:Type`` (and tf.data
  iterators) or carrying a ``tf_op`` stat (``side`` "Host"), GPU kernels with a ``tf_op`` and
  no ``hlo_op`` (``side`` "Device"), keyed by op name as ``op_stats`` keys them.

Self time is an event's time minus that of the ops nested in it on its thread (GPU kernels
do not nest).  Events outside every step are left out, so an op's steps sum to its time
inside the steps.  On a pod each host's steps take its own events, and each host keeps its
rows (``host``): hosts that train apart number their steps apart, so one step number's rows
of two hosts are unrelated steps (:mod:`..steps.per_step`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import GPU_PLANE_PREFIX, HOST_PLANE
from ..critical.text_columns import text_column
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..trace.nested_times import self_times, thunk_ends
from ..trace.tf_ops import UNKNOWN, parse_tf_op
from .first_seen_sums import codes_of, first_seen_sums

__all__ = ["ANALYSES", "OP_STEP_COLUMNS", "host_op_step_times", "combine_op_step_times"]

OP_STEP_COLUMNS = ["host", "side", "program_id", "op", "step", "self_ps"]
_SIDES = np.array(["Host", "Device"], dtype=object)


def _empty() -> pd.DataFrame:
    return pd.DataFrame({"host": pd.Series(dtype=object), "side": pd.Series(dtype=object),
                         "program_id": pd.Series(dtype="int64"),
                         "op": pd.Series(dtype=object), "step": pd.Series(dtype="int64"),
                         "self_ps": pd.Series(dtype="int64")})


class _Ops:
    """Op names as codes into a table of names (one name may have several codes): grouping
    on the codes, never on a string per event."""

    def __init__(self, table: np.ndarray, codes: np.ndarray):
        self.table, self.codes = table, np.asarray(codes, dtype=np.int64)

    def take(self, which: np.ndarray) -> "_Ops":
        return _Ops(self.table, self.codes[which])

    @staticmethod
    def concat(parts: list) -> "_Ops":
        """One table for ``parts``' names, each name once (its first code)."""
        table = np.concatenate([p.table for p in parts]) if parts else np.empty(0, object)
        unique, first = pd.factorize(pd.Series(table, dtype=object), use_na_sentinel=False)
        offsets = np.cumsum([0] + [len(p.table) for p in parts])
        codes = [unique[o:o + len(p.table)][p.codes] for o, p in zip(offsets, parts)]
        return _Ops(np.asarray(first, dtype=object), _cat(codes).astype(np.int64, copy=False))


def _cat(parts: list) -> np.ndarray:
    """``np.concatenate(parts)``, without a copy where one part holds every entry."""
    full = [p for p in parts if len(p)]
    if len(full) != 1:
        return np.concatenate(parts)
    return full[0].astype(np.result_type(*parts), copy=False)


def _on_planes(hd: HostData, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(on a GPU plane, on the host plane, on a line the profiler derives) of each event
    ``rows``: one test per plane or line, looked up per event."""
    planes = hd.plane_names
    gpu = np.array([str(p).startswith(GPU_PLANE_PREFIX) for p in planes], dtype=bool)
    host = np.array([p == HOST_PLANE for p in planes], dtype=bool)
    line = hd.space.events.line[rows]
    plane = hd.space.line_plane[line]
    return gpu[plane], host[plane], hd.derived_lines()[line]


def _in_sorted(rows: np.ndarray, sorted_rows: np.ndarray) -> np.ndarray:
    """bool per entry of ``rows``: whether it is in ``sorted_rows`` (increasing)."""
    if not len(sorted_rows):
        return np.zeros(len(rows), bool)
    at = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
    return sorted_rows[at] == rows


def _xla_rows(hd: HostData) -> tuple[np.ndarray, "_Ops", np.ndarray, np.ndarray]:
    """(rows, op names, program ids, on GPU) of the XLA op events (rows increasing)."""
    hlo = hd.str_stat("hlo_op")
    if not len(hlo):
        return (np.empty(0, np.int64), _Ops(np.empty(0, object), np.empty(0, np.int64)),
                np.empty(0, np.int64), np.empty(0, bool))
    on_gpu, on_host, derived = _on_planes(hd, hlo.rows)
    live = ~derived
    on_host = on_host & live & ~hd.int_stat("correlation_id").lookup(hlo.rows)[1]
    keep = (on_gpu & live) | (on_host & ~(on_gpu & live).any())
    rows = hlo.rows[keep].astype(np.int64)
    names = np.array([str(v).split("::")[-1] for v in hlo.table], dtype=object)
    pid, has = hd.int_stat("program_id").lookup(rows)
    return rows, _Ops(names, hlo.values[keep]), np.where(has, pid, -1), on_gpu[keep]


def _tf_rows(hd: HostData, taken: np.ndarray) -> tuple[np.ndarray, "_Ops", np.ndarray]:
    """(rows, op names, on GPU) of the TensorFlow op events (rows in ``taken``, increasing,
    left out)."""
    parsed = [parse_tf_op(str(n)) for n in hd.names]
    is_op = np.array([p[0] != UNKNOWN for p in parsed], dtype=bool)
    host_lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy()) & ~hd.derived_lines()
    rows0 = hd.rows_on_lines(host_lines, is_op).astype(np.int64)
    ops0 = _Ops(np.array([p[1] for p in parsed], dtype=object), hd.name_code[rows0])
    tf_op = hd.str_stat("tf_op")
    rows2 = tf_op.rows.astype(np.int64)
    parsed2 = [parse_tf_op(str(v)) for v in tf_op.table]
    ops2 = _Ops(np.array([p[1] if p[0] != UNKNOWN else str(v)
                          for p, v in zip(parsed2, tf_op.table)], dtype=object),
                tf_op.values if len(tf_op) else np.empty(0, np.int64))
    valid = np.array([bool(v) for v in tf_op.table], dtype=bool)[tf_op.values] \
        if len(tf_op) else np.empty(0, bool)
    gpu2, _, derived2 = _on_planes(hd, rows2)
    ok2 = valid & (gpu2 | host_lines[hd.space.events.line[rows2]]) & ~derived2 & \
        ~_in_sorted(rows2, rows0)
    rows = _cat([rows0, rows2[ok2]])
    ops = _Ops.concat([ops0, ops2.take(ok2)])
    gpu = _cat([np.zeros(len(rows0), bool), gpu2[ok2]])
    if not len(taken):
        return rows, ops, gpu
    keep = ~_in_sorted(rows, taken)
    return rows[keep], ops.take(keep), gpu[keep]


def _step_at(hd_begin: np.ndarray, steps: pd.DataFrame,
             shift_ps: int) -> tuple[np.ndarray, np.ndarray]:
    """(position of each start's step in the step numbers, -1 outside every step; the step
    numbers) on the host axis."""
    begin = np.rint(steps.start_us.to_numpy(dtype=float) * 1e6 - shift_ps).astype(np.int64)
    end = begin + np.rint(steps.duration_ms.to_numpy(dtype=float) * 1e9).astype(np.int64)
    order = np.argsort(begin, kind="stable")
    before = np.iinfo(np.int64).min  # (position 0: before every step, which none is inside)
    begin, end = np.append(before, begin[order]), np.append(before, end[order])
    number = np.asarray(steps.index, dtype=np.int64)[order]
    pos = np.searchsorted(begin, hd_begin, side="right")
    pos -= 1  # (the last step begun)
    outside = hd_begin >= end[pos]
    pos -= 1
    pos[outside] = -1
    return pos, number


def _self_ps(hd: HostData, rows: np.ndarray, begin: np.ndarray,
             gpu: np.ndarray) -> np.ndarray:
    """Self time of each op event ``rows``: all its time for a GPU kernel."""
    total = thunk_ends(hd, rows) - begin
    if not gpu.any():
        return self_times(hd, rows, total)
    self_ps = total.copy()
    if not gpu.all():
        self_ps[~gpu] = self_times(hd, rows[~gpu], total[~gpu])
    return self_ps


def host_op_step_times(hd: HostData, shift_ps: int = 0,
                       steps: pd.DataFrame | None = None) -> pd.DataFrame:
    """OP_STEP_COLUMNS of one host: each op's self time (ps) in each of its steps."""
    if steps is None or not len(steps) or not len(hd):
        return _empty()
    x_rows, x_ops, x_pid, x_gpu = _xla_rows(hd)
    t_rows, t_ops, t_gpu = _tf_rows(hd, x_rows)
    rows = _cat([x_rows, t_rows])
    begin = hd.begin[rows]
    at, number = _step_at(begin, steps, shift_ps)
    inside = at >= 0
    if not inside.any():
        return _empty()
    self_ps = _self_ps(hd, rows, begin, _cat([x_gpu, t_gpu]))
    kept = slice(None) if inside.all() else np.flatnonzero(inside)
    device = _cat([np.ones(len(x_rows), bool), t_gpu])[kept]
    pid = _cat([x_pid.astype(np.int64), np.full(len(t_rows), -1, np.int64)])[kept]
    ops = _Ops.concat([x_ops, t_ops])
    op, at = ops.codes[kept], at[kept]
    step, n_steps = codes_of(number)  # (a step number given twice is one step)
    first, sums = first_seen_sums(  # (the step first: a step's rows have keys close by)
        [(step[at], n_steps), (op, len(ops.table)), codes_of(pid), codes_of(device)],
        self_ps[kept])
    return pd.DataFrame({
        "side": text_column(_SIDES, device[first].view(np.int8)),
        "program_id": pid[first], "op": text_column(ops.table, op[first]),
        "step": number[at[first]], "self_ps": sums}, copy=False)


def combine_op_step_times(parts: dict) -> pd.DataFrame:
    """OP_STEP_COLUMNS of every host, each host's rows its own (a host's rows have one key
    each already)."""
    tables = [p.assign(host=host) for host, p in parts.items() if len(p)]
    if not tables:
        return _empty()
    out = tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)
    return out.reset_index(drop=True)[OP_STEP_COLUMNS]


ANALYSES = (Analysis("op_step_times", host=host_op_step_times, combine=combine_op_step_times,
                     host_needs=("steps",), host_cost=0.5),)
