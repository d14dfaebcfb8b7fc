"""Pod view: the step breakdown of every host side by side, steps matched by number."""

from __future__ import annotations

import pandas as pd

from ...constants import CATEGORY_COLUMNS
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "pod_table"]


def pod_table(steps: pd.DataFrame) -> pd.DataFrame:
    """One row per (step, host) with duration and categories; ``slowest`` marks the host
    that took longest in each step, ``lag_ms`` how much longer than the fastest host it took.
    Only steps every host has are kept, so the columns compare like with like."""
    cols = ["duration_ms"] + CATEGORY_COLUMNS
    if steps.empty:
        return pd.DataFrame(columns=["step", "host", *cols, "slowest", "lag_ms"])
    df = steps.reset_index()[["step", "host", *cols]]
    hosts = df.host.nunique()
    common = df.groupby("step").host.nunique()
    df = df[df.step.isin(common[common == hosts].index)].copy()
    fastest = df.groupby("step").duration_ms.transform("min")
    slowest = df.groupby("step").duration_ms.transform("max")
    df["slowest"] = (df.duration_ms == slowest) & (hosts > 1)
    df["lag_ms"] = df.duration_ms - fastest
    return df.sort_values(["step", "host"]).reset_index(drop=True)


def _pod(parts: dict, steps: pd.DataFrame) -> pd.DataFrame:
    return pod_table(steps)


ANALYSES = (Analysis("pod", combine=_pod, needs=("steps",)),)
