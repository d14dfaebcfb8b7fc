"""The trace viewer's links: arrows between events that one made happen.

- a GPU kernel (or copy) and the host call that launched it (``prof.result("launch_links")``:
  the join of :mod:`tfprof_nb.analysis.gpu.activity` on ``correlation_id``; TPUs have none);
- TensorFlow's producer -> consumer contexts and tf.data's elements produced -> consumed
  (``prof.result("flow_links")``, :mod:`tfprof_nb.analysis.trace.flow_links`).

Here they become timeline rows, and a selection gets its partners: each with its ``role``
(``to``: the arrow goes from the selection to it; ``from``: from it to the selection) and a
``label`` saying what it is.  The browser outlines them and draws the arrows
(``js/src/timeline/links.ts``, ``arrows.ts``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LINK_KINDS", "MAX_PARTNERS", "TimelineLinks"]

MAX_PARTNERS = 64  # linked events sent for one selection (a graph launch may start hundreds)
# per kind of link: (its name, the label of the arrow's end, the label of its start)
LINK_KINDS = (("launch", "kernel", "launch"),
              ("context", "consumer", "producer"),
              ("element", "tf.data consumer", "tf.data producer"))


class TimelineLinks:
    """The links of a timeline (its profile, index and event id of each row)."""

    def __init__(self, prof, index, event_ids: np.ndarray):
        self.prof = prof
        self.index = index
        self.event_ids = event_ids
        self._pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._by_src: np.ndarray | None = None
        self._by_dst: np.ndarray | None = None

    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source row, end row, kind: an index into LINK_KINDS) of every link whose two
        events are in the timeline, as timeline rows (computed on first use)."""
        if self._pairs is None:
            row_of = np.full(len(self.prof.events), -1, np.int64)
            row_of[self.event_ids] = np.arange(len(self.event_ids))
            launches = self.prof.result("launch_links")
            flows = self.prof.result("flow_links")
            src = np.concatenate([launches["launch_event"].to_numpy(np.int64),
                                  flows["producer_event"].to_numpy(np.int64)])
            dst = np.concatenate([launches["kernel_event"].to_numpy(np.int64),
                                  flows["consumer_event"].to_numpy(np.int64)])
            kind = np.concatenate([np.zeros(len(launches), np.int8),
                                   flows["kind"].to_numpy(np.int8) + 1])
            src, dst = row_of[src], row_of[dst]
            keep = (src >= 0) & (dst >= 0)
            self._pairs = (src[keep], dst[keep], kind[keep])
        return self._pairs

    def _partners(self, row: int) -> list[tuple[int, str, str]]:
        """(row, role, label) of the events linked to ``row``: arrows' ends, then starts."""
        src, dst, kind = self.rows()
        if self._by_src is None:
            self._by_src = np.argsort(src, kind="stable")
            self._by_dst = np.argsort(dst, kind="stable")
        out = []
        for ends, order, other, role, label in ((src, self._by_src, dst, "to", 1),
                                                (dst, self._by_dst, src, "from", 2)):
            lo, hi = np.searchsorted(ends[order], [row, row + 1])
            for k in order[lo:hi].tolist():
                out.append((int(other[k]), role, LINK_KINDS[kind[k]][label]))
        return out

    def of(self, row: int) -> dict:
        """The events linked to timeline row ``row`` (``event``: its own row, start, dur in
        us and name), at most MAX_PARTNERS (``more``: how many are left)."""
        out = {"row": int(row), "partners": [], "more": 0}
        if self.index is None or not 0 <= row < len(self.index):
            return out
        found = self._partners(row)
        out["event"] = self._info(row)
        out["partners"] = [{**self._info(r), "role": role, "label": label}
                           for r, role, label in found[:MAX_PARTNERS]]
        out["more"] = max(len(found) - MAX_PARTNERS, 0)
        return out

    def _info(self, row: int) -> dict:
        idx = self.index
        return {"row": int(row), "start": float(idx.start[row]), "dur": float(idx.dur[row]),
                "name": idx.names[idx.name[row]]}
