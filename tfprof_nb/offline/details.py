"""Event details: the rows the trace viewer's details pane shows for an event, as text.

The one place they are built and formatted.  The live widget answers a click with the rows of
one event (``TimelineSource.describe``); a page without a kernel embeds the rows of every event
its copy holds (:func:`event_details_block`), formatted here when the page is written.  The
browser shows the text as it is (``js/src/details.ts``, ``timeline/panel.ts``) and formats no
detail itself.  Texts cost a page 8 to 14 packed bytes per event more than the numbers did
(``widgets.timeline.OFFLINE_EVENT_BYTES``): a start, a duration and an id each, kept apart
from the coded texts (:data:`OWN`), which a code per row would only make longer.

The rows of an event, in order: ``name``, ``start`` and ``duration`` (:func:`time_text`),
``host``, ``plane``, ``track``, ``event id``, each of its stats (:func:`value_text`) and the
``step`` of its host running when it starts, when there is one.  A stat named like an earlier
row gives that row its text, in the earlier row's place (as a dict keeps a key).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .columns import encode_columns

__all__ = ["OWN", "DetailRows", "detail_rows", "event_details_block", "time_text", "value_text"]

FIXED = ("name", "start", "duration", "host", "plane", "track", "event id")
OWN_LABELS = ("start", "duration", "event id")  # a text per event: kept apart, not coded
OWN = 2**32 - 1  # a row's text code saying: the event's own text for its label
STEP = "step"
_FEW = 64  # events whose stats are found one by one (bisection) rather than by a pass


def time_text(us: float) -> str:
    """A time in us as the details write it: three decimals, correctly rounded (an exact
    tie to the even neighbour), e.g. ``"0.062 us"`` for 0.0625."""
    return f"{float(us):.3f} us"


def value_text(value) -> str:
    """A stat's value as the details write it: a string as it is, a number as Python writes
    it, anything else (bytes, None) as its ``repr``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return repr(value)


class _Texts:
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

    def codes(self, texts) -> np.ndarray:
        """uint32 codes of a sequence of texts."""
        codes, distinct = pd.factorize(np.asarray(texts, dtype=object))
        table = np.array([self.code(t) for t in distinct], np.uint32)
        return table[codes] if len(codes) else np.empty(0, np.uint32)


@dataclass
class DetailRows:
    """The detail rows of some events: those of the i-th are ``off[i]..off[i+1]``, each a
    code into ``labels`` (``key``) and one into ``texts`` (``val``), or :data:`OWN`: the i-th
    entry of ``own[label]`` (the texts of :data:`OWN_LABELS`, one per event: coding them
    would only add a code per row)."""

    labels: list[str]
    texts: list[str]
    own: dict[str, list[str]]
    off: np.ndarray  # uint32, events + 1
    key: np.ndarray  # uint32 per row
    val: np.ndarray  # uint32 per row

    def of(self, i: int) -> dict[str, str]:
        """The rows of the i-th event, label to text."""
        lo, hi = int(self.off[i]), int(self.off[i + 1])
        out = {}
        for k, v in zip(self.key[lo:hi].tolist(), self.val[lo:hi].tolist()):
            label = self.labels[k]
            out[label] = self.own[label][i] if v == OWN else self.texts[v]
        return out


