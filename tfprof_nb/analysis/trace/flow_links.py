"""Flows between events, for the trace viewer's arrows: TensorFlow's producer -> consumer
contexts and tf.data's elements, by event id.

- ``context``: an event carrying the stats ``_pt`` and ``_p`` produces the context (type, id);
  an event carrying ``_ct`` and ``_c`` consumes it (the links xprof's event grouping follows:
  a ``FunctionRun`` scheduling the ``ExecutorState::Process`` that runs its ops, a thread pool
  region and the work it runs).
- ``element``: tf.data's ``<Stage>Produce`` events made an element (``element_id``) that the
  ``<Stage>Consume`` event of the same stage took (``PrefetchProduce`` -> ``PrefetchConsume``;
  a batch consumes many elements).

A key that both sides share at ``MAX_FANOUT`` or more events is left out (a join of every
pair of them would grow with their product).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._native.kernels import join_on_keys
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from .grouping import producer_consumer_links

__all__ = ["ANALYSES", "FLOW_COLUMNS", "FLOW_KINDS", "MAX_FANOUT", "combine_flow_links",
           "element_links", "host_flow_links"]

FLOW_COLUMNS = ["producer_event", "consumer_event", "kind"]
FLOW_KINDS = ("context", "element")  # the ``kind`` codes
MAX_FANOUT = 64
_PRODUCE, _CONSUME = "Produce", "Consume"


def _stages(hd: HostData, rows: np.ndarray, suffix: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows whose name ends with ``suffix``, each one's stage: its name without it)."""
    distinct, inverse = np.unique(hd.name_code[rows], return_inverse=True)
    names = [str(n) for n in hd.names[distinct]]
    ends = np.array([n.endswith(suffix) for n in names], bool)
    stage = np.array([n[:-len(suffix)] if e else "" for n, e in zip(names, ends)], object)
    keep = ends[inverse]
    return rows[keep], stage[inverse][keep]


def element_links(hd: HostData) -> tuple[np.ndarray, np.ndarray]:
    """(producer rows, consumer rows) of tf.data's elements: a ``<Stage>Produce`` and a
    ``<Stage>Consume`` event of one ``element_id``."""
    ids = hd.int_stat("element_id", cache=False)
    if not len(ids):
        return np.empty(0, np.int32), np.empty(0, np.int32)
    rows = np.asarray(ids.rows)
    p_rows, p_stage = _stages(hd, rows, _PRODUCE)
    c_rows, c_stage = _stages(hd, rows, _CONSUME)
    if not len(p_rows) or not len(c_rows):
        return np.empty(0, np.int32), np.empty(0, np.int32)
    _, codes = np.unique(np.concatenate([p_stage, c_stage]).astype(str), return_inverse=True)
    p_code, c_code = codes[:len(p_rows)], codes[len(p_rows):]
    p_id, _ = ids.lookup(p_rows)
    c_id, _ = ids.lookup(c_rows)
    return join_on_keys(p_rows, (p_code.astype(np.int64), p_id.astype(np.int64)),
                        c_rows, (c_code.astype(np.int64), c_id.astype(np.int64)),
                        limit=MAX_FANOUT)


def host_flow_links(hd: HostData, shift_ps: int = 0) -> pd.DataFrame:
    """One host's flows as its own event rows (``producer_event``, ``consumer_event``,
    ``kind``: a code into FLOW_KINDS)."""
    parts = []
    for kind, (src, dst) in enumerate((producer_consumer_links(hd), element_links(hd))):
        parts.append(pd.DataFrame({"producer_event": np.asarray(src, np.int64),
                                   "consumer_event": np.asarray(dst, np.int64),
                                   "kind": np.full(len(src), kind, np.int8)}))
    return pd.concat(parts, ignore_index=True)


def combine_flow_links(parts: dict, event_offsets: dict) -> pd.DataFrame:
    """Every host's flows as global event ids (rows of ``prof.events``), by consumer (a
    stable sort of the consumer column alone: the table is not sorted as a frame)."""
    tables = [(event_offsets[host], part) for host, part in parts.items() if len(part)]
    if not tables:
        return pd.DataFrame({"producer_event": pd.Series(dtype="int64"),
                             "consumer_event": pd.Series(dtype="int64"),
                             "kind": pd.Series(dtype="int8")})

    def column(name: str, shifted: bool) -> np.ndarray:
        return np.concatenate([part[name].to_numpy() + offset if shifted else
                               part[name].to_numpy() for offset, part in tables])

    consumer = column("consumer_event", True)
    order = np.argsort(consumer, kind="stable")
    return pd.DataFrame({"producer_event": column("producer_event", True)[order],
                         "consumer_event": consumer[order],
                         "kind": column("kind", False)[order]})


ANALYSES = (Analysis("flow_links", host=host_flow_links, combine=combine_flow_links,
                     needs=("event_offsets",), host_cost=0.5),)
