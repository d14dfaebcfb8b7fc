"""The roofline columns of the TensorFlow stats' device ops, as XProf's framework op stats give
them: each framework op's FLOP rates, memory bandwidth, arithmetic intensity, tensor-core share
and the resource that bounds it.

A device op's FLOPs and bytes are the sums over the HLO ops it was lowered to (``hlo_stats``:
the model's FLOPs and bytes, or the kernels' own stats), over its time; all its bytes count as
HBM traffic for its bound (XProf's framework ops keep no memory breakdown, so a library call's
output counts here where the HLO stats leave it out).  Its tensor-core share is the time of its
kernels that use tensor cores (or matrix cores) over its kernels' time (``kernel_stats``, by
framework op).  Host ops, ops without XLA (TensorFlow's own GPU
kernels carry no FLOPs) and ``IDLE`` read 0 and "Unknown".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..xla.device_peaks import DevicePeaks, bound_by
from ..xla.hlo_stats import framework_ops

__all__ = ["ROOFLINE_COLUMNS", "with_rooflines"]

ROOFLINE_COLUMNS = ["flop_rate_flops_per_s", "model_flop_rate_flops_per_s",
                    "memory_bw_bytes_per_s", "arithmetic_intensity_flops_per_byte",
                    "tensor_core_pct", "bound_by"]
_SUMMED = ["flops", "normalized_flops", "memory_accessed_bytes"]


def _costs(hlo: pd.DataFrame) -> pd.DataFrame:
    """FLOPs and bytes per framework op, summed over its HLO ops."""
    if hlo is None or not len(hlo):
        return pd.DataFrame(columns=_SUMMED)
    frame = hlo[[c for c in _SUMMED if c in hlo.columns]].astype(float).copy()
    frame["op"] = framework_ops(hlo.framework_op_name, hlo.hlo_op_name)[0]
    sums = frame.groupby("op", sort=False).sum(min_count=1)
    for c in _SUMMED:
        if c not in sums.columns:
            sums[c] = np.nan
    return sums[_SUMMED]


def _tensor_core_share(kernels: pd.DataFrame | None) -> pd.Series:
    """Per framework op: the share (%) of its kernels' time in kernels using tensor cores."""
    if kernels is None or not len(kernels) or "op_name" not in kernels.columns:
        return pd.Series(dtype=float)
    k = pd.DataFrame({"op": kernels.op_name.astype(str),
                      "t": kernels.total_duration_us.astype(float),
                      "tc": kernels.total_duration_us.astype(float).where(
                          kernels.is_kernel_using_tensor_core.astype(bool), 0.0)})
    sums = k.groupby("op", sort=False).sum()
    return (sums.tc / sums.t.where(sums.t > 0) * 100).fillna(0.0)


def with_rooflines(table: pd.DataFrame, hlo: pd.DataFrame | None,
                   kernels: pd.DataFrame | None, peaks: DevicePeaks) -> pd.DataFrame:
    """``table`` (a TensorFlow stats table) with ROOFLINE_COLUMNS: rates over each op's time,
    bound-by against ``peaks`` by XProf's rule (the resource used nearest its peak)."""
    out = table.copy()
    device = (out.host_or_device == "Device").to_numpy() if len(out) else np.zeros(0, bool)
    costs = _costs(hlo).reindex(out.operation.astype(str).to_numpy())
    costs.index = out.index
    costs[~device] = np.nan
    flops = costs.flops.fillna(0).to_numpy(float)
    norm = costs.normalized_flops.fillna(0).to_numpy(float)
    nbytes = costs.memory_accessed_bytes.fillna(0).to_numpy(float)
    time_ps = out.total_time_us.to_numpy(float) * 1e6 if len(out) else np.zeros(0)
    rate, _, _, _, label = bound_by(norm, nbytes, time_ps, peaks)
    secs = time_ps / 1e12
    with np.errstate(divide="ignore", invalid="ignore"):
        out["flop_rate_flops_per_s"] = rate
        out["model_flop_rate_flops_per_s"] = np.where(secs > 0, flops / secs, 0.0)
        out["memory_bw_bytes_per_s"] = np.where(secs > 0, nbytes / secs, 0.0)
        out["arithmetic_intensity_flops_per_byte"] = np.where(nbytes > 0, norm / nbytes, 0.0)
    share = _tensor_core_share(kernels)
    tc = out.operation.astype(str).map(share).fillna(0.0).to_numpy(float) if len(out) \
        else np.zeros(0)
    out["tensor_core_pct"] = np.where(device, tc, 0.0)
    out["bound_by"] = label
    return out
