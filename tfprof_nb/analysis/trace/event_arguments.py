"""An event's arguments: its own stats and its event metadata's, each as a key and a text.

The one rule behind the three places that show them: the trace viewer's details pane
(``offline.details``), ``prof.sql``'s ``stats`` view and the Chrome and Perfetto exports
(``export._content``).  So an event shows the same arguments, with the same keys and texts,
in each of them.

* Which: every stat the event carries (origin :data:`OWN`), in their order, then every stat
  of its event metadata (origin :data:`METADATA`), in theirs; the XEvent's ``stats`` and its
  ``XEventMetadata``'s ``stats``, as ``xplane_pb2`` parses them.  None is left out, none
  replaces another.
* The key (:func:`key_text`): the stat's name, ``metadata.`` before a metadata stat's (the
  exports' viewers show a dotted key as a group), and `` #2``, `` #3``... after a name the
  event carries again with the same origin (JSON arguments need distinct keys).
* The text (:func:`value_text`): a string as it is (a ref: the name it refers to), an integer
  with every digit, a double as Python's ``repr`` (the shortest that reads back exactly),
  bytes as hex digits (longer than :data:`BYTES_SHOWN`: ``<n bytes>``), no value: empty.
  The exports keep numbers as numbers: their text is this one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["BYTES_SHOWN", "METADATA", "METADATA_PREFIX", "ORIGINS", "OWN", "TextTable",
           "argument_keys", "argument_rows", "key_text", "stat_row_keys", "stat_texts",
           "value_text"]

OWN, METADATA = 0, 1  # an argument's origin: the event's own stat, its metadata's
ORIGINS = ("own", "metadata")  # the origins' names (prof.sql's ``origin`` column)
METADATA_PREFIX = "metadata."
BYTES_SHOWN = 1024  # bytes values up to this long are shown as hex digits
_FEW = 64  # events whose own stats are found one by one (bisection) rather than by a pass


def value_text(value) -> str:
    """A stat's value as its text (see the module docstring)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (bytes, bytearray)):
        return value.hex() if len(value) <= BYTES_SHOWN else f"<{len(value)} bytes>"
    return "" if value is None else str(value)


def key_text(name: str, origin: int, occurrence: int = 1) -> str:
    """An argument's key: the stat's ``name``, :data:`METADATA_PREFIX` before a metadata
    stat's, `` #k`` after its k-th occurrence (k > 1) with that origin on the event."""
    key = METADATA_PREFIX + name if origin == METADATA else name
    return key if occurrence <= 1 else f"{key} #{occurrence}"


class TextTable:
    """Distinct texts in the order first seen, and their codes."""

    def __init__(self, first: tuple[str, ...] = ()):
        self.items: list[str] = []
        self._index: dict[str, int] = {}
        for text in first:
            self.code(text)

    def code(self, text: str) -> int:
        code = self._index.get(text)
        if code is None:
            code = self._index[text] = len(self.items)
            self.items.append(text)
        return code

    def find(self, text: str) -> int | None:
        """The code of ``text``, None when it has none."""
        return self._index.get(text)

    def codes(self, texts: list[str]) -> np.ndarray:
        """uint32 codes of a list of texts."""
        index = self._index
        fresh = [t for t in dict.fromkeys(texts) if t not in index]
        index.update(zip(fresh, range(len(self.items), len(self.items) + len(fresh))))
        self.items.extend(fresh)
        return np.fromiter(map(index.__getitem__, texts), np.uint32, len(texts))


def stat_texts(st, rows: np.ndarray, texts: TextTable) -> np.ndarray:
    """uint32 codes in ``texts`` of the texts of stat rows ``rows`` of a host's stat table
    (:func:`value_text`, numbers in bulk: each distinct value once)."""
    kind, raw = st.kind[rows], st.raw_value[rows]
    out = np.empty(len(rows), np.uint32)
    done = np.zeros(len(rows), bool)
    for k in (1, 2, 3, 4):  # double, uint64, int64, then str, bytes and ref: st.values
        sel = np.flatnonzero((kind >= 4) & (kind <= 6) if k == 4 else kind == k)
        if not len(sel):
            continue
        done[sel] = True
        inverse, distinct = pd.factorize(raw[sel])  # by hashing: no sort of every row
        if k == 1:
            strings = list(map(repr, distinct.view(np.float64).tolist()))
        elif k == 2:
            strings = list(map(str, distinct.view(np.uint64).tolist()))
        elif k == 3:
            strings = list(map(str, distinct.tolist()))
        else:
            strings = [value_text(st.values[c]) for c in distinct.tolist()]
        out[sel] = texts.codes(strings)[inverse]
    out[~done] = texts.code(value_text(None))
    return out


