"""The hardware tables the views read: ``prof.counters`` (samples of counters over time: the
hardware sampler's file beside the profile, and the profile's own ``_counters_`` lines) and
``prof.op_counters`` (each counter's statistics over an op's executions).

A profile (or a version of the package) without them gets empty tables of the same columns,
so the views stay unchanged there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.runtime.registry import analyses

__all__ = ["COUNTER_COLUMNS", "OP_COUNTER_COLUMNS", "counters_of", "op_counters_of"]

COUNTER_COLUMNS = {"host": object, "device": object, "counter": object, "time_us": np.float64,
                   "value": np.float64, "unit": object, "source": object}
OP_COUNTER_COLUMNS = {"host": object, "device": object, "kind": object, "program": object,
                      "op": object, "counter": object, "unit": object, "samples": np.int64,
                      "mean": np.float64, "median": np.float64, "max": np.float64}


def _empty(columns: dict) -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series([], dtype=d) for k, d in columns.items()})


def _result(prof, name: str, columns: dict) -> pd.DataFrame:
    if name not in analyses():
        return _empty(columns)
    return prof.result(name)


def counters_of(prof) -> pd.DataFrame:
    """``prof.counters``: one row per sample (host, device, counter, time_us, value, unit,
    source); empty where there is none."""
    return _result(prof, "counters", COUNTER_COLUMNS)


def op_counters_of(prof) -> pd.DataFrame:
    """``prof.op_counters``: one row per (host, device, kind, program, op, counter) with the
    samples inside the op's executions and their mean, median and max (NaN under 5
    samples); empty where there is none."""
    return _result(prof, "op_counters", OP_COUNTER_COLUMNS)
