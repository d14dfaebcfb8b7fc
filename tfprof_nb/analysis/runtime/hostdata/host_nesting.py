"""Nesting: the part of :class:`~.host.HostData` that finds which event contains which on
the same line (the order nesting walks visit events in, each event's innermost parent, or
parents and flagged ancestors at chosen rows only); async events (``_a`` set) never nest.
It reads lines and times (:class:`~.host_lines.HostLines`, :class:`~.host_times.HostTimes`)
and the ``_a`` stat (:class:`~.host_stats.HostStats`)."""

from __future__ import annotations

import numpy as np

from ...._native.kernels import nest_query, nest_strict, nesting_order_or_none
from .host_core import HostCore

__all__ = ["HostNesting"]


class HostNesting(HostCore):
    """``nesting_order``, ``nesting_parent`` and ``nesting_parent_at``."""

    def _async_skip(self) -> np.ndarray | None:
        """uint8 per event: async (``_a`` set; never nested), None when no event is."""
        a = self.int_stat("_a")
        async_rows = a.rows[a.values != 0]
        if not len(async_rows):
            return None
        skip = np.zeros(len(self), np.uint8)
        skip[async_rows] = 1
        return skip

    def nesting_parent_at(self, rows: np.ndarray, ancestor_name: np.ndarray | None = None,
                          ancestor_flag: np.ndarray | None = None, levels: int = 64,
                          parents: bool = True):
        """:meth:`nesting_parent` at event ``rows`` only (increasing, repeats allowed), in one
        walk without a parent per event: (parents int32 or None unless ``parents``, found)
        where, with ``ancestor_name`` (bool per name code) given, found is ``ancestor_flag``
        (bool per event) of each row's first ancestor within ``levels`` whose name has the
        flag (False when none), else None."""
        line, begin, dur = self.line, self.begin, self.duration
        return nest_query(self.nesting_order(), line, begin, dur, self._async_skip(), rows,
                          self.name_code, ancestor_name, ancestor_flag, levels, parents)

    def nesting_order(self) -> np.ndarray | None:
        """int32 rows by (line, begin, longest first), the order nesting walks visit events
        in; None when the rows are in it already (as files usually are: found once per host,
        the order itself while steps need it)."""
        if self._cache.get("in_nesting_order") is True:
            return None

        def build():
            known = self.space.events.in_nesting_order
            if known and self.line is self.space.events.line:  # (found by the decoder)
                order = None
            else:
                order = nesting_order_or_none(self.line, self.begin, self.duration)
            self._cache["in_nesting_order"] = order is None
            return (order,)
        return self._cached("nesting_order", build)[0]

    def nesting_parent(self) -> np.ndarray:
        """int32 innermost event on the same line that fully contains each event (-1: none);
        async events (``_a`` set) are left out.  Computed once."""
        def build():
            n = len(self)
            line, begin, dur = self.line, self.begin, self.duration
            empty = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
            return nest_strict(self.nesting_order(), n, (line, begin, dur), empty,
                               self._async_skip())
        return self._cached("parent", build)
