"""Pod view: the step breakdown of every host side by side, steps matched as XProf's pod
viewer matches them.

A pod's workers are aligned step by step by XProf's rule (``xprof_counted``: the offset whose
steps overlap the most, on the times each host's file holds), every step of each worker's
list kept: the pod viewer drops no first or last step.  Workers that number their steps each
their own way are then compared on the steps they ran side by side, not on equal numbers (two
workers that train each on its own have step 1500 a third of a second apart).  A row's
``step`` is the first worker's number of its aligned step, ``host_step`` the host's own,
``xprof_step`` the number XProf's pod viewer gives it (one worker: the step's group id, which
skips the groups that are no step; a pod: its place among the aligned steps, from 0), and
``bottleneck`` XProf's name of its largest category (ties: the name last in alphabetical
order, as XProf's sort leaves it; device idle is none of its categories).  As in
XProf, hosts without a device are left out where another has one (a coordinator), so a pod of
one worker shows that worker's steps alone.  Where XProf's rule does not apply (steps inferred
from a repeated program), the step numbers every host has are compared.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import CATEGORY_COLUMNS
from ..runtime.unit import Analysis
from .xprof_counted import xprof_pod_alignment

__all__ = ["ANALYSES", "POD_COLUMNS", "pod_table"]

POD_COLUMNS = ["step", "host", "host_step", "xprof_step", "duration_ms", *CATEGORY_COLUMNS,
               "bottleneck", "slowest", "lag_ms"]
# XProf's pod viewer's categories: its names and the columns that hold them
_XPROF_CATEGORIES = {"Device compute": "device_compute_ms", "Device to device":
                     "device_to_device_ms", "Device collective communication":
                     "device_collectives_ms", "Host compute": "host_compute_ms",
                     "Kernel launch": "kernel_launch_ms", "Input": "input_ms",
                     "Output": "output_ms", "Compilation": "compilation_ms",
                     "All others": "other_ms"}


def _bottleneck(df: pd.DataFrame) -> np.ndarray:
    """XProf's pod viewer's bottleneck of each row: the category with the most time, ties
    to the name last in alphabetical order (its sort of (time, name) pairs, last taken)."""
    names = sorted(_XPROF_CATEGORIES, reverse=True)  # (the first maximum wins: the last name)
    values = np.column_stack([df[_XPROF_CATEGORIES[n]].to_numpy(float) for n in names])
    return np.asarray(names, dtype=object)[values.argmax(axis=1)] if len(df) else \
        np.empty(0, object)


def pod_table(steps: pd.DataFrame) -> pd.DataFrame:
    """One row per (aligned step, host) with duration and categories (see the module doc);
    ``slowest`` marks the host that took longest in each step, ``lag_ms`` how much longer than
    the fastest host it took.  ``attrs["aligned"]``: whether a pod's steps were aligned."""
    cols = ["duration_ms"] + CATEGORY_COLUMNS
    aligned = xprof_pod_alignment(steps)
    if steps.empty or aligned == {}:
        out = pd.DataFrame({c: pd.Series(dtype=object) for c in POD_COLUMNS})
        out.attrs = {"aligned": aligned is not None}
        return out
    numbers = steps.index.to_numpy()
    if aligned is None:  # (inferred steps) no pod rule: the step numbers every host has
        df = steps.reset_index()[["step", "host", *cols]]
        common = df.groupby("step").host.nunique()
        df = df[df.step.isin(common[common == df.host.nunique()].index)].copy()
        df.insert(2, "host_step", df.step.to_numpy())
        df["xprof_step"] = pd.array([pd.NA] * len(df), dtype="Int64")  # (XProf has no steps)
    else:
        label = numbers[aligned[next(iter(aligned))]]
        df = pd.concat([steps.iloc[at].reset_index()[["step", "host", "group_id", *cols]]
                        .rename(columns={"step": "host_step"}).assign(step=label, _k=k)
                        for k, at in enumerate(aligned.values())], ignore_index=True)
        places = np.tile(np.arange(len(label)), len(aligned))
        df["xprof_step"] = pd.array(df.group_id.to_numpy() if len(aligned) == 1 else places,
                                    dtype="Int64")
    df["bottleneck"] = _bottleneck(df)
    hosts = df.host.nunique()
    g = df.groupby("step")
    df["slowest"] = (df.duration_ms == g.duration_ms.transform("max")) & (hosts > 1)
    df["lag_ms"] = df.duration_ms - g.duration_ms.transform("min")
    df = df.sort_values(["step", "_k"] if "_k" in df else ["step", "host"], kind="stable")
    out = df[POD_COLUMNS].reset_index(drop=True)
    out.attrs = {"aligned": aligned is not None}  # (not the step table's)
    return out


def _pod(parts: dict, steps: pd.DataFrame) -> pd.DataFrame:
    return pod_table(steps)


ANALYSES = (Analysis("pod", combine=_pod, needs=("steps",)),)
