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
inside the steps.  On a pod each host's steps take its own events, and the rows of a step
number are summed over the hosts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import GPU_PLANE_PREFIX, HOST_PLANE
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..trace.nested_times import self_times, thunk_ends
from ..trace.tf_ops import UNKNOWN, parse_tf_op

__all__ = ["ANALYSES", "OP_STEP_COLUMNS", "host_op_step_times", "combine_op_step_times"]

OP_STEP_COLUMNS = ["side", "program_id", "op", "step", "self_ps"]


def _empty() -> pd.DataFrame:
    return pd.DataFrame({"side": pd.Series(dtype=object), "program_id": pd.Series(dtype="int64"),
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
        codes = [unique[o + p.codes] for o, p in zip(offsets, parts)]
        return _Ops(np.asarray(first, dtype=object), np.concatenate(codes).astype(np.int64))


def _xla_rows(hd: HostData) -> tuple[np.ndarray, "_Ops", np.ndarray, np.ndarray]:
    """(rows, op names, program ids, on GPU) of the XLA op events."""
    hlo = hd.str_stat("hlo_op")
    if not len(hlo):
        return (np.empty(0, np.int64), _Ops(np.empty(0, object), np.empty(0, np.int64)),
                np.empty(0, np.int64), np.empty(0, bool))
    plane = hd.plane_of(hlo.rows)
    on_gpu = np.array([str(p).startswith(GPU_PLANE_PREFIX) for p in plane], dtype=bool)
    live = ~hd.derived_line_mask()[hlo.rows]
    on_host = (plane == HOST_PLANE) & live & ~hd.int_stat("correlation_id").lookup(hlo.rows)[1]
    keep = (on_gpu & live) | (on_host & ~(on_gpu & live).any())
    rows = hlo.rows[keep].astype(np.int64)
    names = np.array([str(v).split("::")[-1] for v in hlo.table], dtype=object)
    pid, has = hd.int_stat("program_id").lookup(rows)
    return rows, _Ops(names, hlo.values[keep]), np.where(has, pid, -1), on_gpu[keep]


def _tf_rows(hd: HostData, taken: np.ndarray) -> tuple[np.ndarray, "_Ops", np.ndarray]:
    """(rows, op names, on GPU) of the TensorFlow op events (rows in ``taken`` left out)."""
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
    plane = hd.plane_of(rows2) if len(rows2) else np.empty(0, object)
    gpu2 = np.array([str(p).startswith(GPU_PLANE_PREFIX) for p in plane], dtype=bool)
    ok2 = valid & (gpu2 | host_lines[hd.space.events.line[rows2]]) & \
        ~hd.derived_line_mask()[rows2] & ~np.isin(rows2, rows0)
    rows = np.concatenate([rows0, rows2[ok2]])
    ops = _Ops.concat([ops0, ops2.take(ok2)])
    gpu = np.concatenate([np.zeros(len(rows0), bool), gpu2[ok2]])
    keep = ~np.isin(rows, taken)
    return rows[keep], ops.take(keep), gpu[keep]


def _step_of(hd_begin: np.ndarray, steps: pd.DataFrame, shift_ps: int) -> np.ndarray:
    """The step number of each start (host axis), -1 outside every step."""
    begin = np.rint(steps.start_us.to_numpy(dtype=float) * 1e6 - shift_ps).astype(np.int64)
    end = begin + np.rint(steps.duration_ms.to_numpy(dtype=float) * 1e9).astype(np.int64)
    order = np.argsort(begin, kind="stable")
    begin, end = begin[order], end[order]
    number = np.asarray(steps.index, dtype=np.int64)[order]
    pos = np.searchsorted(begin, hd_begin, side="right") - 1
    inside = (pos >= 0) & (hd_begin < end[np.maximum(pos, 0)])
    return np.where(inside, number[np.maximum(pos, 0)], -1)


def host_op_step_times(hd: HostData, shift_ps: int = 0,
                       steps: pd.DataFrame | None = None) -> pd.DataFrame:
    """OP_STEP_COLUMNS of one host: each op's self time (ps) in each of its steps."""
    if steps is None or not len(steps) or not len(hd):
        return _empty()
    x_rows, x_ops, x_pid, x_gpu = _xla_rows(hd)
    t_rows, t_ops, t_gpu = _tf_rows(hd, x_rows)
    rows = np.concatenate([x_rows, t_rows])
    if not len(rows):
        return _empty()
    total = np.zeros(len(hd), dtype=np.int64)
    total[rows] = thunk_ends(hd, rows) - hd.begin[rows]
    gpu = np.concatenate([x_gpu, t_gpu])
    self_ps = np.where(gpu, total[rows], 0)
    cpu = ~gpu
    if cpu.any():
        self_ps[cpu] = self_times(hd, rows[cpu], total[rows[cpu]])
    ops = _Ops.concat([x_ops, t_ops])
    device = np.concatenate([np.ones(len(x_rows), bool), t_gpu])
    frame = pd.DataFrame({
        "side": device, "program_id": np.concatenate([x_pid, np.full(len(t_rows), -1)])
        .astype(np.int64), "op": ops.codes,
        "step": _step_of(hd.begin[rows], steps, shift_ps), "self_ps": self_ps})
    frame = frame[frame.step >= 0]
    out = frame.groupby(["side", "program_id", "op", "step"], sort=False, as_index=False) \
        .self_ps.sum()  # (on codes: the names are set on the groups only)
    return out.assign(side=np.where(out.side.to_numpy(), "Device", "Host"),
                      op=pd.Series(ops.table[out.op.to_numpy()], dtype="str",
                                   index=out.index))[OP_STEP_COLUMNS]


def combine_op_step_times(parts: dict) -> pd.DataFrame:
    """OP_STEP_COLUMNS of every host, a step number's rows summed over the hosts."""
    tables = [p for p in parts.values() if len(p)]
    if not tables:
        return _empty()
    out = pd.concat(tables, ignore_index=True)
    return out.groupby(["side", "program_id", "op", "step"], sort=False, as_index=False) \
        .self_ps.sum()[OP_STEP_COLUMNS]


ANALYSES = (Analysis("op_step_times", host=host_op_step_times, combine=combine_op_step_times,
                     host_needs=("steps",), host_cost=0.5),)
