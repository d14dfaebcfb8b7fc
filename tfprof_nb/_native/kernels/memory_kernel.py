"""Memory profile: allocations' sources and what is live at the peak."""

from __future__ import annotations

import numpy as np

from .. import lib
from ._calls import _c, _p

__all__ = ["inherit_from_allocations", "active_at_peak"]


def inherit_from_allocations(is_alloc, address) -> np.ndarray:
    """For each deallocation, the row of the live allocation at its address (-1 if none)."""
    is_alloc, address = _c(is_alloc, np.uint8), _c(address, np.int64)
    source = np.empty(len(address), np.int64)
    if lib().tfp_inherit_from_allocations(len(address), _p(is_alloc), _p(address),
                                          _p(source)) < 0:
        raise MemoryError("out of memory while matching deallocations")
    return source


def active_at_peak(is_alloc, address, step, time, alloc_bytes, peak_time, peak_step):
    """(active flag per row, unattributed bytes) at an allocator's peak."""
    is_alloc = _c(is_alloc, np.uint8)
    address, step, time, alloc_bytes = (_c(a, np.int64) for a in (address, step, time,
                                                                  alloc_bytes))
    active = np.zeros(len(address), np.uint8)
    unmapped = lib().tfp_active_at_peak(len(address), _p(is_alloc), _p(address), _p(step),
                                        _p(time), _p(alloc_bytes), int(peak_time),
                                        int(peak_step), _p(active))
    if unmapped == np.iinfo(np.int64).min:
        raise MemoryError("out of memory at the memory peak")
    return active.astype(bool), int(unmapped)
