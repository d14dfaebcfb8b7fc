"""Roofline: each HLO op's arithmetic intensity and achieved FLOP rate against the device's
roofline (XProf's ``roofline_model``, its "Total" step).

The first row is the whole program (category and operation ``Program``): its time is the
devices' total time, idle included (its self time 0: the ops below hold it, as in XProf), and
its FLOPs and bytes the sum over ops (``while``, ``call``, ``conditional`` and megacore fusions
left out: their work is in the ops they run).  Then one row per HLO op, by self time.  Rates
use the ops' time; arithmetic intensity is normalized FLOPs per byte accessed (``hbm_...``: per
HBM byte; ``bottleneck_...``: per byte of the resource that bounds the op, as XProf's); HBM
bandwidth counts an op's HBM bytes (TPU: its memory breakdown's; GPU: what XLA's cost analysis
keeps per operand and output, which leaves out a library call's tuple output; XLA:CPU: all its
bytes).  Against the peaks (``attrs["peaks"]``): ``compute_efficiency_pct`` (FLOP rate /
peak), ``memory_bw_utilization_pct`` (the highest memory utilisation: HBM, and on TPUs CMEM and
merged VMEM), ``roofline_efficiency_pct`` (the larger of the two; XProf's roofline
efficiency), ``attainable_flop_rate_flops_per_s`` (the FLOP rate at the roof of the op's
bottleneck: its FLOP rate over its roofline efficiency, XProf's optimal FLOP rate; min(peak,
intensity x peak bandwidth) where HBM bounds all its bytes) and ``bound_by`` (the resource
nearest its limit).  Without peaks these are empty and ``attrs["reasons"]`` says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.unit import Analysis
from .device_peaks import ON_CHIP_MEMORIES, DevicePeaks, bound_by, counted_on_chip
from .hlo_stats import hbm_bytes, hlo_stats_table, on_chip_bytes
from .combined import XlaData
from .ops import program_id_array

__all__ = ["ANALYSES", "roofline_table", "roofline_for", "ROOFLINE_COLUMNS"]

ROOFLINE_COLUMNS = [
    "rank", "category", "operation", "program_id", "device_type", "occurrences",
    "total_time_us", "avg_time_us", "total_self_time_us", "self_time_pct",
    "cumulative_self_time_pct", "flops", "normalized_flops", "memory_accessed_bytes",
    "model_flop_rate_flops_per_s", "flop_rate_flops_per_s", "memory_bw_bytes_per_s",
    "hbm_bw_bytes_per_s", "arithmetic_intensity_flops_per_byte",
    "hbm_arithmetic_intensity_flops_per_byte", "bottleneck_arithmetic_intensity_flops_per_byte",
    "bound_by",
    "compute_efficiency_pct", "memory_bw_utilization_pct", "roofline_efficiency_pct",
    "attainable_flop_rate_flops_per_s", "source"]
_INNER_OPS = ("while", "call", "conditional", "megacore fusion")
_MAX_OPS = 1000


def _program_row(stats: pd.DataFrame, total_ps: int, device_type: str = "") -> pd.DataFrame:
    """The whole program: the devices' total time, the FLOPs and bytes of the ops that run
    no others (while, call, conditional and megacore fusions left out); HBM bytes from the
    ops' memory breakdowns when any has one, else all bytes (XProf's rule).  ``device_type``:
    the devices' type where there are no ops."""
    counted = stats[~stats.category.isin(_INNER_OPS)]
    any_breakdown = counted.hbm_bytes.notna().any()
    frame = pd.DataFrame({
        "rank": [0], "category": ["Program"], "operation": ["Program"],
        "program_id": pd.Series([-1], dtype=object),
        "device_type": [",".join(sorted(set(stats.device_type))) or device_type],
        "occurrences": [1],
        "total_time_us": [total_ps / 1e6], "avg_time_us": [total_ps / 1e6],
        "total_self_time_us": [0.0], "self_time_pct": [0.0],  # (the ops below hold it, as
        "cumulative_self_time_pct": [0.0],                     # XProf's program row says)
        "flops": [counted.flops.sum()], "normalized_flops": [counted.normalized_flops.sum()],
        "memory_accessed_bytes": [counted.memory_accessed_bytes.sum()],
        "hbm": [counted.hbm_bytes.sum() if any_breakdown
                else counted.memory_accessed_bytes.sum()], "source": [""]})
    for name, attr in ON_CHIP_MEMORIES.items():
        frame[name] = [counted[f"{attr}_bytes"].sum()]
    return frame


def _op_rows(stats: pd.DataFrame) -> pd.DataFrame:
    ops = stats[stats.occurrences > 0].head(_MAX_OPS)
    frame = pd.DataFrame({
        "rank": ops["rank"], "category": ops.category, "operation": ops.hlo_op_name,
        "program_id": ops.program_id.astype(object), "device_type": ops.device_type,
        "occurrences": ops.occurrences, "total_time_us": ops.total_time_us,
        "avg_time_us": ops.avg_time_us, "total_self_time_us": ops.total_self_time_us,
        "self_time_pct": ops.self_time_pct,
        "cumulative_self_time_pct": ops.cumulative_self_time_pct, "flops": ops.flops,
        "normalized_flops": ops.normalized_flops,
        "memory_accessed_bytes": ops.memory_accessed_bytes, "hbm": hbm_bytes(ops),
        "source": ops.source})
    for name, values in on_chip_bytes(ops).items():
        frame[name] = values
    return frame


