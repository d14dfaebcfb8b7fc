"""What a selecting decode keeps of a host (:class:`Selection`): some lines, and of those the
events overlapping a time window, so that a part of a host bigger than memory can be opened.

The decoder's walk (``_native/walk.c``, ``tfp_space_frame``) reads every event's times while
it frames the lines and gives rows only to the events kept; the others cost no memory.  An
event is kept when its line is, and when it overlaps its line's window ``[lo, hi]`` (offsets
in ps relative to the line's timestamp): ``offset <= hi`` and ``offset + duration >= lo``.
Kept events are whole (an event crossing an edge keeps its start and duration).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Selection"]


@dataclass
class Selection:
    """Per line of the host (in file order): ``keep`` (bool) and the window ``lo``, ``hi``
    (int64 ps, relative to the line's timestamp).  ``keep`` None keeps no event (a scan: the
    host's planes, lines, metadata and, per line, its events in the file and their span).
    ``check(kept, in_file, stats)``, when given, is called with the events kept, those in
    the file and the stats of the kept events once they are counted, before any event or
    stat column is made: it may refuse (raise)."""

    keep: np.ndarray | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    check: Callable[[int, int, int], None] | None = None
    # what the user asked for, kept with the decoded host: the window in ps on the host's own
    # axis (relative to its origin; None: the whole time) and the line patterns (None: all)
    window_ps: tuple[int, int] | None = None
    lines: list[str] | None = None

    @classmethod
    def scan(cls) -> "Selection":
        """Keep no event: what a host holds, without its events."""
        return cls()

    def arrays(self, n_lines: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(keep uint8, lo int64, hi int64) for a host of ``n_lines`` lines; None when the
        selection was made for another number of lines (the file changed since)."""
        if self.keep is None:
            zeros = np.zeros(max(n_lines, 1), np.int64)
            return np.zeros(max(n_lines, 1), np.uint8), zeros, zeros.copy()
        if len(self.keep) != n_lines:
            return None
        return (np.ascontiguousarray(self.keep, np.uint8), np.ascontiguousarray(self.lo, np.int64),
                np.ascontiguousarray(self.hi, np.int64))
