"""Event details: the rows the trace viewer's details pane shows for an event, as text.

The one place they are built and formatted.  The live widget answers a click with the rows of
one event (``TimelineSource.describe``); a page without a kernel embeds the rows of every event
its copy holds (:func:`event_details_block`), built here when the page is written: labels,
their order, the step, every stat's text, coded into tables of distinct labels and texts.
The browser shows those texts as they are (``js/src/details.ts``, ``timeline/panel.ts``).

Except three numbers of each event: its start, duration and event id.  A page carries them as
numbers (the start in the tile that draws the event, the duration as float64 and the id as
uint32 in the block) and writes them with one function per kind (``js/src/format.ts``:
``formatUs``, ``formatInt``), held to :func:`time_text` and :func:`id_text`, which define the
rule, by ``js/test/details_cases.json`` (written and checked by
``tests/widgets/test_event_details.py``).  Each event has its own, so as text they are a
string per event: on a 1.16 M-event CPU capture (``benchmarks/bench_report.py``) that made
the report 31.7 MB instead of 21.3 MB, its writing 9.1 s instead of 4.2 s, and an offline
copy 36 packed bytes per event instead of 28 (``widgets.trace_view.OFFLINE_EVENT_BYTES``:
large profiles kept fewer detailed events).  As numbers the report is 21.5 MB again.  A row
showing one of them has the text code :data:`OWN_START`, :data:`OWN_DURATION` or
:data:`OWN_ID`.

The details of an event, as Perfetto shows a slice's: its own fields first, in this order,
``name``, ``category`` (the HLO category of its HLO op, its ``hlo_op`` stat or the op a command
buffer's kernel is attributed to, as HLO op stats name it, else the op type its name says,
``dense/MatMul:MatMul``: MatMul; none where neither), ``start`` and ``duration``
(:func:`time_text`), ``host``, ``plane``, ``track``, ``step`` (the step of its host running
when it starts, when there is one) and ``event id`` (:func:`id_text`); then its arguments, in a
section of their own, :data:`ARGUMENTS`, a list of (key, text) pairs: its own stats, then its
event metadata's (``metadata.flops``), keys and texts by the rule that ``prof.sql``'s ``stats``
and the exports follow too (``analysis.trace.event_arguments``). A stat is never a field: one
called ``name`` (JAX kernels carry their name scope so) is an argument, after the fields, which
it neither displaces nor precedes. The fields are columns (a text code per event, or one for
all: :data:`NO_ROW` where an event has no such field), the stats rows of their own
(:class:`DetailRows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.trace.event_arguments import (TextTable, argument_keys, argument_rows,
                                              stat_texts)
from ..analysis.trace.tf_ops import parse_tf_op
from .columns import encode_columns
# a row's text code saying: the text of the event's own start, duration or id, which a page
# writes from the number; NO_ROW: the event has no such field (js/src/details.ts reads the
# same codes, generated from details_codes)
from .details_codes import ARGUMENTS, NO_ROW, OWN_DURATION, OWN_ID, OWN_START

__all__ = ["ARGUMENTS", "FIELDS", "NO_ROW", "OWN_DURATION", "OWN_ID", "OWN_START", "DetailRows",
           "detail_rows", "event_details_block", "id_text", "time_text"]

FIELDS = ("name", "category", "start", "duration", "host", "plane", "track", "step", "event id")


def time_text(us: float) -> str:
    """A time in us as the details write it: three decimals, correctly rounded (an exact
    tie to the even neighbour), e.g. ``"0.062 us"`` for 0.0625."""
    return f"{float(us):.3f} us"


def id_text(event_id) -> str:
    """An event id as the details write it: every digit of the integer."""
    return str(int(event_id))


@dataclass
class DetailRows:
    """The details of some events: their fields (``fields``: one entry per field, a label
    code and the text code of each event, or one for all; :data:`NO_ROW`: the event has no
    such field), then the i-th event's stats ``off[i]..off[i+1]`` (a label code in ``key``, a
    text code in ``val``).

    A text code indexes ``texts``, or is :data:`OWN_START`, :data:`OWN_DURATION` or
    :data:`OWN_ID`: the text of the event's entry of ``start``, ``dur`` or ``ids`` (numbers
    of each event, which pages carry as numbers)."""

    labels: list[str]
    texts: list[str]
    fields: list[tuple[int, np.ndarray | int]]
    start: np.ndarray  # float64 us per event
    dur: np.ndarray  # float64 us per event
    ids: np.ndarray  # int64 event id per event
    off: np.ndarray  # uint32, events + 1
    key: np.ndarray  # uint32 per row
    val: np.ndarray  # uint32 per row

    def text(self, code: int, i: int) -> str:
        """The text of a row of the i-th event whose text code is ``code``."""
        if code == OWN_START:
            return time_text(self.start[i])
        if code == OWN_DURATION:
            return time_text(self.dur[i])
        if code == OWN_ID:
            return id_text(self.ids[i])
        return self.texts[code]

    def of(self, i: int) -> dict:
        """The details of the i-th event: each field it has, label to text, in order, then
        :data:`ARGUMENTS`: its stats as (key, text) pairs, in order."""
        lo, hi = int(self.off[i]), int(self.off[i + 1])
        codes = [(k, c if isinstance(c, int) else int(c[i])) for k, c in self.fields]
        out: dict = {self.labels[k]: self.text(v, i) for k, v in codes if v != NO_ROW}
        out[ARGUMENTS] = [(self.labels[k], self.text(v, i))
                          for k, v in zip(self.key[lo:hi].tolist(), self.val[lo:hi].tolist())]
        return out


def _column(col: pd.Series, ids: np.ndarray, texts: TextTable) -> np.ndarray:
    """Text codes of ``col`` at ``ids``, each value as its ``str``."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.cat.categories
        codes = col.cat.codes.to_numpy()[ids].astype(np.intp) + 1  # 0: missing
        used = np.flatnonzero(np.bincount(codes, minlength=len(cats) + 1))
        table = np.zeros(len(cats) + 1, np.uint32)
        table[used] = [texts.code(str(cats[c - 1]) if c else str(np.nan)) for c in used.tolist()]
        return table[codes]
    return texts.codes([str(v) for v in col.to_numpy()[ids].tolist()])


