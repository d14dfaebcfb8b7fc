"""HLO stats: one row per HLO op of the XLA programs a profile ran (XProf's ``hlo_stats``).

The hosts' partials (:func:`.ops.host_xla_ops`) are summed per (device type, program, op)
by the ``xla`` unit (:mod:`.combined`; XProf sums devices too).  Times and occurrences are those of
the events; percentages are of the devices' total time (each GPU's span, idle included, and the
XLA:CPU thunks' span).  FLOPs and bytes are per execution (GPU: XLA's GPU cost analysis as
XProf runs it, :mod:`.gpu_cost`; XLA:CPU: our own model, :mod:`.hlo_cost`) times occurrences,
or the events' own ``flops``/``bytes_accessed`` stats where the model has nothing.  GPU
kernels of TensorFlow ops outside XLA are listed too (program 0, named ``op/kernel``), as
XProf does.

Every table carries ``attrs["reasons"]``: a list of sentences saying what is missing and why
(no HLO protos, a proto that does not parse, unknown device peaks, ...); rows whose op could
not be matched with an HLO proto have ``resolved`` False and empty instruction columns.
``attribution`` says how each row's events were tied to the op: their ``hlo_op`` stat
(``stat``), or, inside XLA command buffers, the kernel's name or its position in the
program's schedule (``name``, ``position``); ``unresolved``: a buffer's kernels that could not
be placed (:mod:`.command_buffers`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.unit import Analysis
from ..trace.tf_ops import parse_tf_op
from .command_buffers import ATTRIBUTION
from .device_peaks import ON_CHIP_MEMORIES, DevicePeaks, bound_by
from .tpu import MEMORY_COLUMNS
from .combined import XlaData
from .ops import program_id_array

__all__ = ["ANALYSES", "HLO_STATS_COLUMNS", "hlo_stats_table", "framework_metrics", "op_totals",
           "on_xla_cpu", "hbm_bytes", "on_chip_bytes"]

HLO_STATS_COLUMNS = [
    "rank", "device_type", "program_id", "module", "category", "hlo_op_name",
    "hlo_op_expression", "framework_op_name", "occurrences", "total_time_us", "avg_time_us",
    "total_self_time_us", "avg_self_time_us", "self_time_pct", "cumulative_self_time_pct",
    "flops", "normalized_flops", "memory_accessed_bytes", "model_flop_rate_flops_per_s",
    "normalized_flop_rate_flops_per_s", "memory_bw_bytes_per_s", "hbm_bw_bytes_per_s",
    "arithmetic_intensity_flops_per_byte", "bound_by"] + MEMORY_COLUMNS + [
    "source", "source_stack", "deduplicated_name", "resolved", "attribution"]


def _cost_columns(ops: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Total model FLOPs, normalized FLOPs and bytes of each op (NaN where unknown)."""
    occ = ops.occurrences.to_numpy(dtype=float)
    model = ops.flops.to_numpy(dtype=float)
    norm = ops.normalized_flops.to_numpy(dtype=float)
    nbytes = ops.bytes_accessed.to_numpy(dtype=float)
    ev_f = ops.event_flops.to_numpy(dtype=float)
    ev_b = ops.event_bytes.to_numpy(dtype=float)
    use_ev = ~(model > 0) & (ev_f > 0)
    model = np.where(use_ev, ev_f, model)
    norm = np.where(~(norm > 0) & (ev_f > 0), ev_f, norm)
    nbytes = np.where(~(nbytes > 0) & (ev_b > 0), ev_b, nbytes)
    return model * occ, norm * occ, nbytes * occ


def _peak_reasons(xla: XlaData, peaks: DevicePeaks) -> list[str]:
    if peaks.known or xla.ops.empty:
        return []
    why = getattr(xla, "peak_reasons", []) or [
        "no device peak FLOP rate and memory bandwidth in the profile (CPU or unknown device)"]
    return why + ["bound-by and utilisation need peaks: pass them with "
                  "prof.set_device_peaks(peak_flops_per_s=..., memory_bw_bytes_per_s=...)"]


