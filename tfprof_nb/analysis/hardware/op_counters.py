"""``op_counters``: each op's hardware counters during its executions.

A sample of ``counters`` at time t belongs to an execution [start, start + duration] of an op
on the same device when start <= t <= end (both included); an op's figures are the mean,
median and max of the samples inside all its executions (a sample inside two executions of
one op counts twice), with ``samples`` their number.  Below :data:`MIN_SAMPLES` samples the
figures are NaN: a kernel shorter than the sampling period holds no sample of its own, and
another kernel's samples are never passed off as its.

The executions (their names as the op tables give them):

* ``hlo_op``: XLA ops on the TPUs' XLA Ops lines (``hlo_stats``' names and modules), and the
  GPU kernels of XLA ops (their ``hlo_op`` and ``hlo_module`` stats);
* ``kernel``: GPU kernels (the events ``kernel_stats`` counts, by kernel name);
* ``tf_op``: TensorFlow ops on the host plane (events named ``name:Type``), with the host's
  samples.

Columns: host, device, kind, program (XLA module or ""), op, counter, unit, samples, mean,
median, max; one row per (host, device, kind, program, op, counter) with at least one sample.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import HOST_PLANE, TPU_PLANE_PREFIX
from ..gpu.kernel_stats import kernel_rows
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..trace.tf_ops import UNKNOWN, parse_tf_op
from ..xla.tpu import op_executions
from .counters import device_of_plane

__all__ = ["ANALYSES", "MIN_SAMPLES", "OP_COUNTER_COLUMNS", "host_op_counters",
           "combine_op_counters", "samples_in_executions"]

OP_COUNTER_COLUMNS = ["host", "device", "kind", "program", "op", "counter", "unit", "samples",
                      "mean", "median", "max"]
MIN_SAMPLES = 5
_KEY = ["device", "kind", "program", "op"]


def samples_in_executions(t: np.ndarray, begin: np.ndarray, end: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(execution, sample) index pairs of every sample time in ``t`` (sorted) inside an
    execution [begin, end] (both included), without a loop over executions."""
    lo = np.searchsorted(t, begin, side="left")
    hi = np.searchsorted(t, end, side="right")
    n = np.maximum(hi - lo, 0)
    execution = np.repeat(np.arange(len(begin)), n)
    first = np.repeat(lo - (np.cumsum(n) - n), n)
    return execution, first + np.arange(int(n.sum()))


def _frame(kind: str, device, program, op, begin, end) -> pd.DataFrame:
    n = len(begin)
    return pd.DataFrame({"device": np.broadcast_to(np.asarray(device, object), n),
                         "kind": kind, "program": np.broadcast_to(np.asarray(program, object), n),
                         "op": np.asarray(op, object), "begin": np.asarray(begin, np.int64),
                         "end": np.asarray(end, np.int64)})


def _tpu_ops(hd: HostData) -> pd.DataFrame:
    if not any(p.startswith(TPU_PLANE_PREFIX) for p in hd.plane_names):
        return _frame("hlo_op", [], [], [], [], [])
    ex = op_executions(hd)
    planes = np.array([device_of_plane(p) for p in hd.plane_names], dtype=object)
    return _frame("hlo_op", planes[ex.plane.to_numpy(np.int64)], ex.module.to_numpy(object),
                  ex.op.to_numpy(object), ex.begin_ps, ex.end_ps)


def _gpu_ops(hd: HostData) -> list[pd.DataFrame]:
    """The GPU kernels, and those of them that run an XLA op as that op."""
    rows = kernel_rows(hd)
    device = np.array([device_of_plane(p) for p in hd.plane_of(rows)], dtype=object)
    begin, end = hd.begin[rows], hd.end_of(rows)
    kernels = _frame("kernel", device, "", np.asarray(hd.names, object)[hd.name_code[rows]],
                     begin, end)
    hlo, module = hd.str_stat("hlo_op"), hd.str_stat("hlo_module")
    code, has = hlo.lookup(rows)
    mcode, has_m = module.lookup(rows)
    op = np.array([str(v).split("::")[-1] for v in hlo.table], dtype=object)[code[has]] \
        if has.any() else np.empty(0, object)
    program = np.where(has_m[has], module.text(np.where(has_m, mcode, -1))[has], "") \
        if has.any() else np.empty(0, object)
    return [kernels, _frame("hlo_op", device[has], program, op, begin[has], end[has])]


