"""The trace's planes and lines as tables (``planes``, ``lines``), from each host's ``info``."""

from __future__ import annotations

import pandas as pd

from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "planes_table", "lines_table", "PLANE_COLUMNS", "LINE_COLUMNS"]

PLANE_COLUMNS = ["host", "plane", "plane_id", "lines", "events", "stats"]
LINE_COLUMNS = ["host", "plane", "line", "line_id", "display_name", "display_id", "start_us",
                "events"]


def planes_table(parts: dict, info: dict) -> pd.DataFrame:
    """One row per plane: host, plane, plane_id, lines, events, and its plane-level stats."""
    rows = [{"host": h, **p} for h, i in info.items() for p in i["planes"]]
    return pd.DataFrame(rows, columns=PLANE_COLUMNS)


def lines_table(parts: dict, info: dict, shifts: dict) -> pd.DataFrame:
    """One row per line (thread or stream): host, plane, line, line_id, display name, display
    id, start_us (on the profile's time axis) and events."""
    frames = [pd.DataFrame({
        "host": h, "plane": i["lines"].plane, "line": i["lines"].line,
        "line_id": i["lines"].line_id, "display_name": i["lines"].display_name,
        "display_id": i["lines"].display_id,
        "start_us": (i["lines"].start_ps + shifts[h]) / 1e6, "events": i["lines"].events})
        for h, i in info.items()]
    return pd.concat(frames, ignore_index=True)[LINE_COLUMNS] if frames else \
        pd.DataFrame(columns=LINE_COLUMNS)


ANALYSES = (
    Analysis("planes", combine=planes_table, needs=("info",)),
    Analysis("lines", combine=lines_table, needs=("info", "shifts")),
)
