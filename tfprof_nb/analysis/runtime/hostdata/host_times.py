"""Event times: the part of :class:`~.host.HostData` that says when each event is (start and
duration in picoseconds relative to the host's own origin, ``space.origin_ns``; analyses add
the profile's shift for the host to what they return)."""

from __future__ import annotations

import numpy as np

from ...._native.kernels import span
from .host_core import HostCore

__all__ = ["HostTimes"]


class HostTimes(HostCore):
    """``begin``, ``duration``, ``end_of(rows)`` and the host's ``span()``."""

    @property
    def begin(self) -> np.ndarray:
        """int64 start of every event in ps relative to the host's origin."""
        return self.space.events.start_ps

    @property
    def duration(self) -> np.ndarray:
        return self.space.events.duration_ps

    def span(self) -> tuple[int, int]:
        """(earliest start, latest end) of the host's events in ps ((0, 0) without events);
        the decoder's when it found it."""
        ev = self.space.events
        if not len(ev):
            return 0, 0
        if ev.span_ps is None:
            ev.span_ps = span(self.begin, self.duration)
        return ev.span_ps

    def end_of(self, rows) -> np.ndarray:
        return self.begin[rows] + self.duration[rows]