def _steps(steps: pd.DataFrame | None, hosts: list[str], host_codes: np.ndarray,
           start: np.ndarray, texts: TextTable) -> np.ndarray:
    """uint32 text code of the step of each event's host running when it starts (the first
    such step in the table), :data:`NO_ROW` where none: its number, as the step menu names
    it, with its name where that says something else ("1503 (train 1503)", "3 (jit_f)")."""
    out = np.full(len(start), NO_ROW, np.uint32)
    if steps is None or not len(steps) or not len(start):
        return out
    a_all = steps["start_us"].to_numpy(np.float64)
    b_all = a_all + steps["duration_ms"].to_numpy(np.float64) * 1e3
    step_host = steps["host"].astype(str).to_numpy()
    names = np.array([str(n) if str(s) == str(n) else f"{n} ({s})"
                      for n, s in zip(steps.index, steps["step_name"].astype(str))], object)
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
    """The details of the timeline rows ``rows`` of a trace viewer's ``source`` (its
    profile, steps and event id of each row), in that order (see the module docstring)."""
    prof = source.prof
    ev = prof.events
    rows = np.asarray(rows, np.int64).ravel()
    ids = np.asarray(source.event_ids, np.int64)[rows]
    labels, texts = TextTable(FIELDS), TextTable()
    host_col = ev["host"]
    hosts = [str(c) for c in host_col.cat.categories]
    host_codes = host_col.cat.codes.to_numpy()[ids].astype(np.int64)
    start = ev["start_us"].to_numpy(np.float64)[ids]
    # the place first: its few texts get small codes (narrow columns on a page)
    place = [_column(ev[c], ids, texts) for c in ("host", "plane", "line")]
    name = _column(ev["name"], ids, texts)
    s_rank, s_key, s_val = _stat_pairs(prof, ids, host_codes, hosts, labels, texts)
    off = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(np.bincount(s_rank, minlength=len(ids)), out=off[1:])
    category = _categories(prof, ev["name"], ids, texts, labels.find("hlo_op"),
                           (s_rank, s_key, s_val))
    step = _steps(source.steps, hosts, host_codes, start, texts)
    columns = [name, category, OWN_START, OWN_DURATION, *place, step, OWN_ID]
    fields = [(k, c) for k, c in enumerate(columns)  # (a field no event has: none)
              if isinstance(c, int) or (c != NO_ROW).any()]
    return DetailRows(labels.items, texts.items, fields, start,
                      ev["duration_us"].to_numpy(np.float64)[ids], ids, off.astype(np.uint32),
                      s_key, s_val)


