"""Event grouping: which step (group) every event belongs to.

Raw ``.xplane.pb`` files carry no ``group_id``; the reference converters derive it.  This does
the same, vectorised: events form a forest through (1) nesting by time on each thread,
(2) producer/consumer links (``_pt``/``_p`` -> ``_ct``/``_c``, including thread-pool regions),
(3) ``ExecutorState::Process`` -> ``IteratorGetNext*::DoCompute`` with equal ``id``/``iter_num``
and (4) kernel launch -> kernel execution by ``correlation_id``.  Events with an ``_r`` stat are
roots; each root, by level then time, starts a group that spreads breadth-first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._group_kernels import assign_groups, csr
from .host_events import HostEvents

__all__ = ["Grouping", "group_events", "IMPLICIT_ROOTS", "HOST_PLANE"]

HOST_PLANE = "/host:CPU"
IMPLICIT_ROOTS = frozenset({"FunctionRun", "SessionRun", "RunGraph", "ExecutorState::Process"})
_ITERATOR_GET_NEXT = ("IteratorGetNextOp::DoCompute", "IteratorGetNextAsOptionalOp::DoCompute")
_MAX_CONTEXT_FANOUT = 64


@dataclass
class Grouping:
    """Per-event group ids (-1: ungrouped) and per-group root, name and step number."""

    group: np.ndarray
    parent: np.ndarray  # nesting parent on the same line, -1 for none
    groups: pd.DataFrame  # index group id: root (event row), name, step_num, implicit


def _edges_by_key(src_mask, src_keys, dst_mask, dst_keys, limit=None):
    """Pairs (producer row, consumer row) with equal keys; skip keys where both sides have
    ``limit`` or more events."""
    a = pd.DataFrame({"k0": src_keys[0][src_mask], "k1": src_keys[1][src_mask],
                      "src": np.flatnonzero(src_mask)})
    b = pd.DataFrame({"k0": dst_keys[0][dst_mask], "k1": dst_keys[1][dst_mask],
                      "dst": np.flatnonzero(dst_mask)})
    if a.empty or b.empty:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    if limit is not None:
        na = a.groupby(["k0", "k1"]).size().rename("na")
        nb = b.groupby(["k0", "k1"]).size().rename("nb")
        both = pd.concat([na, nb], axis=1, join="inner")
        bad = both[(both.na >= limit) & (both.nb >= limit)].index
        if len(bad):
            keep = ~pd.MultiIndex.from_frame(a[["k0", "k1"]]).isin(bad)
            a = a[keep]
    m = a.merge(b, on=["k0", "k1"])
    return m["src"].to_numpy(np.int64), m["dst"].to_numpy(np.int64)


def group_events(hev: HostEvents, extra_roots: np.ndarray | None = None) -> Grouping:
    """Group ``hev``'s events.  ``extra_roots`` (rows) act as level-1 roots in addition to the
    events with an ``_r`` stat (used for inferred steps)."""
    n = len(hev)
    parent = hev.nesting_parent()

    src = [parent[parent >= 0]]
    dst = [np.flatnonzero(parent >= 0)]
    p, hp = hev.int_stat("_p")
    pt, hpt = hev.int_stat("_pt")
    c, hc = hev.int_stat("_c")
    ct, hct = hev.int_stat("_ct")
    s, d = _edges_by_key(hp & hpt, (pt, p), hc & hct, (ct, c), limit=_MAX_CONTEXT_FANOUT)
    src.append(s)
    dst.append(d)
    ids, has_id = hev.int_stat("id")
    it, has_it = hev.int_stat("iter_num")
    keyed = has_id & has_it
    executor = keyed & hev.name_is("ExecutorState::Process")
    getnext = keyed & hev.name_is(*_ITERATOR_GET_NEXT)
    if executor.any() and getnext.any():
        # the last ExecutorState::Process of a key wins, as in the reference
        ex_rows = np.flatnonzero(executor)
        last = pd.DataFrame({"k0": ids[ex_rows], "k1": it[ex_rows], "src": ex_rows}) \
            .drop_duplicates(["k0", "k1"], keep="last")
        only_last = np.zeros(n, dtype=bool)
        only_last[last["src"].to_numpy()] = True
        s, d = _edges_by_key(only_last, (ids, it), getnext, (ids, it))
        src.append(s)
        dst.append(d)
    corr, has_corr = hev.int_stat("correlation_id")
    if has_corr.any():
        on_host = hev.plane_is(HOST_PLANE)
        zeros = np.zeros(n, dtype=np.int64)
        s, d = _edges_by_key(has_corr & on_host, (zeros, corr), has_corr & ~on_host,
                             (zeros, corr))
        src.append(s)
        dst.append(d)
    src = np.concatenate(src)
    dst = np.concatenate(dst)
    ch_off, ch_tgt = csr(src, dst, n)
    par_off, par_tgt = csr(dst, src, n)

    r, is_root = hev.int_stat("_r")
    is_root = is_root.copy()
    level = np.where(is_root, r, 0).astype(np.int64)
    tf_data_ids = ids[has_id & hev.name_mask(
        lambda s: s.str.startswith("InstantiatedCapturedFunction::"))]
    if len(tf_data_ids):
        is_root &= ~(has_id & np.isin(ids, tf_data_ids))
    if extra_roots is not None and len(extra_roots):
        is_root[extra_roots] = True
        level[extra_roots] = 1
    roots = np.flatnonzero(is_root)
    roots = roots[np.lexsort((hev.begin[roots], -level[roots]))].astype(np.int64)
    group = np.full(n, -1, dtype=np.int64)
    root_of_group = np.empty(len(roots), dtype=np.int64)
    n_groups = assign_groups(roots, is_root, level, ch_off, ch_tgt, par_off, par_tgt, group,
                             root_of_group)
    root_of_group = root_of_group[:n_groups]
    return Grouping(group, parent, _group_table(hev, root_of_group, par_off, par_tgt))


def _context_stat(hev: HostEvents, row: int, stat: str, par_off, par_tgt):
    """A stat of ``row`` or, breadth-first, of its nearest ancestor that has it."""
    seen, queue = set(), [row]
    while queue:
        v = queue.pop(0)
        if v in seen:
            continue
        seen.add(v)
        if stat in hev.has and hev.has[stat][v]:
            return int(hev.ints[stat][v])
        if stat in hev.strs and hev.strs[stat][v] is not None:
            return hev.strs[stat][v]
        queue.extend(par_tgt[par_off[v]:par_off[v + 1]].tolist())
    return None


def _group_table(hev: HostEvents, root_of_group, par_off, par_tgt) -> pd.DataFrame:
    rows = []
    for g, root in enumerate(root_of_group.tolist()):
        root_name = hev.names[hev.name_code[root]]
        implicit = root_name in IMPLICIT_ROOTS
        graph_type = _context_stat(hev, root, "graph_type", par_off, par_tgt)
        number = _context_stat(hev, root, "iter_num", par_off, par_tgt)
        step_num = _context_stat(hev, root, "step_num", par_off, par_tgt)
        if number is None:
            number = step_num
        if number is None:
            number = g
        if graph_type is not None:
            prefix = f"{graph_type} "
        else:
            prefix = "" if implicit else f"{root_name} "
        rows.append({"group": g, "root": root, "name": f"{prefix}{number}",
                     "step_num": step_num if step_num is not None else g,
                     "implicit": implicit})
    return pd.DataFrame(rows, columns=["group", "root", "name", "step_num", "implicit"]) \
        .set_index("group")
