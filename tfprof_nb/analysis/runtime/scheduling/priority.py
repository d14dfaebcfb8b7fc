"""Thread priorities: a worker running a step off one host's critical path yields its core to
the critical path's threads (:func:`yield_to_critical_path`; the monitor's background
analysis uses it too)."""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["yield_to_critical_path", "YIELDING_NICE"]

def yield_to_critical_path() -> None:
    """Lower this worker thread's priority for the rest of its life (Linux: a thread's nice
    value; threads it starts inherit it): a step off one host's critical path then takes a
    core only when the critical path's threads leave it free, instead of slowing them down
    by sharing it.  The workers of a batch end with it, so nothing stays lowered.  Elsewhere
    (where the call would lower the whole process), or when refused, nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < YIELDING_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, YIELDING_NICE)
    except OSError:
        pass


YIELDING_NICE = 19  # CFS weight 15 against nice 0's 1024