def _memory_utilization(table: pd.DataFrame, secs: np.ndarray, memory: np.ndarray,
                        peaks: DevicePeaks) -> np.ndarray:
    """The highest memory utilisation of each row: HBM, and the TPU's CMEM (when it has
    one) and VMEM (when merged) as XProf's roofline counts them."""
    best = np.asarray(memory, float)
    for name, peak in counted_on_chip(peaks).items():
        with np.errstate(divide="ignore", invalid="ignore"):
            used = np.where(secs > 0, table[name].fillna(0) / secs, 0.0) / peak
        best = np.maximum(best, np.nan_to_num(used))
    return best


def roofline_table(stats: pd.DataFrame, total_ps: int, peaks: DevicePeaks,
                   idle_device: str = "") -> pd.DataFrame:
    """The roofline table (ROOFLINE_COLUMNS) of the HLO stats table ``stats`` (made with
    ``peaks``) and the devices' total time; ``attrs``: ``peaks``,
    ``ridge_point_flops_per_byte`` and ``reasons``.  ``idle_device``: the type of devices
    that ran no op in ``total_ps`` (GPUs whose kernels name no op): the table is then the
    program row alone, all its time idle, as XProf's."""
    rows = _op_rows(stats)
    if len(stats) or (idle_device and total_ps > 0):
        table = pd.concat([_program_row(stats, total_ps, idle_device), rows],
                          ignore_index=True)
    else:
        table = rows.iloc[:0].copy()
    time_ps = table.total_time_us.to_numpy(dtype=float) * 1e6
    on_chip = {n: table[n].fillna(0).to_numpy(float) for n in ON_CHIP_MEMORIES}
    rate, bw, compute, memory, label = bound_by(table.normalized_flops.fillna(0),
                                                table.hbm.fillna(0), time_ps, peaks,
                                                on_chip=on_chip)
    secs = time_ps / 1e12
    with np.errstate(divide="ignore", invalid="ignore"):
        table["model_flop_rate_flops_per_s"] = np.where(secs > 0, table.flops / secs, np.nan)
        table["flop_rate_flops_per_s"] = np.where(secs > 0, table.normalized_flops / secs,
                                                  np.nan)
        table["memory_bw_bytes_per_s"] = np.where(secs > 0,
                                                  table.memory_accessed_bytes / secs, np.nan)
        table["hbm_bw_bytes_per_s"] = np.where(secs > 0, table.hbm / secs, np.nan)
        ai = np.where(table.memory_accessed_bytes > 0,
                      table.normalized_flops / table.memory_accessed_bytes, np.nan)
    table["arithmetic_intensity_flops_per_byte"] = ai
    _bottleneck_intensity(table, ai, label, on_chip)
    table["bound_by"] = np.where((table.device_type == "CPU") & (label == "HBM"), "Memory",
                                 label)
    _efficiencies(table, secs, compute, memory, peaks)
    table["program_id"] = program_id_array(table.program_id)
    out = table[ROOFLINE_COLUMNS].reset_index(drop=True)
    out.attrs["peaks"] = peaks
    out.attrs["ridge_point_flops_per_byte"] = peaks.ridge_point_flops_per_byte
    out.attrs["reasons"] = list(stats.attrs.get("reasons", []))
    return out


def _bottleneck_intensity(table, ai, label, on_chip: dict) -> None:
    """FLOPs per HBM byte, and per byte of the resource that bounds each row (its arithmetic
    intensity when compute bounds it; 0 when nothing does), as XProf's roofline gives them."""
    norm = table.normalized_flops.fillna(0).to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        def per(nbytes):
            return np.where(nbytes > 0, norm / nbytes, 0.0)
        hbm = per(table.hbm.fillna(0).to_numpy(float))
        out = np.where(label == "Compute", np.nan_to_num(ai), 0.0)
        out = np.where(np.isin(label, ("HBM", "Shm/L1")), hbm, out)
        for name, nbytes in on_chip.items():
            out = np.where(label == name, per(nbytes), out)
    table["hbm_arithmetic_intensity_flops_per_byte"] = hbm
    table["bottleneck_arithmetic_intensity_flops_per_byte"] = out


def _efficiencies(table, secs, compute, memory, peaks: DevicePeaks) -> None:
    """Fill the utilisation columns (NaN without peaks)."""
    if not peaks.known:
        for c in ("compute_efficiency_pct", "memory_bw_utilization_pct",
                  "roofline_efficiency_pct", "attainable_flop_rate_flops_per_s"):
            table[c] = np.nan
        return
    mem = _memory_utilization(table, secs, memory, peaks)
    table["compute_efficiency_pct"] = compute * 100
    table["memory_bw_utilization_pct"] = mem * 100
    efficiency = np.maximum(compute, mem)
    table["roofline_efficiency_pct"] = efficiency * 100
    with np.errstate(divide="ignore", invalid="ignore"):  # (XProf's optimal FLOP rate)
        table["attainable_flop_rate_flops_per_s"] = np.where(
            efficiency > 0, table.flop_rate_flops_per_s / efficiency, np.nan)


def roofline_for(xla: XlaData, peaks: DevicePeaks) -> pd.DataFrame:
    """The roofline table of the XLA ops in ``xla`` against ``peaks``."""
    return roofline_table(hlo_stats_table(xla, peaks), xla.total_ps, peaks)


def _roofline(parts: dict, xla: XlaData, hlo_stats: pd.DataFrame, device_peaks: DevicePeaks,
              device_ops: tuple) -> pd.DataFrame:
    if len(hlo_stats):
        return roofline_table(hlo_stats, xla.total_ps, device_peaks)
    # (no op: the GPU planes' time, which the device side of the op stats counts, all idle)
    return roofline_table(hlo_stats, device_ops[1], device_peaks, idle_device="GPU")


ANALYSES = (Analysis("roofline", combine=_roofline,
                     needs=("xla", "hlo_stats", "device_peaks", "device_ops")),)
