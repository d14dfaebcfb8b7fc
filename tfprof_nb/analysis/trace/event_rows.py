"""A few events' plane, name and duration by global event id, read from the decoded columns
without building ``prof.events`` (the whole table: about 52 bytes an event)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = ["EVENT_ROW_COLUMNS", "event_rows"]

EVENT_ROW_COLUMNS = ["plane", "name", "duration_us"]


def event_rows(spaces: Mapping, offsets: Mapping[str, int], ids) -> pd.DataFrame:
    """The events ``ids`` (global ids, as ``prof.events``' index) of ``spaces`` ({host:
    XSpaceData}, ``offsets`` their first global ids): their plane, name and duration_us,
    indexed by id in the order given; ids past the last event are an IndexError."""
    ids = np.asarray(ids, dtype=np.int64)
    plane = np.empty(len(ids), dtype=object)
    name = np.empty(len(ids), dtype=object)
    duration = np.full(len(ids), np.nan)
    seen = np.zeros(len(ids), dtype=bool)
    for host, space in spaces.items():
        ev = space.events
        local = ids - offsets[host]
        mine = (local >= 0) & (local < len(ev))
        if not mine.any():
            continue
        rows = local[mine]
        plane[mine] = np.asarray(space.plane_names, dtype=object)[ev.line_plane[ev.line[rows]]]
        name[mine] = np.asarray(ev.names, dtype=object)[ev.name_code[rows]]
        duration[mine] = ev.duration_ps[rows] / 1e6
        seen |= mine
    if not seen.all():
        raise IndexError(f"no event with id {int(ids[~seen][0])}")
    return pd.DataFrame({"plane": plane, "name": name, "duration_us": duration},
                        index=pd.Index(ids, name="event"))
