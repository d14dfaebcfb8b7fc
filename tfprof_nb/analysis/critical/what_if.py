"""``prof.what_if(scale=...)``: each step's duration predicted with some durations scaled.

``scale`` maps keys to factors.  A key is a category of :data:`.graph.CATEGORIES` (every node
of it; ``idle`` scales the gaps between consecutive events of a resource: untraced host Python,
a stream's idle time) or a glob pattern matched (``fnmatchcase``) on event names (ops,
kernels, HLO names, annotations); a node matched by several keys gets their product.  Each
host's graph is replayed (:mod:`.replay`) and each step's window mapped onto the replay:

* a step's start ``t0`` moves with an event starting exactly at ``t0`` (a device's first):
  ``R(t0)`` is its replayed start; its end ``t1`` with an event ending exactly at ``t1``:
  ``R(t1)`` its replayed end (the step's last event: its end is the step's end);
* with no such event, ``t`` moves with the node the critical path walk starts from at ``t``
  (the innermost event of the resource whose activity ends at ``t``; else the last
  top-level event before it): ``R(t) = its replayed end + (t - its measured end)``;
* the predicted step is ``R(end) - R(start)``; with no scaling ``R(t) = t`` exactly;
* its critical path is the walk (:mod:`.walk`) over the replayed times from ``R(start)`` to
  ``R(end)`` (``attrs["critical_path"]``, the columns of ``prof.critical_path``).

Durations only: the replay is the same program with some events shorter or longer.  A change
that recompiles (other fusions, shapes, sharding), launches other kernels or moves work to
another thread is out of its reach.

The range (``low_ms``, ``high_ms``): the prediction +/- half the measured steps' interquartile
range on that host, times the predicted/measured ratio of the medians.  A replay of one step
is deterministic, so the band comes from the run's own step-to-step spread, assumed to scale
with the step.
"""

from __future__ import annotations

from dataclasses import replace
from fnmatch import fnmatchcase

import numpy as np
import pandas as pd

from ..._system import available_memory
from .graph import CATEGORIES
from .replay import replay, siblings
from .replay_graph import ReplayGraph
from .path_summary import critical_path_summary
from .path import window_order
from .walk import SEGMENT_KINDS, Walker, walk_windows

__all__ = ["what_if", "node_self_ms", "WHAT_IF_COLUMNS"]

WHAT_IF_COLUMNS = ["host", "step", "measured_ms", "predicted_ms", "low_ms", "high_ms",
                   "change"]
RECOMPILE_NOTE = ("Durations only: the same compiled program with some events shorter or "
                  "longer; a change that recompiles (other fusions, shapes, sharding), "
                  "launches other kernels or moves work to another thread is out of its reach.")
_TEXT = ("resource", "category", "kind", "name", "waited_on")
# memory a host's replay takes beyond the analysed profile, per node of its graph (measured:
# 229-241 bytes on TF CPU hosts of 1.45 M and 10.1 M nodes)
REPLAY_NODE_BYTES = 256
# what the "input" key scales: the critical path's category, not the page's input wait
INPUT_NOTE = ("'input' scales what the critical path counts as input: tf.data's waits and its "
              "functions' work, infeed and host-to-device copies, a device's copies named H2D "
              "or HtoD included (XProf's step breakdown counts JAX's MemcpyH2D as device "
              "compute); it is not the overview's 'Waiting for input', a share of step time "
              "measured by its own rule.")
RANGE_NOTE = ("Range: the prediction +/- half the measured steps' interquartile range, times "
              "the predicted/measured ratio of the medians (the run's step-to-step spread).")


def _factors(rg: ReplayGraph, scale: dict, matched: dict) -> tuple[np.ndarray, float]:
    """(factor per node, factor of idle gaps); ``matched`` gets, per key, the nodes' count,
    their measured own time (ms: what the factor scales, a node's duration less its
    children's) and their most expensive names; for ``idle`` the gaps' count and time."""
    g = rg.graph
    factor, idle = np.ones(len(g)), 1.0
    # each node's name as its place among the distinct name strings, in their sorted order
    names, of_code = np.unique(np.asarray(rg.name_table).astype(str), return_inverse=True)
    inverse = of_code.reshape(-1)[rg.name_codes] if len(g) else np.zeros(0, np.int64)
    dur = _own_ps(g)
    for key, f in scale.items():
        if key == "idle":
            idle *= f
            m = matched.setdefault(key, {"nodes": 0, "ms": 0.0, "names": {}, "of": "gaps"})
            gaps = _idle_gaps_ps(g)
            m["nodes"] += len(gaps)
            m["ms"] += float(gaps.sum()) / 1e9
            continue
        elif key in CATEGORIES:
            mask = g.category == CATEGORIES.index(key)
        else:
            hit = np.array([fnmatchcase(str(c), key) for c in names], bool)
            mask = hit[inverse] if len(names) else np.zeros(len(g), bool)
        factor[mask] *= f
        m = matched.setdefault(key, {"nodes": 0, "ms": 0.0, "names": {}, "of": "events"})
        m["nodes"] += int(mask.sum())
        m["ms"] += float(dur[mask].sum()) / 1e9
        for code, ps in pd.Series(dur[mask]).groupby(inverse[mask]).sum().items():
            name = str(names[code])
            m["names"][name] = m["names"].get(name, 0.0) + ps / 1e9
    return factor, idle


