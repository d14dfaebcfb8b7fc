"""The arrows a trace export draws: the links the trace viewer draws for a selection, as
flows between slices.

Each link is one flow from its source slice to its end slice: a host launch to the kernel
it started (``launch_links``: a command buffer's launch has one flow per kernel), a
TensorFlow producer to its consumer (``flow_links`` kind ``context``) and a tf.data element
from its producer to its consumer (``element``).  XProf's trace viewer draws the same
arrows (its streaming JSON, from the same ids: ``correlation_id``, ``_p``/``_c``); its
categories are its own (``gpu_launch``, ``PjRt``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FLOW_NAMES", "Flows", "trace_flows"]

FLOW_NAMES = ("launch", "context", "element")  # a flow's kind: its category and name


@dataclass
class Flows:
    """One flow per link (id: its place, from 1), sorted by source slice."""

    src: np.ndarray  # int64 slice the flow leaves
    dst: np.ndarray  # int64 slice it ends in
    kind: np.ndarray  # int8 into FLOW_NAMES

    def __len__(self) -> int:
        return len(self.src)


def trace_flows(prof) -> Flows:
    """The flows of ``prof``'s links between its events (slice i is event i of
    ``prof.events``)."""
    launch, flow = prof.result("launch_links"), prof.result("flow_links")
    index = prof.events.index
    src = index.get_indexer(np.concatenate([launch.launch_event.to_numpy(np.int64),
                                            flow.producer_event.to_numpy(np.int64)]))
    dst = index.get_indexer(np.concatenate([launch.kernel_event.to_numpy(np.int64),
                                            flow.consumer_event.to_numpy(np.int64)]))
    kind = np.concatenate([np.zeros(len(launch), np.int8),
                           flow.kind.to_numpy(np.int8) + 1])
    ok = (src >= 0) & (dst >= 0)
    order = np.argsort(src[ok], kind="stable")
    return Flows(src[ok][order].astype(np.int64), dst[ok][order].astype(np.int64),
                 kind[ok][order])
