"""Two rules shared by the per-op tables: when an op event really ends, and its self time.

* An XLA:CPU thunk that completes asynchronously ends with its ``end: <op>`` event (linked
  to it by the flow stats ``_p`` -> ``_c``), when that is later than its own end.
* An op event's self time is its time less that of the op events nested in it: each nested
  op gives its time to its nearest op ancestor on the same line (events that are not ops in
  between are skipped).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import HOST_PLANE
from ..runtime.hostdata.host import HostData

__all__ = ["END_PREFIX", "thunk_ends", "self_times"]

END_PREFIX = "end: "
_MAX_DEPTH = 64


def thunk_ends(hd: HostData, rows: np.ndarray) -> np.ndarray:
    """The end of each event ``rows`` (ps, host axis), its ``end: <op>`` event's where later."""
    end = hd.end_of(rows)
    host = hd.plane_is(HOST_PLANE) & ~hd.derived_line_mask()
    done = np.flatnonzero(host & hd.name_mask(lambda s: s.str.startswith(END_PREFIX)
                                              .to_numpy()))
    if not len(done) or not len(rows):
        return end
    c_val, c_has = hd.int_stat("_c").lookup(done)
    p_val, p_has = hd.int_stat("_p").lookup(rows)
    finish = pd.Series(hd.end_of(done[c_has]), index=c_val[c_has])
    finish = finish[~finish.index.duplicated(keep="last")]
    pos = finish.index.get_indexer(np.where(p_has, p_val, -1))
    linked = (pos >= 0) & p_has
    return np.where(linked, np.maximum(end, finish.to_numpy()[np.maximum(pos, 0)]), end)


def self_times(hd: HostData, rows: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Self time of each op event ``rows`` whose time is ``total`` (aligned with ``rows``)."""
    is_op = np.zeros(len(hd), dtype=bool)
    is_op[rows] = True
    parent = hd.nesting_parent()
    node = parent[rows].astype(np.int64)
    for _ in range(_MAX_DEPTH):
        walk = (node >= 0) & ~is_op[np.maximum(node, 0)]
        if not walk.any():
            break
        node = np.where(walk, parent[np.maximum(node, 0)], node)
    child = np.zeros(len(hd), dtype=np.int64)
    nested = node >= 0
    np.add.at(child, node[nested], total[nested])
    return np.maximum(total - child[rows], 0)
