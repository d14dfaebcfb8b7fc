"""The ``xla`` unit: the XLA partials of all hosts (:func:`.ops.host_xla_ops`,
:func:`.ops.host_tf_kernels`) combined into one :class:`XlaData`, which the XLA tables
(:mod:`.hlo_stats`, :mod:`.op_profile`, :mod:`.roofline`, :mod:`.source_lines`) read.

Ops are summed per (device type, program, op) over hosts (XProf sums devices too); an op's
attribution is the weakest of its hosts' (:mod:`.command_buffers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..runtime.unit import Analysis
from .command_buffers import ATTRIBUTION
from .device_peaks import DevicePeaks, combine_peaks
from .fused import FUSED_COLUMNS
from .ops import OP_COLUMNS

__all__ = ["ANALYSES", "XlaData", "combine_xla"]


@dataclass
class XlaData:
    """The XLA partials of all hosts combined: ``ops`` (OP_COLUMNS, summed over hosts),
    ``tf_kernels``, ``totals`` (per device plane), ``peaks`` (first device with known
    peaks), ``programs``, ``reasons`` and ``fused`` (the TPU fusions' instructions)."""

    ops: pd.DataFrame
    tf_kernels: pd.DataFrame
    totals: pd.DataFrame
    peaks: DevicePeaks
    programs: dict = field(default_factory=dict)
    reasons: list = field(default_factory=list)
    fused: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FUSED_COLUMNS))

    @property
    def total_ps(self) -> int:
        """The devices' total time: per plane the larger of its span and its op time."""
        if self.totals.empty:
            return 0
        return int(np.maximum(self.totals.span_ps, self.totals.op_ps).sum())


_KEYS = ["device_type", "program_id", "hlo_op"]


def _merged_ops(ops: list[pd.DataFrame]) -> pd.DataFrame:
    """The hosts' op tables summed per (device type, program, op): times and occurrences
    summed, the last event FLOPs and bytes, the first of each other column; an op's
    attribution the weakest of its hosts' (stat < name < position < unresolved).  One host's
    table, one row per op already, is its own sum."""
    if not ops:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in OP_COLUMNS})
    merged = pd.concat(ops, ignore_index=True) if len(ops) > 1 else ops[0].copy()
    how = pd.Categorical(merged.attribution.fillna(ATTRIBUTION[0]), categories=ATTRIBUTION,
                         ordered=True).codes
    if len(ops) == 1 and not merged.duplicated(_KEYS).any():
        merged["attribution"] = np.asarray(ATTRIBUTION, dtype=object)[how]
        # (the program ids' type as a group key gives it: int64, uint64 for TPU's)
        merged["program_id"] = pd.Series(merged.program_id.tolist(), index=merged.index)
        return merged[OP_COLUMNS]
    info = [c for c in OP_COLUMNS if c not in _KEYS + ["occurrences", "time_ps", "self_ps",
                                                       "event_flops", "event_bytes",
                                                       "attribution"]]
    agg = {"occurrences": ("occurrences", "sum"), "time_ps": ("time_ps", "sum"),
           "self_ps": ("self_ps", "sum"), "event_flops": ("event_flops", "last"),
           "event_bytes": ("event_bytes", "last"), "how": ("how", "max")}
    agg.update({c: (c, "first") for c in info})
    merged["how"] = how
    merged = merged.groupby(_KEYS, sort=False, dropna=False).agg(**agg).reset_index()
    merged["attribution"] = np.asarray(ATTRIBUTION, dtype=object)[merged.how.to_numpy()]
    return merged[OP_COLUMNS]


def combine_xla(parts: dict, xla_ops: list[dict], tf_kernels: list[pd.DataFrame]) -> XlaData:
    """Combine the hosts' XLA partials (``xla_ops``) and TensorFlow-kernel partials
    (``tf_kernels``)."""
    parts = xla_ops
    merged = _merged_ops([p["ops"] for p in parts if len(p["ops"])])
    tf = [t for t in tf_kernels if len(t)]
    tf_kernels = pd.concat(tf, ignore_index=True).groupby(
        ["hlo_op", "category", "provenance"], sort=False).agg(
        occurrences=("occurrences", "sum"), time_ps=("time_ps", "sum")).reset_index() \
        if tf else pd.DataFrame(columns=["hlo_op", "category", "provenance", "occurrences",
                                         "time_ps"])
    totals = pd.concat([p["totals"] for p in parts], ignore_index=True) if parts else \
        pd.DataFrame(columns=["device_type", "plane", "span_ps", "op_ps"])
    found = [pk for p in parts for _, pk, _ in p["peaks"]]
    reasons: list = []
    for p in parts:
        for r in p["reasons"]:
            if r not in reasons:
                reasons.append(r)
    programs: dict = {}
    for p in parts:
        for k, v in p["programs"].items():
            programs.setdefault(k, v)
    fused = [p["fused"] for p in parts if p.get("fused") is not None and len(p["fused"])]
    fused = pd.concat(fused, ignore_index=True).drop_duplicates(["program_id", "path"]) \
        if fused else pd.DataFrame(columns=FUSED_COLUMNS)
    xla = XlaData(merged, tf_kernels, totals, combine_peaks(found), programs, reasons, fused)
    xla.peak_reasons = [why for p in parts for _, _, why in p["peaks"] if why]
    return xla


ANALYSES = (Analysis("xla", combine=combine_xla, needs=("xla_ops", "tf_kernels")),)
