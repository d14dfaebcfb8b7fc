"""Nesting of events by time on each line: parent, depth and self time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._native.kernels import nest_loose

__all__ = ["event_nesting"]


def event_nesting(line: np.ndarray, start_ps: np.ndarray, duration_ps: np.ndarray,
                  index: np.ndarray | None = None) -> pd.DataFrame:
    """Parent (event id, -1 for roots), depth and self time of each event.

    ``line`` must identify a line uniquely across hosts and planes (e.g. a global line code).
    An event is a child of the innermost earlier event on its line that is still open when it
    starts; ties in start put the longer event outside.  Self time is the duration minus the
    children's durations clipped to the parent's end.
    """
    duration = np.ascontiguousarray(duration_ps, dtype=np.int64)
    parent, depth, child_ps = nest_loose(np.asarray(line).astype(np.int32), start_ps, duration)
    n = len(parent)
    idx = np.arange(n) if index is None else np.asarray(index)
    parent = parent.astype(np.int64)
    if index is not None:  # parents as event ids
        parent = np.where(parent >= 0, idx[np.maximum(parent, 0)], -1)
    return pd.DataFrame({"parent": parent, "depth": depth, "self_ps": duration - child_ps},
                        index=pd.Index(idx, name="event"))
