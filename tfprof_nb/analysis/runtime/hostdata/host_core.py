"""The base of every part of :class:`~.host.HostData`: one host's decoded columns, its name
and the cache of the arrays derived from them (each built once, by one thread, and dropped
between steps), and :func:`code_mask`, a bool per event from a table per code."""

from __future__ import annotations

import threading

import numpy as np

from ...._native.kernels import code_lookup
from ....xspace import XSpaceData

__all__ = ["HostCore", "code_mask"]

_LOCKS_LOCK = threading.Lock()


class HostCore:
    """One host's decoded :class:`XSpaceData` (``space``), its ``name``, and the cache of what
    the parts of :class:`~.host.HostData` derive from it (:meth:`_cached`, :meth:`release`).
    """

    def __init__(self, name: str, space: XSpaceData):
        self.name = name
        self.space = space
        self._cache: dict = {}
        self._locks: dict = {}

    def __len__(self) -> int:
        return len(self.space.events)

    def __getstate__(self):  # (Dask may move a host between workers: locks stay behind)
        return {"name": self.name, "space": self.space, "_cache": dict(self._cache)}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._locks = {}

    def _cached(self, key, build):
        value = self._cache.get(key)
        if value is None:  # (another thread's release may drop keys at any time)
            with self._build_lock(key):  # one build when steps on threads need it at once
                value = self._cache.get(key)
                if value is None:
                    value = self._cache[key] = build()
        return value

    def shared(self, key: str, build):
        """``build()``'s value, built once while kept: steps on threads that need it at once
        wait for one build; dropped with the derived arrays when a step ends (release)."""
        return self._cached(key, build)

    def _build_lock(self, key) -> threading.Lock:
        with _LOCKS_LOCK:
            return self._locks.setdefault(key, threading.Lock())

    # kept between the steps of a batch: small per-line and per-name tables
    _CORE = frozenset({"names", "line_key", "line", "name_counts", "line_counts",
                       "in_nesting_order"})

    def release(self, keep_core: bool = False) -> None:
        """Drop the derived arrays (they are rebuilt when needed); ``keep_core`` keeps the
        tables several steps use (see _CORE)."""
        for key in list(self._cache):  # steps of one host may release side by side
            if not (keep_core and key in self._CORE):
                self._cache.pop(key, None)


def code_mask(code: np.ndarray, table: np.ndarray, n: int) -> np.ndarray:
    """bool per event: ``table`` (bool per code) at each event's ``code``, without a pass
    when the table is all false or all true."""
    table = np.asarray(table, dtype=bool)
    if not table.any():
        return np.zeros(n, bool)
    if table.all() and len(code) and int(code.max()) < len(table):
        return np.ones(n, bool)
    return code_lookup(code, table)