def _own_ps(g) -> np.ndarray:
    """float ps: each node's own time, its duration less its children's (what a factor
    scales: the replay keeps a child's time its own)."""
    dur = (g.end - g.begin).astype(float)
    nested = g.parent >= 0
    inner = np.zeros(len(g))
    np.add.at(inner, g.parent[nested], dur[nested])
    return dur - inner


def _idle_gaps_ps(g) -> np.ndarray:
    """int64 ps: the gaps between consecutive top-level events of each resource (the replay's
    sibling pairs without a parent: what the ``idle`` key scales), those longer than 0."""
    prev, nxt = siblings(g)
    top = g.parent[nxt] < 0
    gaps = g.begin[nxt[top]] - g.end[prev[top]]
    return gaps[gaps > 0]


def _anchor(w: Walker, t: int) -> int:
    """The node a time moves with (see the module doc); -1: none."""
    r = w.start_resource(t)
    if r is None:
        return -1
    k = w.innermost(r, t)
    if k < 0:
        k = w._last_before(r, t)
        while k >= 0 and w.parent[k] >= 0:
            k = w.parent[k]
    return k


def _at(points: np.ndarray, order: np.ndarray, is_device: np.ndarray, t: int) -> int:
    """A node with a point exactly at ``t`` (a device's first; -1: none)."""
    lo = np.searchsorted(points, t, sorter=order)
    hi = np.searchsorted(points, t, side="right", sorter=order)
    if hi <= lo:
        return -1
    hits = order[lo:hi]
    dev = hits[is_device[hits]]
    return int(dev[0] if len(dev) else hits.min())


class _Mover:
    """``R(t)`` of the module doc: a step's start moves with a node starting at it, its end
    with a node ending at it, else with the node the walk starts from."""

    def __init__(self, w: Walker, rep):
        self.w, self.rep, g = w, rep, w.g
        self.g, self.by_begin, self.by_end = g, np.argsort(g.begin), np.argsort(g.end)

    def start(self, t: int) -> float:
        k = _at(self.g.begin, self.by_begin, self.g.is_device, t)
        return float(self.rep.begin[k]) if k >= 0 else self.end(t)

    def end(self, t: int) -> float:
        k = _at(self.g.end, self.by_end, self.g.is_device, t)
        if k < 0:
            k = _anchor(self.w, t)
        return float(t) if k < 0 else float(self.rep.end[k]) + (t - self.w.end[k])


def _host(host: str, rg: ReplayGraph, scale: dict, matched: dict, offset: int):
    factor, idle = _factors(rg, scale, matched)
    rep = replay(rg.graph, factor, idle)
    move = _Mover(Walker(rg.graph), rep)
    g2 = replace(rg.graph, begin=np.rint(rep.begin).astype(np.int64),
                 end=np.rint(rep.end).astype(np.int64))
    rows, r0s, r1s = [], [], []
    for step, t0, t1 in zip(rg.steps.tolist(), rg.t0.tolist(), rg.t1.tolist()):
        r0, r1 = move.start(t0), move.end(t1)
        rows.append((host, step, (t1 - t0) / 1e9, (r1 - r0) / 1e9))
        r0s.append(int(round(r0)))
        r1s.append(int(round(r1)))
    segs = walk_windows(g2, np.asarray(r0s, np.int64), np.asarray(r1s, np.int64))
    return rows, [_path(host, segs, rg, g2, offset)], rep.unresolved


