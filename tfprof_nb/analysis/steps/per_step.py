"""One row per step of a step table, the steps ``tp.check``, ``tp.compare``, ``tfprof diff``
and the page's median step time judge: on one host its rows; on a pod (a row per step and
host) each step's slowest host's row (the pod's step lasts until its last host is done).

A pod's hosts are paired step by step as XProf's pod viewer pairs them (by the times each
file holds: :func:`.xprof_counted.xprof_pod_alignment`), every step of each worker kept:
hosts that train apart number their steps apart (step 1500 of one worker is step 1442 of the
other), so equal step numbers would pair unrelated steps.  Where that rule does not apply
(inferred steps) or pairs nothing, steps pair by step number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .xprof_counted import xprof_pod_alignment

__all__ = ["host_count", "judged_steps", "per_step"]


def host_count(steps: pd.DataFrame) -> int:
    """How many hosts a step table has steps of (1 without any, or without a host column)."""
    return int(steps.host.nunique()) if "host" in steps and len(steps) else 1


def _aligned(steps: pd.DataFrame) -> tuple[np.ndarray, list] | None:
    """The step table's positions of each aligned step's slowest host, and the hosts aligned
    (None: no alignment)."""
    aligned = xprof_pod_alignment(steps)
    if not aligned or not min(len(p) for p in aligned.values()):
        return None
    pos = np.stack([np.asarray(p, np.int64) for p in aligned.values()])  # hosts x steps
    slowest = steps.duration_ms.to_numpy(dtype=float)[pos].argmax(axis=0)
    return pos[slowest, np.arange(pos.shape[1])], list(aligned)


def per_step(steps: pd.DataFrame) -> pd.DataFrame:
    """One row per step (see the module doc), in the steps' order; a pod's rows keep their
    host and that host's own step number."""
    return judged_steps(steps)[0]


def judged_steps(steps: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """:func:`per_step`'s rows and, in words, which steps they are: "the 10 steps"; on a pod
    "the 140 steps of 2 hosts paired as XProf's pod viewer aligns them, each its slowest
    host's time" (by step number: "the 20 step numbers of 2 hosts, each its slowest host's
    time"; where one worker is aligned, its steps alone).  The pod's alignment is made once
    for both."""
    hosts = host_count(steps)
    if hosts <= 1:
        return steps, _steps_said(len(steps))
    aligned = _aligned(steps)
    if aligned is not None:
        rows, workers = aligned
        said = _steps_said(len(rows))
        if len(workers) == 1:  # (the others have no device)
            return steps.iloc[rows], (f"{said} of {workers[0]} (XProf's pod viewer leaves out "
                                      "hosts without a device beside one with)")
        return steps.iloc[rows], (f"{said} of {len(workers)} hosts paired as XProf's pod "
                                  "viewer aligns them, each its slowest host's time")
    table = steps
    if not steps.index.is_unique:
        order = np.argsort(-steps.duration_ms.to_numpy(dtype=float), kind="stable")
        first = ~pd.Index(steps.index[order]).duplicated()
        table = steps.iloc[np.sort(order[first])]
    n = len(table)
    return table, (f"the {n} step number{'s' * (n != 1)} of {hosts} hosts, each its slowest "
                   "host's time")


def _steps_said(n: int) -> str:
    return "the step" if n == 1 else f"the {n} steps"