def _hlo_categories(prof) -> dict[str, str]:
    """HLO op name to its category, as HLO op stats say (the first row of a name)."""
    stats = getattr(prof, "hlo_stats", None)
    if stats is None or not len(stats):
        return {}
    out: dict[str, str] = {}
    for op, cat in zip(stats.hlo_op_name.astype(str), stats.category.astype(str)):
        out.setdefault(op, cat)
    return out


def _categories(prof, names: pd.Series, ids: np.ndarray, texts: TextTable, hlo_label,
                stats) -> np.ndarray:
    """uint32 text code of each event's category (:data:`NO_ROW`: none): the HLO category
    of its ``hlo_op`` stat (among its ``stats``: rank, label and text codes; ``hlo_label``,
    that stat's label code), else the op type its name says."""
    names = names if isinstance(names.dtype, pd.CategoricalDtype) else names.astype("category")
    kinds = [parse_tf_op(str(n))[2] for n in names.cat.categories]
    table = np.array([texts.code(k) if k else NO_ROW for k in kinds] + [NO_ROW], np.uint32)
    out = table[names.cat.codes.to_numpy()[ids]]  # (code -1, missing: the last entry)
    s_rank, s_key, s_val = stats
    hlo = _hlo_categories(prof) if hlo_label is not None else {}
    sel = np.flatnonzero(s_key == hlo_label) if hlo else np.empty(0, np.intp)
    if len(sel):
        distinct, inverse = np.unique(s_val[sel], return_inverse=True)
        cats = [hlo.get(texts.items[v]) for v in distinct.tolist()]
        mapped = np.array([NO_ROW if c is None else texts.code(c) for c in cats], np.uint32)
        mapped = mapped[inverse]
        known = mapped != NO_ROW
        out[s_rank[sel][known]] = mapped[known]
    _attributed_categories(prof, ids, hlo, texts, out)
    return out


def _attributed_categories(prof, ids: np.ndarray, hlo: dict, texts: TextTable,
                           out: np.ndarray) -> None:
    """Into ``out``: the category of the HLO op each kernel run inside a command buffer is
    attributed to (its ``hlo_op`` stat names the buffer), where known."""
    inside = prof.result("command_buffer_kernels") if hlo and hasattr(prof, "result") else None
    if inside is None or not len(inside):
        return
    events = pd.Index(inside.event.to_numpy())
    first = np.flatnonzero(~events.duplicated())  # (an event's first attribution)
    at = events[first].get_indexer(ids)
    for k in np.flatnonzero(at >= 0).tolist():
        category = hlo.get(str(inside.hlo_op.iloc[first[at[k]]]))
        if category is not None:
            out[k] = texts.code(category)