def _column(col: pd.Series, ids: np.ndarray, texts: _Texts) -> np.ndarray:
    """Text codes of ``col`` at ``ids``, each value as its ``str``."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.cat.categories
        used, inverse = np.unique(col.cat.codes.to_numpy()[ids], return_inverse=True)
        table = np.array([texts.code(str(cats[c]) if c >= 0 else str(np.nan))  # -1: missing
                          for c in used.tolist()], np.uint32)
        return table[inverse.ravel()]
    return texts.codes([str(v) for v in col.to_numpy()[ids].tolist()])


def _stat_texts(st, rows: np.ndarray, texts: _Texts) -> np.ndarray:
    """Text codes of the values of stat rows ``rows`` of one host (see ``stat_value``: kind 1
    float, 2 uint64, 3 int64, 4-6 a value of ``st.values``; else no value)."""
    kind, raw = st.kind[rows], st.raw_value[rows]
    out = np.empty(len(rows), np.uint32)
    done = np.zeros(len(rows), bool)
    for k in (1, 2, 3, 4):
        sel = np.flatnonzero((kind >= 4) & (kind <= 6) if k == 4 else kind == k)
        if not len(sel):
            continue
        done[sel] = True
        distinct, inverse = np.unique(raw[sel], return_inverse=True)
        if k == 1:
            values = distinct.view(np.float64).tolist()
        elif k == 2:
            values = distinct.view(np.uint64).tolist()
        elif k == 3:
            values = distinct.tolist()
        else:
            values = [st.values[c] for c in distinct.tolist()]
        out[sel] = texts.codes([value_text(v) for v in values])[inverse.ravel()]
    out[~done] = texts.code(value_text(None))
    return out


def _stat_rows(prof, ids: np.ndarray, host_codes: np.ndarray, hosts: list[str]):
    """Per host with stats among the events ``ids`` (their ``host_codes`` into ``hosts``):
    (host, rank of the event of each of its stat rows, the stat rows), by rank then row."""
    out = []
    for h in np.unique(host_codes).tolist():
        host = hosts[h] if h >= 0 else None
        space = prof.spaces.get(host)
        if space is None:
            continue
        st, base = space.stats, prof.event_offsets[host]
        mine = np.flatnonzero(host_codes == h)
        if len(ids) <= _FEW:
            parts = [(np.full(len(r), k, np.int64), r) for k in mine.tolist()
                     for r in [st.rows_of_event(int(ids[k]) - base)]]
            ranks = np.concatenate([p[0] for p in parts])
            rows = np.concatenate([p[1] for p in parts])
        else:
            rank = np.full(max(int(ids[mine].max()) - base + 1, 0), -1, np.int64)
            rank[ids[mine] - base] = mine
            rows = np.flatnonzero(st.owner_kind == 0)
            owner = st.owner[rows].astype(np.int64)
            inside = owner < len(rank)
            rows, owner = rows[inside], owner[inside]
            ranks = rank[owner]
            keep = ranks >= 0
            rows, ranks = rows[keep], ranks[keep]
            order = np.argsort(ranks, kind="stable")
            rows, ranks = rows[order], ranks[order]
        if len(rows):
            out.append((host, ranks, rows.astype(np.int64)))
    return out


def _steps(steps: pd.DataFrame | None, hosts: list[str], host_codes: np.ndarray,
           start: np.ndarray, texts: _Texts) -> np.ndarray:
    """int64 text code of the name of the step of each event's host running when it starts
    (the first such step in the table), -1 where none."""
    out = np.full(len(start), -1, np.int64)
    if steps is None or not len(steps) or not len(start):
        return out
    a_all = steps["start_us"].to_numpy(np.float64)
    b_all = a_all + steps["duration_ms"].to_numpy(np.float64) * 1e3
    step_host = steps["host"].astype(str).to_numpy()
    names = steps["step_name"].astype(str).to_numpy()
    for h in np.unique(host_codes).tolist():
        if h < 0:
            continue
        mine = np.flatnonzero(host_codes == h)
        mine = mine[np.argsort(start[mine], kind="stable")]
        t = start[mine]
        which = np.flatnonzero((step_host == hosts[h]) & (a_all < b_all))
        lo = np.searchsorted(t, a_all[which], "left")
        hi = np.searchsorted(t, b_all[which], "left")
        for k in np.flatnonzero(hi > lo)[::-1].tolist():  # the first step's name wins
            out[mine[lo[k]:hi[k]]] = texts.code(names[which[k]])
    return out


def detail_rows(source, rows) -> DetailRows:
    """The detail rows of the timeline rows ``rows`` of a trace viewer's ``source`` (its
    profile, steps and event id of each row), in that order (see the module docstring)."""
    prof = source.prof
    ev = prof.events
    rows = np.asarray(rows, np.int64).ravel()
    ids = np.asarray(source.event_ids, np.int64)[rows]
    n = len(ids)
    labels, texts = _Texts(FIXED), _Texts()
    host_col = ev["host"]
    hosts = [str(c) for c in host_col.cat.categories]
    host_codes = host_col.cat.codes.to_numpy()[ids].astype(np.int64)
    start = ev["start_us"].to_numpy(np.float64)[ids]
    own = dict(zip(OWN_LABELS, (
        [time_text(x) for x in start.tolist()],
        [time_text(x) for x in ev["duration_us"].to_numpy(np.float64)[ids].tolist()],
        [str(i) for i in ids.tolist()])))
    mine = np.full(n, OWN, np.uint32)
    fixed = np.stack([_column(ev["name"], ids, texts), mine, mine, _column(host_col, ids, texts),
                      _column(ev["plane"], ids, texts), _column(ev["line"], ids, texts), mine],
                     axis=1).astype(np.uint32) if n else np.empty((0, len(FIXED)), np.uint32)
    stats = _stat_pairs(prof, ids, host_codes, hosts, labels, texts)
    step = _steps(source.steps, hosts, host_codes, start, texts)
    off, key, val = _lay_out(fixed, stats, step, labels.code(STEP))
    # a stat named like an earlier row: that row takes its text (first place, last text)
    s_rank, s_key, _ = stats
    clash = np.zeros(n, bool)
    clash[s_rank[(s_key < len(FIXED)) | (s_key == labels.code(STEP))]] = True
    pair = np.sort(s_rank * len(labels.items) + s_key)
    clash[pair[1:][pair[1:] == pair[:-1]] // len(labels.items)] = True
    if clash.any():
        off, key, val = _as_dicts(off, key, val, np.flatnonzero(clash))
    return DetailRows(labels.items, texts.items, own, off.astype(np.uint32), key, val)


def _stat_pairs(prof, ids, host_codes, hosts, labels: _Texts, texts: _Texts):
    """(event rank, label code, text code) of the stats of the events ``ids``, by event,
    each event's in their order."""
    parts = _stat_rows(prof, ids, host_codes, hosts)
    s_rank = [np.empty(0, np.int64)]
    s_key = [np.empty(0, np.uint32)]
    s_val = [np.empty(0, np.uint32)]
    for host, ranks, stat_rows in parts:
        st = prof.spaces[host].stats
        names = np.array([labels.code(name) for name in st.names], np.uint32)
        s_rank.append(ranks)
        s_key.append(names[st.name_code[stat_rows]])
        s_val.append(_stat_texts(st, stat_rows, texts))
    s_rank, s_key, s_val = (np.concatenate(x) for x in (s_rank, s_key, s_val))
    if len(parts) > 1:  # events of several hosts: by event again
        order = np.argsort(s_rank, kind="stable")
        s_rank, s_key, s_val = s_rank[order], s_key[order], s_val[order]
    return s_rank, s_key, s_val


