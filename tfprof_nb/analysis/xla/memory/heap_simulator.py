"""Replaying an XLA heap simulator trace as XProf's memory viewer does.

A ``HeapSimulatorTrace`` lists, in the compiler's program order, ALLOC, FREE and SHARE_WITH
events of logical buffers.  A SHARE_WITH reuses the memory of a canonical buffer (possibly a
sharer itself); the memory is released when the last buffer sharing it is freed, and a share
after that brings it back.  :func:`simulate` replays a trace without a per-event loop: roots of
the SHARE_WITH chains by pointer jumping, reference counts as a cumulative sum per root, the
heap as a cumulative sum of size changes; :func:`live_at` lists what is live at an event.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["ALLOC", "FREE", "SHARE_WITH", "TraceError", "events_of", "live_at", "simulate",
           "trace_of"]

ALLOC, FREE, SHARE_WITH = 0, 1, 2


def trace_of(ba, allocs: pd.DataFrame, buffers: pd.DataFrame, color: int) -> int:
    """Index of the heap simulator trace of memory space ``color`` (-1: none).  A trace
    belongs to the allocation of its first event's buffer; the space's first temporary
    allocation with a trace wins, else the trace with the most events of that space."""
    alloc_of = dict(zip(buffers.id.tolist(), buffers.allocation.tolist()))
    trace_of_alloc: dict = {}
    traces = list(ba.heap_simulator_traces)
    for i, trace in enumerate(traces):
        if len(trace.events) and trace.events[0].buffer_id in alloc_of:
            trace_of_alloc[alloc_of[trace.events[0].buffer_id]] = i
    own = allocs[(allocs.color == color) & ~allocs.indefinite].sort_values("index")
    for index in own["index"].tolist():
        if index in trace_of_alloc:
            return trace_of_alloc[index]
    ids_of_color = buffers.id[buffers.color == color].to_numpy()
    best, best_count = -1, 0
    for i, trace in enumerate(traces):
        ids = np.fromiter((e.buffer_id for e in trace.events), np.int64, len(trace.events))
        count = int(np.isin(ids, ids_of_color).sum())
        if count > best_count:
            best, best_count = i, count
    return best


def events_of(trace) -> dict:
    """The trace's events as columns."""
    events = list(trace.events)
    return {"kind": np.fromiter((e.kind for e in events), np.int64, len(events)),
            "buffer": np.fromiter((e.buffer_id for e in events), np.int64, len(events)),
            "canonical": np.fromiter((e.share_with_canonical_id for e in events), np.int64,
                                     len(events)),
            "instruction": [e.instruction_name for e in events],
            "computation": [e.computation_name for e in events]}


class TraceError(ValueError):
    """A heap simulator trace XProf's rules cannot replay (the memory viewer fails on it)."""


def _roots(parent: np.ndarray) -> np.ndarray:
    """The root of every node of a forest given by ``parent`` (pointer jumping)."""
    root = parent.copy()
    for _ in range(64):
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root
        root = nxt
    raise TraceError("SHARE_WITH events form a cycle")


def simulate(ev: dict, ids: np.ndarray, allocation: np.ndarray, size: np.ndarray,
              unpadded: np.ndarray) -> dict:
    """Replay the trace (buffers as positions in the sorted ``ids``): per event the change of
    the heap (bytes, unpadded bytes), whether it made its root live (``increase``) or freed it
    (``decrease``), its root, and the event's buffer position."""
    kind, n = ev["kind"], len(ev["kind"])
    if np.any((kind < ALLOC) | (kind > SHARE_WITH)):
        raise TraceError(f"unhandled event kind {int(kind[(kind < 0) | (kind > 2)][0])}")
    pos = np.minimum(np.searchsorted(ids, ev["buffer"]), max(len(ids) - 1, 0))
    known = (ids[pos] == ev["buffer"]) if len(ids) else np.zeros(n, bool)
    cpos = np.minimum(np.searchsorted(ids, ev["canonical"]), max(len(ids) - 1, 0))
    share = kind == SHARE_WITH
    valid = known & ~(share & ~((ids[cpos] == ev["canonical"]) if len(ids) else False))
    seen = np.unique(allocation[pos[known]])
    if len(seen) != 1:
        raise TraceError("all heap simulation should work out of a single buffer allocation, "
                         f"this trace uses {len(seen)}")
    parent = np.arange(len(ids))
    linked = valid & share
    parent[pos[linked]] = cpos[linked]
    root = np.where(valid, _roots(parent)[pos], -1)
    step = np.where(kind == FREE, -1, 1) * valid
    count = pd.Series(step).groupby(root).cumsum().to_numpy()
    if np.any(valid & (count < 0)):
        bad = int(ev["buffer"][np.flatnonzero(valid & (count < 0))[0]])
        raise TraceError(f"buffer {bad} is freed more times than it is allocated")
    increase = valid & ((kind == ALLOC) | (share & (count == 1)))
    decrease = valid & (kind == FREE) & (count == 0)
    changed = np.where(kind == ALLOC, pos, np.maximum(root, 0))
    sign = increase.astype(np.int64) - decrease.astype(np.int64)
    delta = sign * size[changed]
    heap = np.cumsum(delta)
    if np.any(heap < 0):
        raise TraceError("the heap size becomes negative")
    return {"delta": delta, "heap": heap, "unpadded": np.cumsum(sign * unpadded[changed]),
            "increase": increase, "decrease": decrease, "root": root, "pos": pos,
            "valid": valid}


def live_at(sim: dict, kind: np.ndarray, peak: int) -> pd.DataFrame:
    """The heap buffers live after event ``peak``, in program order: the event that made each
    live (``at``), the buffer shown (``pos``: the sharer when a share brought the memory
    back) and, as XProf draws its lifetime, the event that ends it (``end``: a sharer's own
    FREE, an allocated buffer's first release; the last event if none)."""
    n = len(kind)
    change = np.flatnonzero(sim["increase"] | sim["decrease"])
    before = change[change <= peak]
    frame = pd.DataFrame({"at": before, "root": sim["root"][before],
                          "live": sim["increase"][before]})
    last = frame.drop_duplicates("root", keep="last")
    last = last[last.live].sort_values("at")
    released = change[sim["decrease"][change]]
    first_release = pd.Series(released, index=sim["root"][released]).groupby(level=0).first()
    frees = np.flatnonzero(sim["valid"] & (kind == FREE))
    own_free = pd.Series(frees, index=sim["pos"][frees]).groupby(level=0).last()
    out = last.reset_index(drop=True)
    out["pos"] = sim["pos"][out["at"].to_numpy()]
    allocated = kind[out["at"].to_numpy()] == ALLOC
    end = np.where(allocated, first_release.reindex(out.root.to_numpy()).to_numpy(),
                   own_free.reindex(out.pos.to_numpy()).to_numpy())
    out["end"] = np.where(np.isnan(end), n - 1, end).astype(np.int64)
    return out