def _stat_pairs(prof, ids, host_codes, hosts, labels: TextTable, texts: TextTable):
    """(event rank, label code, text code) of the arguments of the events ``ids``, by
    event, each event's in their order (``analysis.trace.event_arguments``)."""
    s_rank = [np.empty(0, np.int64)]
    s_key = [np.empty(0, np.uint32)]
    s_val = [np.empty(0, np.uint32)]
    for h in np.unique(host_codes).tolist():
        space = prof.spaces.get(hosts[h]) if h >= 0 else None
        if space is None:
            continue
        mine = np.flatnonzero(host_codes == h)
        rank, rows, origin = argument_rows(space, ids[mine] - prof.event_offsets[hosts[h]])
        s_rank.append(mine[rank])
        s_key.append(argument_keys(space.stats, rank, rows, origin, labels))
        s_val.append(stat_texts(space.stats, rows, texts))
    s_rank, s_key, s_val = (np.concatenate(x) for x in (s_rank, s_key, s_val))
    if len(s_rank) and (np.diff(s_rank) < 0).any():  # events of several hosts: by event
        order = np.argsort(s_rank, kind="stable")
        s_rank, s_key, s_val = s_rank[order], s_key[order], s_val[order]
    return s_rank, s_key, s_val


def _links(source, rows: np.ndarray | None) -> dict:
    """The links of the timeline whose ends are both among ``rows`` (None: all)."""
    src, dst, kind = source.link_rows()
    if rows is not None:
        keep = np.isin(src, rows) & np.isin(dst, rows)
        src, dst, kind = src[keep], dst[keep], kind[keep]
    return {"link_src": src.astype(np.uint32), "link_dst": dst.astype(np.uint32),
            "link_kind": kind.astype(np.uint8)}


def _narrow(codes: np.ndarray) -> np.ndarray:
    """Text codes in the narrowest unsigned dtype holding them, :data:`NO_ROW` as its
    all-ones value (0xff, 0xffff: a page reads that as no such field)."""
    known = codes[codes != NO_ROW]
    top = int(known.max()) if len(known) else 0
    dtype = np.uint8 if top < 2**8 - 1 else np.uint16 if top < 2**16 - 1 else np.uint32
    return np.where(codes == NO_ROW, np.iinfo(dtype).max, codes).astype(dtype)


def event_details_block(source, rows: np.ndarray | None = None) -> dict:
    """The details of the timeline rows ``rows`` (None: every row) of a trace viewer's
    ``source`` for a page without a kernel: texts, and typed columns of codes and numbers.

    ``labels`` and ``texts`` are JSON lists of strings.  ``fields`` are :class:`DetailRows`'
    (a JSON list of ``[label code, text code]`` or ``[label code, column]``: the column of
    the text code of each row, uint8 to uint32, all ones where it has none); the columns are
    ``off`` (uint32, n + 1: the stats of the i-th row are off[i]..off[i+1]), ``key`` and
    ``val`` (uint32 per stat: label and text codes), ``dur`` (float64 us) and ``id``
    (uint32; float64 past 2**32) per row.  An event's start is in the tile the page draws it
    with: for some rows only, ``rows`` (uint32: the timeline rows covered, ascending) are
    each a single event of a tile the page holds.
    ``link_src``, ``link_dst`` (uint32 timeline rows) and ``link_kind`` (uint8, into
    ``link_labels``: [end's label, start's label] per kind) are the links whose two events
    are covered: a host launch and its device event, a producer and its consumer.
    """
    total = len(source.event_ids)
    if total >= 2**32:
        raise ValueError(f"{total} events: too many to embed event details")
    covered = np.arange(total) if rows is None else np.asarray(rows, np.int64)
    d = detail_rows(source, covered)
    small = not len(d.ids) or (d.ids.min() >= 0 and d.ids.max() < 2**32)
    columns = {"off": d.off, "key": d.key, "val": d.val, "dur": d.dur,
               "id": d.ids.astype(np.uint32 if small else np.float64)}
    fields = []
    for j, (label, codes) in enumerate(d.fields):
        if isinstance(codes, int):
            fields.append([label, codes])
        else:
            columns[f"field{j}"] = _narrow(codes)
            fields.append([label, f"field{j}"])
    if rows is not None:
        columns["rows"] = np.asarray(rows, np.uint32)
    columns.update(_links(source, rows))
    return {"labels": d.labels, "texts": d.texts, "fields": fields,
            "link_labels": source.link_labels(),
            "columns": encode_columns(columns)}
