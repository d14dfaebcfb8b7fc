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
    host = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy()) & ~hd.derived_lines()
    done = hd.rows_on_lines(host, hd.name_table(lambda s: s.str.startswith(END_PREFIX)
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
    """Self time of each op event ``rows`` whose time is ``total`` (aligned with ``rows``).

    Each row walks up its ancestors while they are not ops (at most _MAX_DEPTH steps; a step
    reads only the rows still walking), then gives its time to the op it stopped at.  The
    tables per event have one entry more, for parent -1 (no parent: where a walk ends)."""
    is_op = np.zeros(len(hd) + 1, dtype=bool)
    is_op[rows] = True
    is_op[-1] = True
    parent = hd.nesting_parent()
    node = parent[rows]
    live = np.flatnonzero(~is_op[node])
    for _ in range(_MAX_DEPTH):
        if not len(live):
            break
        up = parent[node[live]]
        node[live] = up
        live = live[~is_op[up]]
    child = np.zeros(len(hd) + 1, dtype=np.int64)
    np.add.at(child, node, total)  # (parent -1: the last entry, which no row reads)
    return np.maximum(total - child[rows], 0)
