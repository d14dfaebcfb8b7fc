"""The trace viewer's links: each GPU kernel (or copy) and the host call that launched it.

``prof.result("launch_links")`` pairs them by event id (the join of
:mod:`tfprof_nb.analysis.gpu_activity` on ``correlation_id``); here they become timeline rows,
and a selection gets its partners: the kernels of a launch, the launch of a kernel.  The
browser outlines them and draws an arrow from launch to kernel (``js/src/timeline/links.ts``,
``arrows.ts``).  TPUs have no launches: nothing is linked.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_PARTNERS", "LaunchLinks"]

MAX_PARTNERS = 64  # linked events sent for one selection (a graph launch may start hundreds)


class LaunchLinks:
    """The launch links of a timeline (its profile, index and event id of each row)."""

    def __init__(self, prof, index, event_ids: np.ndarray):
        self.prof = prof
        self.index = index
        self.event_ids = event_ids
        self._rows: tuple[np.ndarray, np.ndarray] | None = None

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(launch row, kernel row) of every host launch linked to its device event, as
        timeline rows (computed on first use)."""
        if self._rows is None:
            pairs = self.prof.result("launch_links")
            row_of = np.full(len(self.prof.events), -1, np.int64)
            row_of[self.event_ids] = np.arange(len(self.event_ids))
            self._rows = (row_of[pairs["launch_event"].to_numpy(np.int64)],
                          row_of[pairs["kernel_event"].to_numpy(np.int64)])
        return self._rows

    def of(self, row: int) -> dict:
        """The events linked to timeline row ``row`` (``event``: its own row, start, dur in
        us and name): its kernels when it is a launch (role ``kernel``), its launch when it
        is a kernel (role ``launch``), at most MAX_PARTNERS (``more``: how many are left)."""
        out = {"row": int(row), "partners": [], "more": 0}
        if self.index is None or not 0 <= row < len(self.index):
            return out
        launch, kernel = self.rows()
        found = [(r, "kernel") for r in kernel[launch == row].tolist()] + \
            [(r, "launch") for r in launch[kernel == row].tolist()]
        out["event"] = self._info(row)
        out["partners"] = [{**self._info(r), "role": role} for r, role in found[:MAX_PARTNERS]]
        out["more"] = max(len(found) - MAX_PARTNERS, 0)
        return out

    def _info(self, row: int) -> dict:
        idx = self.index
        return {"row": int(row), "start": float(idx.start[row]), "dur": float(idx.dur[row]),
                "name": idx.names[idx.name[row]]}
