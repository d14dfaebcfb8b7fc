"""Each GPU kernel (or copy) linked to the host call that launched it, by event id.

The launch (``cudaLaunchKernel``, ``hipModuleLaunchKernel``, TensorFlow's host op of the
kernel) and the device event carry the same ``correlation_id``; :mod:`.activity` makes
the pairs (the same join times launch latency).  The trace viewer draws an arrow from one to
the other.  TPUs have no launches: no rows.

Correlation ids come from the file and may repeat (a rewritten or merged capture): each kernel
is linked to one launch of its id only (the last, as xprof groups it), so the pairs are at
most the kernels; the launches left out are counted (``attrs["duplicates"]``) and said in
``attrs["reasons"]``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from .activity import duplicate_launches_reason, launch_links

__all__ = ["ANALYSES", "LAUNCH_LINK_COLUMNS", "combine_launch_links", "host_launch_links"]

LAUNCH_LINK_COLUMNS = ["launch_event", "kernel_event"]


def host_launch_links(hd: HostData, shift_ps: int = 0) -> pd.DataFrame:
    """One host's pairs, as its own event rows (``launch_event``, ``kernel_event``)."""
    launch, kernel, duplicates = launch_links(hd)
    out = pd.DataFrame({"launch_event": launch.astype(np.int64),
                        "kernel_event": kernel.astype(np.int64)})
    out.attrs["duplicates"] = duplicates
    out.attrs["reasons"] = duplicate_launches_reason(hd.name, duplicates)
    return out


def combine_launch_links(parts: dict, event_offsets: dict) -> pd.DataFrame:
    """Every host's pairs as global event ids (rows of ``prof.events``), by kernel."""
    frames = [part + event_offsets[host] for host, part in parts.items() if len(part)]
    reasons = [r for part in parts.values() for r in part.attrs.get("reasons", [])]
    if not frames:
        out = pd.DataFrame({c: pd.Series(dtype="int64") for c in LAUNCH_LINK_COLUMNS})
    else:
        out = pd.concat(frames, ignore_index=True)
        out = out.sort_values("kernel_event", kind="stable").reset_index(drop=True)
    out.attrs = {"duplicates": sum(int(p.attrs.get("duplicates", 0)) for p in parts.values()),
                 "reasons": reasons}
    return out


ANALYSES = (Analysis("launch_links", host=host_launch_links, combine=combine_launch_links,
                     needs=("event_offsets",), host_cost=0.5),)