def _ops_frame(xla: XlaData) -> pd.DataFrame:
    """One row per op (XLA ops, then TensorFlow kernels as program 0) with totals over
    occurrences, sorted by self time then name."""
    ops, tf = xla.ops, xla.tf_kernels
    flops, norm, nbytes = _cost_columns(ops) if len(ops) else (np.zeros(0),) * 3
    text = {c: ops[c].fillna("").to_numpy(dtype=object) for c in
            ("module", "category", "expression", "provenance", "source_stack",
             "deduplicated_name")}
    file = ops.source_file.fillna("").astype(str)
    occ = ops.occurrences.to_numpy(dtype=float)
    frame = pd.DataFrame({
        "device_type": ops.device_type.to_numpy(dtype=object),
        "program_id": ops.program_id.to_numpy(dtype=object), "module": text["module"],
        "category": text["category"], "hlo_op_name": ops.hlo_op.to_numpy(dtype=object),
        "hlo_op_expression": text["expression"], "framework_op_name": text["provenance"],
        "occurrences": ops.occurrences.to_numpy(dtype=np.int64),
        "time_ps": ops.time_ps.to_numpy(dtype=np.int64),
        "self_ps": ops.self_ps.to_numpy(dtype=np.int64),
        "flops": flops, "normalized_flops": norm, "memory_accessed_bytes": nbytes,
        **{c: ops[c].to_numpy(dtype=float) * occ for c in MEMORY_COLUMNS},
        "source": np.where(file != "", file + ":" + ops.source_line.fillna(-1).astype(int)
                           .astype(str), "").astype(object) if len(ops) else [],
        "source_stack": text["source_stack"], "deduplicated_name": text["deduplicated_name"],
        "resolved": ops.resolved.fillna(False).to_numpy(dtype=bool),
        "attribution": ops.attribution.fillna(ATTRIBUTION[0]).to_numpy(dtype=object)})
    if len(tf):
        frame = pd.concat([frame, pd.DataFrame({
            "device_type": "GPU", "program_id": pd.Series([0] * len(tf), dtype=object),
            "module": "", "category": tf.category.to_numpy(dtype=object),
            "hlo_op_name": tf.hlo_op.to_numpy(dtype=object),
            "hlo_op_expression": tf.hlo_op.to_numpy(dtype=object),
            "framework_op_name": tf.provenance.to_numpy(dtype=object),
            "occurrences": tf.occurrences.to_numpy(dtype=np.int64),
            "time_ps": tf.time_ps.to_numpy(dtype=np.int64),
            "self_ps": tf.time_ps.to_numpy(dtype=np.int64), "flops": np.nan,
            "normalized_flops": np.nan, "memory_accessed_bytes": np.nan,
            **{c: np.nan for c in MEMORY_COLUMNS}, "source": "", "source_stack": "",
            "deduplicated_name": "", "resolved": False, "attribution": ATTRIBUTION[0]})],
            ignore_index=True)
    frame = frame.sort_values(["self_ps", "hlo_op_name"], ascending=[False, True],
                              kind="stable").reset_index(drop=True)
    frame["program_id"] = program_id_array(frame.program_id)
    return frame


def hbm_bytes(frame: pd.DataFrame) -> pd.Series:
    """HBM bytes of each op: its memory breakdown's, else all its bytes (XProf's rule)."""
    return frame.hbm_bytes.where(frame.hbm_bytes.notna(), frame.memory_accessed_bytes)


def on_chip_bytes(frame: pd.DataFrame) -> dict:
    """{TPU on-chip memory: bytes of each op (0 where unknown)} for :func:`bound_by`."""
    return {name: frame[f"{attr}_bytes"].fillna(0).to_numpy(float)
            for name, attr in ON_CHIP_MEMORIES.items()}


def hlo_stats_table(xla: XlaData, peaks: DevicePeaks) -> pd.DataFrame:
    """The HLO stats table (HLO_STATS_COLUMNS), sorted by self time; ``attrs["reasons"]``."""
    frame = _ops_frame(xla)
    total = xla.total_ps
    occ = frame.occurrences.replace(0, np.nan)
    pct = frame.self_ps / total * 100 if total else frame.self_ps * 0.0
    hbm = hbm_bytes(frame)
    _, _, _, _, label = bound_by(frame.normalized_flops.fillna(0), hbm.fillna(0),
                                 frame.time_ps, peaks, on_chip=on_chip_bytes(frame))
    label = np.where((label == "HBM") & (frame.device_type == "CPU"), "Memory", label)
    t = frame.time_ps.to_numpy(dtype=float) / 1e12
    with np.errstate(divide="ignore", invalid="ignore"):
        def rate(x):
            return np.where(t > 0, x / t, np.nan)
        ai = np.where(frame.memory_accessed_bytes > 0,
                      frame.normalized_flops / frame.memory_accessed_bytes, np.nan)
        out = pd.DataFrame({
            "rank": np.arange(1, len(frame) + 1),
            **{c: frame[c] for c in ("device_type", "program_id", "module", "category",
                                     "hlo_op_name", "hlo_op_expression", "framework_op_name",
                                     "occurrences")},
            "total_time_us": frame.time_ps / 1e6,
            "avg_time_us": (frame.time_ps / occ / 1e6).fillna(0.0),
            "total_self_time_us": frame.self_ps / 1e6,
            "avg_self_time_us": (frame.self_ps / occ / 1e6).fillna(0.0),
            "self_time_pct": pct, "cumulative_self_time_pct": pct.cumsum(),
            "flops": frame.flops, "normalized_flops": frame.normalized_flops,
            "memory_accessed_bytes": frame.memory_accessed_bytes,
            "model_flop_rate_flops_per_s": rate(frame.flops),
            "normalized_flop_rate_flops_per_s": rate(frame.normalized_flops),
            "memory_bw_bytes_per_s": rate(frame.memory_accessed_bytes),
            "hbm_bw_bytes_per_s": rate(hbm), "arithmetic_intensity_flops_per_byte": ai,
            "bound_by": label, **{c: frame[c] for c in MEMORY_COLUMNS},
            **{c: frame[c] for c in ("source", "source_stack", "deduplicated_name",
                                     "resolved", "attribution")}})[HLO_STATS_COLUMNS]
    out.attrs["reasons"] = list(xla.reasons) + _peak_reasons(xla, peaks) + (
        [] if len(out) else ["no XLA ops in this profile (no TPU ops, no device or XLA:CPU "
                             "events with an hlo_op stat, no GPU kernels of TensorFlow ops)"])
    out.attrs["total_time_us"] = total / 1e6
    out.attrs["peaks"] = peaks
    return out


