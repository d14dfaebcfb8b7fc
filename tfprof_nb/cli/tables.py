"""The tables ``tfprof table`` writes: the same set ``prof.sql`` queries (``events``,
``stats`` and the tool tables of :mod:`tfprof_nb.sql`), in its order, each with its
description from :mod:`tfprof_nb.table_catalogue`."""

from __future__ import annotations

import pandas as pd

from ..sql import EVENT_TABLES, TOOL_TABLES
from ..table_catalogue import queried_entries

__all__ = ["table", "table_list", "table_names"]


def table_names() -> list[str]:
    """Every table's name, in ``prof.sql``'s order."""
    return list(EVENT_TABLES) + list(TOOL_TABLES)


def table_list() -> list[dict]:
    """Every table's name, description and key columns (those identifying a row; none: rows
    are occurrences) for ``tfprof table --list``, in :func:`table_names`' order."""
    entries = queried_entries()
    return [{"name": n, "description": entries[n].description, "keys": list(entries[n].keys)}
            for n in table_names()]


class _Results:
    """A profile's analysis results by name (what :data:`TOOL_TABLES` reads)."""

    def __init__(self, prof):
        self._prof = prof

    def __getitem__(self, name: str):
        return self._prof.result(name)


def table(prof, name: str) -> pd.DataFrame:
    """Table ``name`` of ``prof`` as a DataFrame (the frame ``prof.sql`` queries; ``events``
    with its global event id as a column, ``event``).  Raises KeyError for an unknown name."""
    if name == "events":
        return prof.events.reset_index()
    if name == "stats":
        return prof.sql("SELECT * FROM stats")
    if name not in TOOL_TABLES:
        raise KeyError(name)
    return TOOL_TABLES[name](_Results(prof))
