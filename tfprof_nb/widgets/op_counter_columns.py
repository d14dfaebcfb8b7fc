"""Hardware counters beside the XLA and kernel tables: for each counter that some op of the
table has enough samples of (``prof.op_counters``, :data:`MIN_SAMPLES`), two columns: the
mean of its samples inside the op's executions and how many samples there were
("``sm__cycles_active.avg`` (cycles, mean)", "(samples)").  Devices are pooled: the mean of
the devices' means weighted by their samples, over the devices with a mean.  An op with
too few samples has an empty mean, whose tooltip says why.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hardware_tables import op_counters_of
from .traits import TableData

__all__ = ["FEW_SAMPLES", "with_op_counters"]

FEW_SAMPLES = "fewer than 5 samples"
# counters whose mean over an op says nothing: a bit mask, the device's memory (the
# framework's pool), counts since the capture started
_SKIP_UNITS = ("mask",)
_SKIP = ("memory_used_bytes", "memory_total_bytes", "ecc_uncorrected_errors", "xid_errors")


def _pooled(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per ``keys`` and counter: samples (all devices) and the samples-weighted mean of the
    devices' means (NaN when none has one)."""
    rows = rows.assign(weight=np.where(rows["mean"].notna(), rows["samples"], 0),
                       total=rows["mean"].fillna(0.0) * np.where(rows["mean"].notna(),
                                                                 rows["samples"], 0))
    g = rows.groupby([*keys, "counter"], sort=False, observed=True)
    out = g[["samples", "weight", "total"]].sum()
    out["mean"] = (out["total"] / out["weight"]).where(out["weight"] > 0)
    out["unit"] = g["unit"].first()
    return out.reset_index()


def with_op_counters(data: TableData, prof, kind: str, keys: dict[str, str]) -> TableData:
    """``data`` with the mean and samples of each counter of ``prof.op_counters``' ``kind``
    rows (joined on ``keys``: op_counters column -> the table's column), where some op has a
    mean; ``data`` unchanged without."""
    ops = op_counters_of(prof)
    ops = ops[(ops["kind"] == kind) & ~ops["unit"].isin(_SKIP_UNITS) & ~ops["counter"].isin(_SKIP)]
    if ops.empty or data.frame.empty:
        return data
    pooled = _pooled(ops, list(keys))
    shown = [c for c, rows in pooled.groupby("counter", sort=True) if rows["mean"].notna().any()]
    frame, labels, missing = data.frame.copy(), dict(data.labels), dict(data.missing)
    on = list(keys)
    left = pd.DataFrame({k: frame[col].astype(str).to_numpy() for k, col in keys.items()})
    for counter in shown:
        rows = pooled[pooled["counter"] == counter]
        rows = rows[[*on, "mean", "samples", "unit"]].astype({k: str for k in on})
        joined = left.merge(rows, how="left", on=on)  # the table's rows, in its order
        mean, count = f"{counter} mean", f"{counter} samples"
        frame[mean] = joined["mean"].to_numpy(np.float64)
        frame[count] = joined["samples"].fillna(0).to_numpy(np.int64)
        unit = str(rows["unit"].iloc[0])
        labels[mean] = f"{counter} ({unit + ', ' if unit else ''}mean)"
        labels[count] = f"{counter} (samples)"
        missing[mean] = FEW_SAMPLES
    return data.replace(frame=frame, labels=labels, missing=missing)
