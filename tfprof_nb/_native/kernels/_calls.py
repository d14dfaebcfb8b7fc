"""Return codes, thread counts and array arguments of the kernel wrappers."""

from __future__ import annotations

import os

import numpy as np

from ...errors import Cancelled
from ..layout import ERR, N_STEP_TYPES

__all__ = ["check", "N_TYPES", "ERR_CANCELLED"]


ERR_CANCELLED = ERR.CANCELLED

N_TYPES = N_STEP_TYPES  # step-time event types (see analysis.steps.breakdown)


def check(rc: int) -> int:
    """A kernel's return code: raises Cancelled when its run's cancel token stopped it (see
    :class:`tfprof_nb._native.CancelToken`), MemoryError for other negative codes."""
    if rc == ERR_CANCELLED:
        raise Cancelled("interrupted")
    if rc < 0:
        raise MemoryError("out of memory in a native kernel")
    return rc


def _threads(threads: int | None) -> int:
    """Threads a kernel splits its work over: one per core unless told."""
    return max(1, int(threads) if threads is not None else (os.cpu_count() or 1))


def _c(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` contiguous as ``dtype`` (an input of a kernel), copied only when it must be: a
    bool array read as uint8 is a view of the same bytes, not a cast."""
    a = np.asarray(a)
    if a.dtype == np.bool_ and np.dtype(dtype) == np.uint8:
        return np.ascontiguousarray(a).view(np.uint8)
    return np.ascontiguousarray(a, dtype=dtype)


def _p(a: np.ndarray) -> int:
    """The address of ``a``'s data: ``a`` must stay referenced (a local) until the C call
    returns, never a temporary made in the call's arguments."""
    return a.ctypes.data