def _lay_out(fixed: np.ndarray, stats, step: np.ndarray, step_label: int):
    """(off, key, val) of every event's rows: FIXED, its stats, its step (when it has one)."""
    n = len(fixed)
    s_rank, s_key, s_val = stats
    stats_of = np.bincount(s_rank, minlength=n)
    has_step = step >= 0
    off = np.zeros(n + 1, np.int64)
    np.cumsum(len(FIXED) + stats_of + has_step, out=off[1:])
    key = np.empty(int(off[-1]), np.uint32)
    val = np.empty(int(off[-1]), np.uint32)
    at = off[:-1, None] + np.arange(len(FIXED))
    key[at] = np.arange(len(FIXED), dtype=np.uint32)
    val[at] = fixed
    first_stat = np.zeros(n + 1, np.int64)
    np.cumsum(stats_of, out=first_stat[1:])
    at = off[s_rank] + len(FIXED) + (np.arange(len(s_rank)) - first_stat[s_rank])
    key[at], val[at] = s_key, s_val
    at = off[1:][has_step] - 1
    key[at], val[at] = step_label, step[has_step]
    return off, key, val


def _as_dicts(off, key, val, events) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows with those of ``events`` merged as a dict merges repeated keys."""
    n = len(off) - 1
    rank = np.repeat(np.arange(n), np.diff(off))
    keep = ~np.isin(rank, events)
    new_rank, new_key, new_val = [rank[keep]], [key[keep]], [val[keep]]
    for e in events.tolist():
        merged = dict(zip(key[off[e]:off[e + 1]].tolist(), val[off[e]:off[e + 1]].tolist()))
        new_rank.append(np.full(len(merged), e, np.int64))
        new_key.append(np.fromiter(merged.keys(), np.uint32, len(merged)))
        new_val.append(np.fromiter(merged.values(), np.uint32, len(merged)))
    rank = np.concatenate(new_rank)
    order = np.argsort(rank, kind="stable")
    off = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rank, minlength=n), out=off[1:])
    return off, np.concatenate(new_key)[order], np.concatenate(new_val)[order]


def _links(source, rows: np.ndarray | None) -> dict:
    """The links of the timeline whose ends are both among ``rows`` (None: all)."""
    src, dst, kind = source.link_rows()
    if rows is not None:
        keep = np.isin(src, rows) & np.isin(dst, rows)
        src, dst, kind = src[keep], dst[keep], kind[keep]
    return {"link_src": src.astype(np.uint32), "link_dst": dst.astype(np.uint32),
            "link_kind": kind.astype(np.uint8)}


def event_details_block(source, rows: np.ndarray | None = None) -> dict:
    """The detail rows of the timeline rows ``rows`` (None: every row) of a trace viewer's
    ``source``, formatted, for a page without a kernel: typed columns and their texts.

    ``labels`` and ``texts`` are JSON lists of strings, ``own`` per label of
    :data:`OWN_LABELS` the text of each row, joined by newlines (none has one; a string
    packs and unpacks faster than a list of a string per row); the columns are ``off`` (uint32, n + 1: the detail rows
    of the i-th row are off[i]..off[i+1]), ``key`` and ``val`` (uint32 per detail row: codes
    into labels and texts; :data:`OWN` for the i-th text of ``own[label]``).  For some rows
    only, also ``rows`` (uint32: the timeline rows covered, ascending; each is a single event
    of a tile the page holds, which says where it is drawn).
    ``link_src``, ``link_dst`` (uint32 timeline rows) and ``link_kind`` (uint8, into
    ``link_labels``: [end's label, start's label] per kind) are the links whose two events
    are covered: a host launch and its device event, a producer and its consumer.
    """
    total = len(source.event_ids)
    if total >= 2**32:
        raise ValueError(f"{total} events: too many to embed event details")
    covered = np.arange(total) if rows is None else np.asarray(rows, np.int64)
    d = detail_rows(source, covered)
    columns = {"off": d.off, "key": d.key, "val": d.val}
    if rows is not None:
        columns["rows"] = np.asarray(rows, np.uint32)
    columns.update(_links(source, rows))
    return {"labels": d.labels, "texts": d.texts,
            "own": {label: "\n".join(texts) for label, texts in d.own.items()},
            "link_labels": source.link_labels(), "columns": encode_columns(columns)}
