"""Planes and lines: the part of :class:`~.host.HostData` that places events (which plane
and line each one is on, the events of chosen lines, line keys shared by a plane's lines of
one id, and the lines the profiler derives)."""

from __future__ import annotations

import numpy as np

from ...._native.kernels import code_counts, line_name_rows
from ....constants import COUNTERS_LINE
from .host_core import HostCore, code_mask

__all__ = ["HostLines"]

_DERIVED_LINE_LOW = 0xDEADBEEF  # the profiler's derived lines (Steps, TensorFlow Ops, ...)


class HostLines(HostCore):
    """Plane names and masks, per-line counts and masks, line keys, the events on chosen
    lines (:meth:`rows_on_lines` reads name codes too: :class:`~.host_names.HostNames`)."""

    @property
    def plane_names(self) -> list[str]:
        return self.space.plane_names

    def plane_mask(self, predicate) -> np.ndarray:
        """bool per event whose plane name satisfies ``predicate`` (a function of a Series)."""
        return self.line_mask(self.plane_lines(predicate))

    def plane_lines(self, predicate) -> np.ndarray:
        """bool per decoded line whose plane name satisfies ``predicate``."""
        import pandas as pd  # (here: decoding imports HostData before pandas is imported)

        planes = pd.Series(self.plane_names, dtype=object)
        ok = np.asarray(predicate(planes), dtype=bool)
        return ok[self.space.line_plane] if len(ok) else np.zeros(0, bool)

    def rows_on_lines(self, line_ok: np.ndarray, name_ok: np.ndarray | None = None) -> np.ndarray:
        """int32 rows (increasing) of the events on the decoded lines ``line_ok`` (bool per
        line) whose name code is in ``name_ok`` (bool per name; None: any)."""
        if name_ok is None:
            name_ok = np.ones(len(self.names), bool)
        if not len(line_ok) or not line_ok.any() or not name_ok.any():
            return np.empty(0, np.int32)
        cap = min(int(self.line_counts[line_ok].sum()), int(self.name_counts[name_ok].sum()))
        return line_name_rows(self.space.events.line, self.name_code, line_ok, name_ok, cap)

    @property
    def line_counts(self) -> np.ndarray:
        """int64 number of events on each decoded line."""
        known = self.space.events.line_counts  # (counted by the decoder)
        if known is not None and len(known) == len(self.space.line_ids):
            return known
        return self._cached("line_counts", lambda: code_counts(self.space.events.line,
                                                               len(self.space.line_ids)))

    def plane_is(self, name: str) -> np.ndarray:
        return self.plane_mask(lambda s: (s == name).to_numpy())

    def line_mask(self, line_ok: np.ndarray) -> np.ndarray:
        """bool per event from a bool per decoded line."""
        return code_mask(self.space.events.line, line_ok, len(self))

    def plane_of(self, rows) -> np.ndarray:
        """Plane names of event ``rows``."""
        planes = np.asarray(self.plane_names, dtype=object)
        return planes[self.space.line_plane[self.space.events.line[rows]]]

    @property
    def line_key(self) -> np.ndarray:
        """int32 per decoded line: lines of one plane with the same id share a key."""
        def build():
            import pandas as pd

            sp = self.space
            key = sp.line_plane.astype(np.int64) * (2**32) + (sp.line_ids & 0xFFFFFFFF)
            return pd.factorize(key)[0].astype(np.int32)
        return self._cached("line_key", build)

    @property
    def line(self) -> np.ndarray:
        """int32 line key of every event (see :attr:`line_key`; the decoded line index itself
        when no two lines share a key)."""
        def build():
            key = self.line_key
            if np.array_equal(key, np.arange(len(key))):
                return self.space.events.line
            return key[self.space.events.line]
        return self._cached("line", build)

    @property
    def n_lines(self) -> int:
        return int(self.line_key.max()) + 1 if len(self.line_key) else 0

    def derived_line_mask(self) -> np.ndarray:
        """bool per event on a line the profiler derives (Steps, TensorFlow Ops, ...)."""
        return self.line_mask(self.derived_lines())

    def counter_line_mask(self) -> np.ndarray:
        """bool per event on a ``_counters_`` line: hardware counter samples (CUPTI's PM
        sampling, TPU unit utilisation), not device work."""
        names = np.asarray(self.space.line_names, dtype=object)
        return self.line_mask(names == COUNTERS_LINE) if len(names) else \
            np.zeros(len(self), bool)

    def derived_lines(self) -> np.ndarray:
        """bool per decoded line the profiler derives (Steps, TensorFlow Ops, ...)."""
        low = self.space.line_ids & 0xFFFFFFFF
        return (low >= _DERIVED_LINE_LOW) & (low < _DERIVED_LINE_LOW + 290)
