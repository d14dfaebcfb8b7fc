"""A host thread waiting for a CPU program's result (JAX on XLA:CPU).

PjRt marks a wait on a buffer with two ``CommonPjRtBuffer::Await`` instants of one context id
on the waiting thread: the producer (``_p``) when the wait starts, the consumer (``_c``) when
it returns (inside ``np.asarray(jax.Array)``, ``block_until_ready``).  The program's ops run
on XLA:CPU's threads as events carrying ``hlo_op``.  The consumer's start waits for the last
such op on another thread to end between the two markers (kind ``sync``): the thread's time
there is a wait on the program, which the path then follows.
"""

from __future__ import annotations

import numpy as np

from ..runtime.hostdata.host import HostData

__all__ = ["add_pjrt_waits"]

_AWAIT = "CommonPjRtBuffer::Await"


def _awaits(hd: HostData, g, node_of: np.ndarray):
    """(producer node, consumer node) pairs of the await markers, by context id and thread."""
    out = []
    for side in ("_p", "_c"):
        st = hd.int_stat(side)
        rows = np.asarray(st.rows, np.int64)
        node = node_of[rows]
        keep = (node >= 0) & (hd.name_of(rows) == _AWAIT)
        ids, _ = st.lookup(rows[keep])
        out.append(dict(zip(zip(ids.tolist(), g.resource[node[keep]].tolist()),
                            node[keep].tolist())))
    pairs = [(p, out[1][k]) for k, p in out[0].items() if k in out[1]]
    return np.asarray(pairs, np.int64).reshape(-1, 2)


def add_pjrt_waits(g, hd: HostData, node_of: np.ndarray, sync_kind: int) -> None:
    """Sets each consumer marker's ``start_src`` (see the module doc)."""
    if not hd.has_stat("hlo_op") or not hd.has_stat("_c"):
        return
    pairs = _awaits(hd, g, node_of)
    ops = node_of[np.asarray(hd.str_stat("hlo_op").rows, np.int64)]
    ops = ops[(ops >= 0)]
    ops = ops[~g.is_device[ops]]
    if not len(pairs) or not len(ops):
        return
    ops = ops[np.argsort(g.end[ops], kind="stable")]
    ends = g.end[ops]
    prod, cons = pairs[:, 0], pairs[:, 1]
    at = np.searchsorted(ends, g.begin[cons], side="right") - 1
    cand = ops[np.maximum(at, 0)]
    ok = (at >= 0) & (g.end[cand] > g.end[prod]) & (g.resource[cand] != g.resource[cons])
    g.start_src[cons[ok]], g.start_kind[cons[ok]] = cand[ok], sync_kind
