"""The trace viewer's search, on the kernel's side: the events a typed query finds.

A query is one of two kinds.

- A table's row, as a click on it writes it into the search box (:func:`query_of`):
  ``kernel: <kernel_name>``, ``hlo op: <hlo_op_name>`` (``... in program <id>`` where the
  row names its program), ``device op: <operation>`` or ``host op: <operation>``.  It finds
  exactly the events the click finds (``timeline_find.occurrences``), so typing what a click
  wrote finds the same events.
- Anything else: the events whose name, op type, framework op, name scope, HLO op or HLO
  category contains it (case-insensitive): their names; their ``tf_op`` stat and its op type
  (``dense/MatMul:MatMul``: MatMul); their ``name`` stat (the name scope JAX's kernels carry);
  their ``hlo_op`` stat, or the HLO op a command buffer's kernel is attributed to, with that
  op's category, framework op and its op type as HLO op stats say (``dot_general`` finds the
  kernels of every HLO op rolled up into a ``.../dot_general`` framework op, as op stats do).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..analysis.trace.tf_ops import parse_tf_op
from .timeline_find import occurrences

__all__ = ["SearchFacets", "parse_query", "query_of"]

_KINDS = {"kernel": "kernels", "hlo op": "hlo", "device op": "ops", "host op": "ops"}
_QUERY = re.compile(r"^(kernel|hlo op|device op|host op):\s*(.*?)\s*$", re.S)
_PROGRAM = re.compile(r"^(\S+) in program (\S+)$")


def query_of(table: str, key: dict) -> str:
    """The search query of a row of table ``table`` (``timeline_find.TABLES``) whose key is
    ``key``: what a click on it writes into the search box (``js/src/timeline/search.ts``
    writes the same)."""
    if table == "kernels":
        return f"kernel: {key.get('kernel_name', '')}"
    if table == "hlo":
        program = key.get("program_id")
        none = program is None or program == "" or \
            (isinstance(program, float) and program != program)
        where = "" if none else f" in program {_program_text(program)}"
        return f"hlo op: {key.get('hlo_op_name', '')}{where}"
    if table == "ops":
        side = "device" if str(key.get("host_or_device", "Host")) == "Device" else "host"
        return f"{side} op: {key.get('operation', '')}"
    raise ValueError(f"unknown table {table!r}")


def _program_text(program) -> str:
    """A program id as text (an integral float, as JSON may bring it, without its '.0')."""
    if isinstance(program, float) and program.is_integer():
        return str(int(program))
    return str(program)


def parse_query(query: str) -> tuple[str, dict] | None:
    """(table, key) of a table row's query (see :func:`query_of`); None for any other."""
    m = _QUERY.match(query.strip())
    if not m or not m.group(2):
        return None
    kind, value = m.group(1), m.group(2)
    if kind == "kernel":
        return "kernels", {"kernel_name": value}
    if kind == "hlo op":
        p = _PROGRAM.match(value)
        return "hlo", ({"hlo_op_name": p.group(1), "program_id": p.group(2)} if p else
                       {"hlo_op_name": value})
    return "ops", {"operation": value, "host_or_device": "Device" if kind == "device op" else
                   "Host"}


def _as_codes(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(code per value, distinct texts) of a stat's values."""
    cat = values if isinstance(values.dtype, pd.CategoricalDtype) else \
        values.astype(str).astype("category")
    return cat.cat.codes.to_numpy().astype(np.int64), [str(c) for c in cat.cat.categories]


def _op_type(text: str) -> str:
    return parse_tf_op(text)[2]


class SearchFacets:
    """What the events of a profile are found by, built on the first search: facets, each
    the events having it, a code per event and the searchable text of each code (its
    texts, lowercased, one a line)."""

    def __init__(self, prof):
        self.prof = prof
        self._facets: list[tuple[np.ndarray | None, np.ndarray, list[str]]] | None = None

    def _build(self) -> list:
        prof = self.prof
        names = prof.events["name"]
        codes, cats = _as_codes(names)
        facets = [(None, codes, [_lines(c, _op_type(c)) for c in cats])]
        for stat, extra in (("tf_op", _op_type), ("name", None)):
            values = prof.stat(stat)
            if len(values):
                codes, cats = _as_codes(values)
                facets.append((values.index.to_numpy(), codes,
                               [_lines(c, extra(c) if extra else "") for c in cats]))
        facets.extend(self._hlo_facets())
        return facets

    def _hlo_facets(self) -> list:
        """Events by their HLO op (the stat, or a command buffer's attribution) with its
        category, framework op and op type."""
        prof = self.prof
        about = _hlo_texts(prof.hlo_stats)
        out = []
        values = prof.stat("hlo_op")
        if len(values):
            codes, cats = _as_codes(values)
            out.append((values.index.to_numpy(), codes, [about(c) for c in cats]))
        inside = prof.result("command_buffer_kernels")
        if len(inside):
            codes, cats = _as_codes(inside.hlo_op.astype(str))
            out.append((inside.event.to_numpy(), codes, [about(c) for c in cats]))
        return out

    def events(self, query: str) -> np.ndarray:
        """bool per event (row of ``prof.events``): found by ``query`` (a plain one)."""
        q = query.strip().lower()
        hit = np.zeros(len(self.prof.events), bool)
        if not q:
            return hit
        if self._facets is None:
            self._facets = self._build()
        for events, codes, texts in self._facets:
            table = np.array([q in t for t in texts] + [False], bool)  # code -1: none
            found = table[codes]
            if events is None:
                hit |= found
            else:
                hit[events[found]] = True
        return hit


def _lines(*texts: str) -> str:
    return "\n".join(t for t in texts if t).lower()


def _hlo_texts(stats: pd.DataFrame):
    """A function of an HLO op's name: its searchable text (the name, and of every HLO op
    stats row of that name its category, framework op and the op type it says)."""
    extra: dict[str, list[str]] = {}
    if len(stats):
        for name, cat, framework in zip(stats.hlo_op_name.astype(str),
                                        stats.category.astype(str),
                                        stats.framework_op_name.fillna("").astype(str)):
            extra.setdefault(name, []).extend([cat, framework, _op_type(framework)
                                               if framework else ""])
    return lambda name: _lines(name, *extra.get(name, ()))


def find_rows(prof, facets: SearchFacets, row_of: np.ndarray, query: str) -> np.ndarray:
    """The timeline rows (``row_of``: the row of each event, -1 none) that ``query`` finds:
    a table row's events, or every event a plain query finds."""
    parsed = parse_query(query)
    ids = occurrences(prof, *parsed) if parsed else np.flatnonzero(facets.events(query))
    rows = row_of[ids]
    return rows[rows >= 0]
