"""The ``command_buffer_kernels`` unit: every kernel run inside an XLA command buffer, with the
HLO op :mod:`.command_buffers` attributed it to (the per-host rows come with the host's
``xla_ops`` partial); the trace viewer finds an HLO op's events with it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "combine_buffer_kernels"]


def _host_buffer_kernels(hd: HostData, shift_ps: int = 0, xla_ops: dict | None = None) -> dict:
    """The host's kernels run inside command buffers (rows, the op each is attributed to),
    from its XLA partial."""
    empty = {"rows": np.empty(0, np.int64), "op": np.empty(0, dtype=object)}
    return (xla_ops or {}).get("command_buffers") or empty


def combine_buffer_kernels(parts: dict, event_offsets: dict) -> pd.DataFrame:
    """Every kernel run inside a command buffer: ``event`` (its row of ``prof.events``) and
    ``hlo_op``, the op it is attributed to (its own ``hlo_op`` stat names the buffer); the
    trace viewer finds an HLO op's events with it."""
    frames = [pd.DataFrame({"event": np.asarray(p["rows"], np.int64) + event_offsets[host],
                            "hlo_op": np.asarray(p["op"], dtype=object)})
              for host, p in parts.items() if len(p["rows"])]
    if not frames:
        return pd.DataFrame({"event": pd.Series(dtype="int64"),
                             "hlo_op": pd.Series(dtype=object)})
    return pd.concat(frames, ignore_index=True).sort_values("event", kind="stable") \
        .reset_index(drop=True)


ANALYSES = (Analysis("command_buffer_kernels", host=_host_buffer_kernels,
                     combine=combine_buffer_kernels, host_needs=("xla_ops",),
                     needs=("event_offsets",), host_cost=0.01),)
