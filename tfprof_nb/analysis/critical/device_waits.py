"""Waits between device streams and between devices: collectives and async start/done pairs.

* ``COLLECTIVE``: one collective runs on every participating device of the host (the k-th
  event of one collective name on each device plane is one instance: the same program runs the
  same collectives in the same order on each device); it cannot end on any device before the
  last participant arrived.  Each participant's end waits for the end of the instance's last
  arrival (the one that started last), when that ended inside it: the early devices' time in
  the collective is a wait for the late device's work before it.
* ``STREAM_WAIT``: an async collective's ``*-done`` event waits for its ``*-start`` (the k-th
  of each name pair on one device, a ``-done`` in place of the ``-start``): the stream that
  runs the done waits for the stream that ran the start (XLA's stream wait on the start's
  event).  The done's start waits for the start's end, or its end does when the start ended
  while the done ran.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["add_device_waits"]


def _ranked(names: np.ndarray, device: np.ndarray, begin: np.ndarray) -> pd.DataFrame:
    """One row per node given: name, device, its rank among the same name on its device."""
    frame = pd.DataFrame({"name": names, "device": device, "begin": begin,
                          "i": np.arange(len(names))})
    frame = frame.sort_values(["device", "name", "begin"], kind="stable")
    frame["rank"] = frame.groupby(["device", "name"], sort=False).cumcount()
    return frame.sort_values("i")


def add_device_waits(g, hd, collective_code: int, collective_kind: int,
                     stream_wait_kind: int) -> None:
    """Sets the collective and stream-wait edges of the module doc on graph ``g`` of host
    ``hd`` (its collectives' event names and device planes are read from it)."""
    coll = np.flatnonzero(g.is_device & (g.category == collective_code))
    if not len(coll):
        return
    rows = g.rows[coll]
    names, device = hd.name_of(rows), hd.space.line_plane[hd.space.events.line[rows]]
    _collectives(g, coll, names, device, collective_kind)
    _start_done(g, coll, names, device, stream_wait_kind)


def _collectives(g, nodes, names, device, kind: int) -> None:
    f = _ranked(names, device, g.begin[nodes]).assign(node=nodes)
    f = f[f.groupby(["name", "rank"]).device.transform("nunique") > 1]
    if f.empty:
        return
    last = f.loc[f.groupby(["name", "rank"]).begin.idxmax(), ["name", "rank", "node"]]
    f = f.merge(last.rename(columns={"node": "late"}), on=["name", "rank"])
    p, late = f.node.to_numpy(np.int64), f.late.to_numpy(np.int64)
    ok = (p != late) & (g.end[late] <= g.end[p]) & (g.end[late] > g.begin[p]) & \
        (g.end_src[p] < 0)
    g.end_src[p[ok]], g.end_kind[p[ok]] = late[ok], kind


def _start_done(g, nodes, names, device, kind: int) -> None:
    low = pd.Series(names, dtype=object).str.lower()
    is_done = low.str.contains("-done", regex=False).to_numpy()
    is_start = low.str.contains("-start", regex=False).to_numpy()
    if not is_done.any() or not is_start.any():
        return
    key = np.where(is_start, low.str.replace("-start", "-done", regex=False), low)
    sides = []
    for mask in (is_start, is_done & ~is_start):
        sides.append(_ranked(key[mask].astype(object), device[mask],
                             g.begin[nodes[mask]]).assign(node=nodes[mask]))
    pairs = sides[0].merge(sides[1], on=["name", "device", "rank"], suffixes=("_s", "_d"))
    src, dst = pairs.node_s.to_numpy(np.int64), pairs.node_d.to_numpy(np.int64)
    during = (g.end[src] > g.begin[dst]) & (g.end[src] <= g.end[dst]) & (g.end_src[dst] < 0)
    g.end_src[dst[during]], g.end_kind[dst[during]] = src[during], kind
    before = ~during & (g.end[src] <= g.begin[dst])
    own = g.start_src[dst]
    take = before & ((own < 0) | (g.end[np.maximum(own, 0)] < g.end[src]))
    g.start_src[dst[take]], g.start_kind[dst[take]] = src[take], kind
