"""Event names and their codes: the part of :class:`~.host.HostData` that selects events by
name (a predicate evaluated once per distinct name, then the events of the names it keeps)."""

from __future__ import annotations

import numpy as np

from ...._native.kernels import code_counts, code_rows, code_rows_multi
from .host_core import HostCore, code_mask

__all__ = ["HostNames"]


class HostNames(HostCore):
    """Distinct event names (``names``, index: ``name_code``), their counts, and the events
    whose name satisfies a predicate (mask or rows)."""

    @property
    def names(self) -> np.ndarray:
        """Object array of the distinct event names (index: ``name_code``)."""
        return self._cached("names", lambda: np.asarray(self.space.events.names, dtype=object))

    @property
    def name_code(self) -> np.ndarray:
        return self.space.events.name_code

    def name_table(self, predicate) -> np.ndarray:
        """bool per distinct name: ``predicate`` (a function of a Series of names returning
        booleans) evaluated once per name."""
        import pandas as pd  # (here: decoding imports HostData before pandas is imported)

        names = pd.Series(self.names, dtype=object)
        return np.asarray(predicate(names), dtype=bool) if len(names) else np.zeros(0, bool)

    def name_mask(self, predicate) -> np.ndarray:
        """bool per event whose name satisfies ``predicate`` (see :meth:`name_table`)."""
        return code_mask(self.name_code, self.name_table(predicate), len(self))

    def name_rows(self, predicate, also: np.ndarray | None = None) -> np.ndarray:
        """int32 rows (increasing) of the events whose name satisfies ``predicate`` (and
        ``also``, a bool per event, when given), in one pass without a per-event mask."""
        ok = self.name_table(predicate)
        if not ok.any():
            return np.empty(0, np.int32)
        return code_rows(self.name_code, ok, int(self.name_counts[ok].sum()), also)

    def name_rows_many(self, predicates: dict) -> dict:
        """{key: int32 rows (increasing) of the events whose name satisfies the predicate}
        for several predicates ({key: predicate}, see :meth:`name_table`) in one pass over
        the events; names two predicates share are read in a pass of their own."""
        tables = {key: self.name_table(pred) for key, pred in predicates.items()}
        taken = np.zeros(len(self.names), bool)
        together, apart = {}, {}
        for key, ok in tables.items():
            (apart if (ok & taken).any() else together)[key] = ok
            if key in together:
                taken |= ok
        keys = [k for k, ok in together.items() if ok.any()]
        found = code_rows_multi(self.name_code, [together[k] for k in keys],
                                [int(self.name_counts[together[k]].sum()) for k in keys]) \
            if keys else []
        out = {key: np.empty(0, np.int32) for key in tables}
        out.update(zip(keys, found))
        out.update({key: code_rows(self.name_code, ok, int(self.name_counts[ok].sum()))
                    for key, ok in apart.items() if ok.any()})
        return {key: out[key] for key in tables}

    @property
    def name_counts(self) -> np.ndarray:
        """int64 number of events of each name code."""
        known = self.space.events.name_counts  # (counted by the decoder)
        if known is not None and len(known) == len(self.names):
            return known
        return self._cached("name_counts", lambda: code_counts(self.name_code,
                                                               len(self.names)))

    def name_is(self, *values) -> np.ndarray:
        return self.name_mask(lambda s: s.isin(values).to_numpy())

    def name_of(self, rows) -> np.ndarray:
        return self.names[self.name_code[rows]]
