"""The critical path walk of many windows of one dependency graph (critical.c)."""

from __future__ import annotations

import ctypes

import numpy as np

from .. import lib
from ._calls import _c, _p, check

__all__ = ["critical_walk", "SEGMENT_COLUMNS"]

# the columns of the walk's segments, with their dtypes
SEGMENT_COLUMNS = {"window": np.int32, "start": np.int64, "end": np.int64,
                   "resource": np.int32, "category": np.int8, "kind": np.int8,
                   "node": np.int64, "waited_on": np.int64}


def critical_walk(nodes: dict, spans: tuple, codes, t0, t1) -> dict:
    """The segments of windows ``[t0[w], t1[w])`` (see critical.c), in time order within each
    window, windows in order: {column of :data:`SEGMENT_COLUMNS`: array}.  ``nodes``: the
    graph's columns begin, end, parent, resource, category, is_device, start_src, start_kind,
    end_src, end_kind; ``spans``: (resource keys ascending, first node, end node) of each
    resource's run of nodes; ``codes``: the graph's ELEMENT, HOST_WAIT, IDLE, INPUT,
    KERNEL_LAUNCH, LAUNCH, STREAM_WAIT and SYNC codes."""
    cols = [_c(nodes[k], t) for k, t in (
        ("begin", np.int64), ("end", np.int64), ("parent", np.int64), ("resource", np.int32),
        ("category", np.int8), ("is_device", np.uint8), ("start_src", np.int64),
        ("start_kind", np.int8), ("end_src", np.int64), ("end_kind", np.int8))]
    n = len(cols[0])
    if any(len(c) != n for c in cols):
        raise ValueError("critical_walk takes node columns of one length")
    for c in (cols[2], cols[6], cols[8]):  # parent, start_src, end_src: nodes or -1
        if n and (c.min() < -1 or c.max() >= n):
            raise ValueError("critical_walk takes node references in [-1, nodes)")
    keys, lo, hi = _c(spans[0], np.int32), _c(spans[1], np.int64), _c(spans[2], np.int64)
    if len(lo) != len(keys) or len(hi) != len(keys) or (len(keys) and (
            lo.min() < 0 or hi.max() > n or (lo > hi).any() or (keys[1:] <= keys[:-1]).any())):
        raise ValueError("critical_walk takes ascending resource keys, one span (0 <= lo <= hi"
                         " <= nodes) each")
    codes, t0, t1 = _c(codes, np.int64), _c(t0, np.int64), _c(t1, np.int64)
    if len(codes) != 8 or len(t0) != len(t1):
        raise ValueError("critical_walk takes 8 codes and as many ends as starts")
    handle = ctypes.c_void_p()
    count = check(lib().tfp_cp_walk(*(_p(c) for c in cols), len(keys), _p(keys), _p(lo),
                                    _p(hi), _p(codes), len(t0), _p(t0), _p(t1),
                                    ctypes.byref(handle)))
    out = {k: np.empty(count, t) for k, t in SEGMENT_COLUMNS.items()}
    try:
        if count:
            lib().tfp_cp_take(handle, *(_p(out[k]) for k in (
                "window", "start", "end", "resource", "category", "kind", "node",
                "waited_on")))
    finally:
        lib().tfp_cp_free(handle)
    return out
