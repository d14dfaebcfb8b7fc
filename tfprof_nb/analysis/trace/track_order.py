"""The order of the trace viewer's sections and tracks: XProf's trace viewer order.

XProf's trace viewer gives each plane a process id and each line a thread id, and sorts by
them (``xplane_to_trace_container.cc``, ``trace_events_to_json``): device planes (GPU and TPU)
first, by plane id; then the host threads planes, by name; then custom planes
(``/device:CUSTOM:``), by plane id.  Within a plane the lines go by display id (the line id
when it has none) taken as an unsigned 32-bit number: on a TPU ``Steps``, ``XLA Modules``,
``XLA Ops``, ``Async XLA Ops``, ``XLA TraceMe``; on a GPU its streams, then the profiler's
derived lines (ids from 0xdeadbeef: ``Steps``, ``TensorFlow Name Scope``, ``TensorFlow Ops``,
``XLA Modules``, ``XLA Ops``, ...); host threads by thread id.  Hosts keep the profile's
order; planes XProf does not show come last, in file order; ties keep the file's order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import CUSTOM_PLANE_PREFIX, DEVICE_PLANE_PREFIXES, HOST_PLANE
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "TRACK_ORDER_COLUMNS", "plane_rank", "track_order"]

TRACK_ORDER_COLUMNS = ["host", "plane", "line_id", "order"]
DEVICE, HOST_THREADS, CUSTOM, OTHER = 0, 1, 2, 3  # plane groups, in display order


def _plane_group(names: pd.Series) -> np.ndarray:
    """The display group of each plane name."""
    device = names.str.startswith(tuple(p + ":" for p in DEVICE_PLANE_PREFIXES))
    return np.select([device.to_numpy(), names.str.startswith(HOST_PLANE).to_numpy(),
                      names.str.startswith(CUSTOM_PLANE_PREFIX).to_numpy()],
                     [DEVICE, HOST_THREADS, CUSTOM], OTHER).astype(np.int64)


def plane_rank(planes: pd.DataFrame, hosts: list[str]) -> np.ndarray:
    """The display position of each row of a planes table (host, plane, plane_id): hosts in
    ``hosts`` order, then XProf's plane order (see the module doc)."""
    if not len(planes):
        return np.empty(0, np.int64)
    names = planes["plane"].astype(str).reset_index(drop=True)
    group = _plane_group(names)
    by_id = np.isin(group, (DEVICE, CUSTOM))
    name_rank = pd.Series(names).rank(method="dense").to_numpy(np.int64)
    key = np.where(by_id, planes["plane_id"].to_numpy(np.int64),
                   np.where(group == HOST_THREADS, name_rank, 0))
    host = pd.Categorical(planes["host"].astype(str), categories=hosts).codes.astype(np.int64)
    order = np.lexsort((np.arange(len(planes)), key, group, host))
    rank = np.empty(len(planes), np.int64)
    rank[order] = np.arange(len(planes))
    return rank


def track_order(parts: dict, planes: pd.DataFrame, lines: pd.DataFrame) -> pd.DataFrame:
    """One row per line (host, plane, line_id) and its ``order``: the position of its track
    in the trace viewer (0 first)."""
    if not len(lines):
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("host", "plane") else "int64")
                             for c in TRACK_ORDER_COLUMNS})
    hosts = list(dict.fromkeys(planes["host"].astype(str)))
    ranked = planes[["host", "plane"]].assign(plane_rank=plane_rank(planes, hosts))
    ranked = ranked.drop_duplicates(["host", "plane"])  # two planes of one name: the first
    table = lines[["host", "plane", "line_id", "display_id"]].reset_index(drop=True)
    table = table.merge(ranked, on=["host", "plane"], how="left", sort=False)
    display = table["display_id"].to_numpy(np.int64)
    shown = np.where(display != 0, display, table["line_id"].to_numpy(np.int64))
    line_key = shown & 0xFFFFFFFF  # XProf's thread ids are unsigned 32-bit
    plane_key = table["plane_rank"].fillna(len(planes)).to_numpy(np.int64)
    order = np.lexsort((np.arange(len(table)), line_key, plane_key))
    rank = np.empty(len(table), np.int64)
    rank[order] = np.arange(len(table))
    return pd.DataFrame({"host": table["host"].astype(str), "plane": table["plane"].astype(str),
                         "line_id": table["line_id"].to_numpy(np.int64), "order": rank})


ANALYSES = (Analysis("track_order", combine=track_order, needs=("planes", "lines")),)