def _tf_ops(hd: HostData) -> pd.DataFrame:
    parsed = [parse_tf_op(str(n)) for n in hd.names]
    is_op = np.array([p[0] != UNKNOWN for p in parsed], dtype=bool)
    lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy()) & ~hd.derived_lines()
    rows = hd.rows_on_lines(lines, is_op).astype(np.int64) if len(is_op) else \
        np.empty(0, np.int64)
    names = np.array([p[1] for p in parsed], dtype=object)[hd.name_code[rows]]
    return _frame("tf_op", "host", "", names, hd.begin[rows], hd.end_of(rows))


def _figures(ops: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """One row per op and counter of its device with samples inside its executions."""
    out = []
    for (device, counter, unit), s in samples.groupby(["device", "counter", "unit"], sort=True):
        ex = ops[ops.device == device]
        if not len(ex):
            continue
        s = s.sort_values("t", kind="stable")
        e, k = samples_in_executions(s.t.to_numpy(), ex.begin.to_numpy(), ex.end.to_numpy())
        if not len(e):
            continue
        keys = ex[_KEY].iloc[e].reset_index(drop=True)
        keys["value"] = s.value.to_numpy()[k]
        fig = keys.groupby(_KEY, sort=True)["value"].agg(["size", "mean", "median", "max"])
        out.append(fig.reset_index().assign(counter=counter, unit=unit))
    if not out:
        return pd.DataFrame(columns=OP_COUNTER_COLUMNS[1:])
    fig = pd.concat(out, ignore_index=True).rename(columns={"size": "samples"})
    few = fig.samples < MIN_SAMPLES
    fig.loc[few, ["mean", "median", "max"]] = np.nan
    return fig[OP_COUNTER_COLUMNS[1:]]


def host_op_counters(hd: HostData, shift_ps: int = 0, counters: dict | None = None
                     ) -> pd.DataFrame:
    """One host's op counters (see the module doc); ``counters``: its ``counters`` partial."""
    rows = None if counters is None else counters["rows"]
    if rows is None or not len(rows):
        return pd.DataFrame(columns=OP_COUNTER_COLUMNS[1:])
    samples = pd.DataFrame({"device": rows.device.to_numpy(object),
                            "counter": rows.counter.to_numpy(object),
                            "unit": rows.unit.to_numpy(object),
                            "t": rows.time_ps.to_numpy(np.int64) - shift_ps,
                            "value": rows.value.to_numpy(np.float64)})
    devices = set(samples.device)
    parts = [_tpu_ops(hd)] if any(d.startswith("TPU") for d in devices) else []
    parts += _gpu_ops(hd) if any(d.startswith("GPU") for d in devices) else []
    parts += [_tf_ops(hd)] if "host" in devices else []
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=OP_COUNTER_COLUMNS[1:])
    return _figures(pd.concat(parts, ignore_index=True), samples)


def combine_op_counters(parts: dict) -> pd.DataFrame:
    frames = [p.assign(host=h) for h, p in parts.items() if len(p)]
    if not frames:
        out = pd.DataFrame(columns=OP_COUNTER_COLUMNS)
    else:
        out = pd.concat(frames, ignore_index=True)[OP_COUNTER_COLUMNS]
    out["host"] = pd.Categorical(out["host"], categories=list(parts))
    out["samples"] = out["samples"].astype(np.int64)
    for c in ("mean", "median", "max"):
        out[c] = out[c].astype(np.float64)
    return out.reset_index(drop=True)


ANALYSES = (Analysis("op_counters", host=host_op_counters, combine=combine_op_counters,
                     host_needs=("counters",)),)