def _metadata_runs(st):
    """(rows, first, count): the stat rows of event metadata sorted by their metadata row,
    and where each metadata row's run starts and how long it is (indexed by metadata row)."""
    cache = st._cache
    if "metadata_runs" not in cache:
        md = np.asarray(st.owned_by(1), np.int64)
        md = md[np.argsort(st.owner[md], kind="stable")]
        count = np.bincount(st.owner[md], minlength=1).astype(np.int64)
        cache["metadata_runs"] = (md, np.cumsum(count) - count, count)
    return cache["metadata_runs"]


def _metadata_rows(space, events: np.ndarray):
    """(rank, stat row) of the metadata stats of ``events`` (host event rows), by rank."""
    md, first, count = _metadata_runs(space.stats)
    mine = space.events.metadata_row[events].astype(np.int64)
    known = (mine >= 0) & (mine < len(count))
    per = np.zeros(len(events), np.int64)
    per[known] = count[mine[known]]
    total = int(per.sum())
    rank = np.repeat(np.arange(len(events), dtype=np.int64), per)
    at = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    return rank, md[first[mine[rank]] + at] if total else np.empty(0, np.int64)


def _own_rows(st, events: np.ndarray | None):
    """(rank, stat row) of the own stats of ``events`` (None: every event, rank = row), by
    rank then row: by bisection for a few events, else one pass."""
    if events is None:
        rows = np.flatnonzero(st.owner_kind == 0)
        return st.owner[rows].astype(np.int64), rows.astype(np.int64)
    if len(events) <= _FEW:
        parts = [st.rows_of_event(int(e)) for e in events.tolist()]
        rank = np.repeat(np.arange(len(events), dtype=np.int64), [len(p) for p in parts])
        return rank, np.concatenate(parts + [np.empty(0, np.int64)]).astype(np.int64)
    lookup = np.full(int(events.max()) + 1 if len(events) else 0, -1, np.int64)
    lookup[events] = np.arange(len(events))
    rows = np.flatnonzero(st.owner_kind == 0)
    owner = st.owner[rows].astype(np.int64)
    inside = owner < len(lookup)
    rows, rank = rows[inside], lookup[owner[inside]]
    keep = rank >= 0
    rows, rank = rows[keep], rank[keep]
    order = np.argsort(rank, kind="stable")
    return rank[order], rows[order].astype(np.int64)


def argument_rows(space, events: np.ndarray | None = None):
    """(rank, stat row, origin) of the arguments of one host's ``space``'s events ``events``
    (distinct host event rows, any order; None: every event, its rank its row), by rank,
    each event's own stats first (:data:`OWN`), then its metadata's (:data:`METADATA`)."""
    st = space.stats
    own_rank, own = _own_rows(st, None if events is None else np.asarray(events, np.int64))
    every = np.arange(len(space.events), dtype=np.int64) if events is None \
        else np.asarray(events, np.int64)
    md_rank, md = _metadata_rows(space, every)
    if not len(md):
        return own_rank, own, np.zeros(len(own), np.int8)
    rank = np.concatenate([own_rank, md_rank])
    origin = np.concatenate([np.zeros(len(own), np.int8), np.ones(len(md), np.int8)])
    order = np.argsort(rank * 2 + origin, kind="stable")
    return rank[order], np.concatenate([own, md])[order], origin[order]


def argument_keys(st, rank: np.ndarray, rows: np.ndarray, origin: np.ndarray,
                  keys: TextTable) -> np.ndarray:
    """uint32 codes in ``keys`` of the keys (:func:`key_text`) of the arguments ``rows`` of
    events ``rank`` (by rank, as :func:`argument_rows` gives them) with origins ``origin``."""
    name = st.name_code[rows].astype(np.int64)
    width = 2 * max(len(st.names), 1)
    slot = name * 2 + origin  # a (name, origin) pair
    used = np.flatnonzero(np.bincount(slot, minlength=width)).tolist()
    table = np.zeros(width, np.uint32)
    table[used] = keys.codes([key_text(st.names[u // 2], u % 2) for u in used])
    out = table[slot]
    combo = rank * width + slot
    order = np.argsort(combo, kind="stable")  # fast: nearly sorted (by rank already)
    again = np.flatnonzero(combo[order[1:]] == combo[order[:-1]]) + 1  # rare
    if len(again):
        nth = pd.Series(combo).groupby(combo, sort=False).cumcount().to_numpy()
        for r in order[again].tolist():
            out[r] = keys.code(key_text(st.names[name[r]], int(origin[r]), int(nth[r]) + 1))
    return out


def stat_row_keys(st, keys: TextTable) -> np.ndarray:
    """int32 codes in ``keys`` of the key of every row of a host's stat table as an argument:
    of the event that carries it (an own stat), or of every event of the event metadata that
    carries it; -1 for a plane's stats (no argument)."""
    rows = np.flatnonzero(st.owner_kind <= 1)
    origin = st.owner_kind[rows].astype(np.int8)  # 0 own, 1 metadata: OWN, METADATA
    key = np.full(len(st), -1, np.int32)
    if len(rows):
        key[rows] = argument_keys(st, st.owner[rows].astype(np.int64), rows, origin, keys)
    return key