def on_xla_cpu(stats: pd.DataFrame) -> bool:
    """Whether the HLO stats table ``stats`` holds ops and all of them ran on XLA:CPU (the
    device side XProf's tools do not list)."""
    return bool(len(stats)) and bool((stats.device_type.astype(str) == "CPU").all())


def op_totals(xla: XlaData, device_type: str) -> tuple[int, int]:
    """(total time, op time) in ps of one device type's planes."""
    t = xla.totals[xla.totals.device_type == device_type]
    return int(t.span_ps.sum()), int(t.op_ps.sum())


def framework_ops(provenance: pd.Series, hlo_op: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each HLO op's framework op and its type, as XProf's framework op stats name them: the
    ``op_name`` and ``op_type`` of the ``op_name:op_type`` provenance; where it has no name,
    the HLO op itself, type "Unknown"."""
    prov = provenance.fillna("").astype(str).to_numpy(dtype=object)
    uniq, inverse = np.unique(prov.astype(str), return_inverse=True)
    parsed = [parse_tf_op(p) if p else None for p in uniq]
    name = np.array([p[1] if p else "" for p in parsed], dtype=object)[inverse]
    kind = np.array([(p[2] or "Unknown") if p else "Unknown" for p in parsed],
                    dtype=object)[inverse]
    name = np.where(name == "", hlo_op.astype(str).to_numpy(dtype=object), name)
    return name, kind


def framework_metrics(xla: XlaData) -> pd.DataFrame:
    """Device time of XLA ops rolled up into framework ops, as XProf's framework op stats
    do: one row per framework op (``op_name`` of the ``op_name:op_type`` provenance; the HLO
    op itself, type "Unknown", when it has none), occurrences the most of its HLO ops, times
    summed.  Columns: operation, type, occurrences, time_ps, self_ps, eager."""
    ops = xla.ops
    if ops.empty:
        return pd.DataFrame({"operation": pd.Series(dtype=object),
                             "type": pd.Series(dtype=object),
                             "occurrences": pd.Series(dtype=np.int64),
                             "time_ps": pd.Series(dtype=np.int64),
                             "self_ps": pd.Series(dtype=np.int64),
                             "eager": pd.Series(dtype=bool)})
    name, kind = framework_ops(ops.provenance, ops.hlo_op)
    # one row per framework op in first-seen order (numpy: a pandas groupby's fixed cost was
    # most of this function on a monitor's window)
    code, operations = pd.factorize(name, sort=False)
    if (code < 0).any():  # (a missing name: no row, as a groupby's)
        keep = code >= 0
        code, kind, ops = code[keep], kind[keep], ops[keep]
    n = len(operations)
    first = np.full(n, len(code), np.int64)
    np.minimum.at(first, code, np.arange(len(code)))
    occurrences = np.zeros(n, np.int64)
    np.maximum.at(occurrences, code, ops.occurrences.to_numpy(dtype=np.int64))
    time_ps, self_ps = np.zeros(n, np.int64), np.zeros(n, np.int64)
    np.add.at(time_ps, code, ops.time_ps.to_numpy(dtype=np.int64))
    np.add.at(self_ps, code, ops.self_ps.to_numpy(dtype=np.int64))
    out = pd.DataFrame({"operation": np.asarray(operations, dtype=object), "type": kind[first],
                        "occurrences": occurrences, "time_ps": time_ps, "self_ps": self_ps})
    out["eager"] = False
    return out


def _hlo_stats(parts: dict, xla: XlaData, device_peaks: DevicePeaks) -> pd.DataFrame:
    return hlo_stats_table(xla, device_peaks)


ANALYSES = (Analysis("hlo_stats", combine=_hlo_stats, needs=("xla", "device_peaks")),)