def _path(host, segs: dict, rg: ReplayGraph, g2, offset: int) -> pd.DataFrame:
    """The segments of every step's replayed path (the columns of ``prof.critical_path``)."""
    node, waited, start, end = segs["node"], segs["waited_on"], segs["start"], segs["end"]
    ok, wok = node >= 0, waited >= 0
    keys, at = np.unique(segs["resource"], return_inverse=True)
    resource = np.asarray([g2.resource_names.get(int(k), "") for k in keys], object)
    out = pd.DataFrame({
        "host": host, "step": rg.steps[segs["window"]], "order": window_order(segs["window"]),
        "start_us": (start + rg.shift_ps) / 1e6, "duration_us": (end - start) / 1e6,
        "resource": resource[at.reshape(-1)] if len(keys) else np.zeros(0, object),
        "category": np.asarray(CATEGORIES, object)[segs["category"].astype(np.int64)],
        "kind": np.asarray(SEGMENT_KINDS, object)[segs["kind"].astype(np.int64)],
        "name": rg.name_of(node, "idle"),
        "event_id": np.where(ok, rg.event_rows[np.maximum(node, 0)] + offset, -1),
        "waited_on": rg.name_of(waited, ""),
        "waited_on_id": np.where(wok, rg.event_rows[np.maximum(waited, 0)] + offset, -1)})
    if len(np.unique(segs["window"])) < len(rg.steps):
        # a step without segments: the text columns are plain objects, as the concatenation
        # of each step's rows, its empty ones included, makes them
        out = out.astype({c: object for c in _TEXT})
    return out


def _ranges(out: pd.DataFrame) -> pd.DataFrame:
    low, high = [], []
    for _, rows in out.groupby("host", sort=False):
        q1, q3 = rows.measured_ms.quantile([0.25, 0.75])
        med = rows.measured_ms.median()
        ratio = rows.predicted_ms.median() / med if med > 0 else 1.0
        half = 0.5 * (q3 - q1) * ratio
        low.append(rows.predicted_ms - half)
        high.append(rows.predicted_ms + half)
    return out.assign(low_ms=pd.concat(low), high_ms=pd.concat(high))


def what_if(graphs: dict, event_offsets: dict, scale: dict | None = None) -> pd.DataFrame:
    """The table (see the module doc): one row per step, ``attrs``: ``matched`` ({key: nodes,
    ms, names: {name: measured ms}}), ``notes``, ``critical_path`` and ``sentence``."""
    scale = {str(k): float(v) for k, v in (scale or {}).items()}
    bad = [k for k, v in scale.items() if not np.isfinite(v) or v < 0]
    if bad:
        raise ValueError(f"scale factors must be finite and >= 0: {bad}")
    _check_memory(graphs)
    matched: dict = {}
    rows, paths, unresolved = [], [], 0
    for host, rg in graphs.items():
        if rg is not None:
            r, p, u = _host(host, rg, scale, matched, int(event_offsets.get(host, 0)))
            rows, paths, unresolved = rows + r, paths + p, unresolved + u
    out = pd.DataFrame(rows, columns=["host", "step", "measured_ms", "predicted_ms"]).astype(
        {"host": object, "step": "int64", "measured_ms": float, "predicted_ms": float})
    out = _ranges(out) if len(out) else out.assign(low_ms=0.0, high_ms=0.0)
    out["change"] = out.predicted_ms / out.measured_ms - 1
    out = out[WHAT_IF_COLUMNS]
    cp = pd.concat(paths, ignore_index=True) if paths else pd.DataFrame()
    notes = [RECOMPILE_NOTE, RANGE_NOTE] + ([INPUT_NOTE] if "input" in scale else [])
    notes += [f"{k!r} matched no event." for k, m in matched.items()
              if m["nodes"] == 0 and k != "idle"]
    if unresolved:
        notes.append(f"{unresolved} event times on a dependency cycle kept as measured.")
    for m in matched.values():
        m["names"] = dict(sorted(m["names"].items(), key=lambda kv: -kv[1])[:10])
    out.attrs.update(matched=matched, notes=notes, critical_path=cp,
                     sentence=critical_path_summary(cp).attrs["sentence"] if len(cp) else "")
    return out


def _check_memory(graphs: dict) -> None:
    """Refuse (MemoryError) before replaying when the largest host's replay would not fit in
    free memory (hosts are replayed one after another)."""
    sizes = {h: len(rg.graph) for h, rg in graphs.items() if rg is not None}
    available = available_memory()
    if not sizes or available is None:
        return
    host = max(sizes, key=sizes.get)
    need = REPLAY_NODE_BYTES * sizes[host]
    if need > available:
        raise MemoryError(
            f"what_if: host {host}'s dependency graph has {sizes[host]:,} events, whose replay "
            f"needs about {need / 2**30:.1f} GiB of memory, and {available / 2**30:.1f} GiB "
            "are free: open a part of the profile, tp.load(path, window=(start_us, end_us)), "
            "and ask it there")


def node_self_ms(prof, name: str) -> np.ndarray:
    """Each event named ``name`` (every host): its own time in ms (duration less its
    children's), the part ``scale={name: f}`` scales."""
    out = []
    for rg in prof.result("replay_graph").values():
        if rg is None:
            continue
        out.append(_own_ps(rg.graph)[rg.nodes_named(name)] / 1e9)
    return np.concatenate(out) if out else np.zeros(0)
