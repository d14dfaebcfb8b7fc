"""Where a profile's analysis time goes: one record per host step run here and per combine.

A debugging aid, always on (a record costs a list append): ``Results.timings`` (the
:class:`Timings` of a profile's hosts, ``prof._results.timings``) holds a :class:`Timing` for
every host step run on a thread of this process (``kind="host"``) and every combine
(``kind="combine"``, on the thread that asked), in the order they ended.  ``seconds`` is wall
time, ``cpu_s`` the CPU time of that thread alone (kernels' helper threads not counted);
``start_s`` is ``time.perf_counter()`` at the start, so records of one run line up in time.
Host steps run on Dask workers are not recorded.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import NamedTuple

__all__ = ["Timing", "Timings"]


class Timing(NamedTuple):
    kind: str  # "host" (a host step) or "combine"
    name: str  # the analysis
    host: str | None  # the host of a host step (None for a combine)
    thread: str  # the thread it ran on
    start_s: float  # time.perf_counter() at its start
    seconds: float  # wall time
    cpu_s: float  # CPU time of its thread


class Timings:
    """The :class:`Timing` records of one profile, appended from any thread."""

    def __init__(self):
        self._records: list[Timing] = []
        self._lock = threading.Lock()

    @contextmanager
    def timed(self, kind: str, name: str, host: str | None = None):
        """Record the time the ``with`` block takes (also when it raises)."""
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            record = Timing(kind, name, host, threading.current_thread().name, start,
                            time.perf_counter() - start, time.thread_time() - cpu)
            with self._lock:
                self._records.append(record)

    @property
    def records(self) -> list[Timing]:
        """Every record so far, in the order they ended."""
        with self._lock:
            return list(self._records)
