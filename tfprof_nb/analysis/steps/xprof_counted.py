"""The steps XProf's step-time figures count, by its rules (its averages, min, max and
standard deviation of the step time, its breakdown's shares and the verdicts on them).

* **One host**: its steps without the first and last of its full list where that has more
  than five (the reference drops them as incomplete, cut or not; a step the load's window cut
  is gone already: ``steps.attrs[CUT_ENDS]`` says which ends went).  Steps inferred from a
  repeated program (the reference finds none there) are all kept.
* **Several hosts** (a pod): the worker hosts (those with a device, or every host where none
  has one; the reference leaves a coordinator out), each counted as above, are aligned step
  by step: the *chief* is the host whose counted steps span the least time; every other host
  is laid beside it at the offset whose steps overlap the chief's the most (their overlaps
  summed; the first best offset wins, offsets into the chief's list tried before offsets into
  the host's), and the steps that every host has at its offset are XProf's.  A worker without
  steps leaves none.  Each aligned step's time is its slowest host's; its breakdown is the
  first host's (the reference files each host's step under its own core ids, and its breakdown
  reads core 0: the first host's).  The overlaps are of the steps' times as each host's file
  holds them (``steps.attrs[FILE_TIME_NS]``), not of the profile's shared axis: TensorFlow and
  JAX write each host's times from its own profile start, and the reference lays those side
  by side unshifted (hosts whose sessions began at different moments are compared as if they
  had begun together).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

__all__ = ["CUT_ENDS", "FILE_TIME_NS", "HOST_DEVICES", "KEEP_CUT_STEPS", "XprofSteps",
           "file_time_ns", "xprof_count", "xprof_counted_mask", "xprof_pod_alignment",
           "xprof_steps", "xprof_step_ms"]

# steps.attrs: {host: (its steps before the window's cut ones went, whether its first and its
# last went)}: XProf drops the first and last of its full list
CUT_ENDS = "cut_ends"
# steps.attrs: {host: whether it has a device} for every host whose steps were looked for (a
# host without steps too): the workers a pod's steps are aligned across
HOST_DEVICES = "host_devices"
# steps.attrs: {host: ns to add to a time on the profile's axis (start_us * 1000) for the time
# that host's file holds (file_time_ns): what the reference aligns a pod's steps by
FILE_TIME_NS = "file_time_ns"
KEEP_CUT_STEPS = 5  # up to this many steps, those the window cuts stay (the reference's)


def file_time_ns(space, shift_ps: int) -> int:
    """For a host decoded from ``space`` and laid on the profile's axis ``shift_ps`` after its
    own origin: the ns to add to a time on that axis for the time in the host's file (a Python
    int: absolute file times pass int64 in ps)."""
    return int(space.file_origin_ns()) - int(shift_ps) // 1000


@dataclass
class XprofSteps:
    """XProf's steps of a step table: ``rows``, the rows its breakdown reads (one host's);
    ``step_ms``, each of those steps' time (a pod's: the slowest host's), aligned with
    ``rows``; ``hosts``, the hosts aligned (one: the table's); ``left_out``, the hosts of a pod
    without a device XProf leaves out; ``pod``, whether the pod rule applied (several hosts
    looked at); ``counted``, a bool per row of the step table: the steps XProf's figures
    count (a pod's: every worker's aligned steps, not only those its breakdown reads);
    ``aligned``, a pod's {worker: the positions in the step table of its aligned steps, one
    per aligned step, in order}."""

    rows: pd.DataFrame
    step_ms: pd.Series
    hosts: list
    left_out: list
    pod: bool = False
    counted: np.ndarray | None = None
    aligned: dict | None = None


def xprof_steps(steps: pd.DataFrame) -> pd.DataFrame:
    """The step rows XProf's breakdown reads (see the module doc): ``xprof_count(steps).rows``."""
    return xprof_count(steps).rows


def xprof_counted_mask(steps: pd.DataFrame) -> np.ndarray:
    """A bool per row of ``steps``: whether XProf's step figures count that step (see the
    module doc; a pod's: every worker's aligned steps)."""
    return xprof_count(steps).counted


def xprof_pod_alignment(steps: pd.DataFrame) -> dict | None:
    """The steps XProf's pod viewer lays side by side: {worker: the positions in ``steps`` of
    its aligned steps, one per aligned step, in order}, aligned as a pod's step figures are
    (see the module doc) but with every step of each worker's list (the pod viewer drops no
    first or last step; one worker: its steps); None for no steps or inferred steps."""
    if _no_rule(steps):
        return None
    hosts = _table_hosts(steps)
    workers = _workers(steps, hosts)
    if len(workers) < 2:
        return {h: np.flatnonzero(steps.host.astype(str).to_numpy() == h) for h in workers}
    return _aligned(steps, workers, _first_host(steps, hosts), drop_ends=False).aligned


def xprof_step_ms(steps: pd.DataFrame) -> pd.Series:
    """Each of XProf's steps' time in ms, the slowest host's in a pod (see the module doc)."""
    return xprof_count(steps).step_ms


# xprof_count's answers by the step table they are of (id: (weak reference, fingerprint,
# answer)): a profile's analyses ask for its steps' count several times (the measures, the
# input pipeline, the overview, precision); an entry goes with its table.  No lock: a dict's
# get, set and pop are atomic, two threads counting one table at once both store the same
# answer, and an entry's callback (run by the garbage collector, on any thread, at any
# allocation) must never wait for a lock its own thread may hold
_COUNTED: dict[int, tuple] = {}


def _fingerprint(steps: pd.DataFrame) -> tuple:
    """What xprof_count reads of a table (its times hashed), so that a table changed in place
    is counted anew."""
    times = tuple(hash(steps[c].to_numpy().tobytes()) for c in ("start_us", "duration_ms")
                  if c in steps)
    source = str(steps.source.iloc[0]) if "source" in steps and len(steps) else ""
    return (len(steps), tuple(steps.columns), times, source,
            repr(steps.attrs.get(CUT_ENDS)), repr(steps.attrs.get(HOST_DEVICES)),
            repr(steps.attrs.get(FILE_TIME_NS)))


def xprof_count(steps: pd.DataFrame) -> XprofSteps:
    """XProf's steps of ``steps`` (see the module doc), counted once per table (each caller
    gets its own shallow copies of the tables: one that writes into them changes no other's)."""
    key, mark = id(steps), _fingerprint(steps)
    hit = _COUNTED.get(key)
    if hit is None or hit[0]() is not steps or hit[1] != mark:
        counted = _count(steps)
        if counted.rows is steps:  # (the entry must not hold its own table: it would stay)
            counted = replace(counted, rows=steps.copy(deep=False))
        _COUNTED[key] = (weakref.ref(steps, lambda _, key=key: _COUNTED.pop(key, None)),
                         mark, counted)
    else:
        counted = hit[2]
    return replace(counted, rows=counted.rows.copy(deep=False),
                   step_ms=counted.step_ms.copy(deep=False), hosts=list(counted.hosts),
                   left_out=list(counted.left_out), counted=counted.counted.copy(),
                   aligned=None if counted.aligned is None else dict(counted.aligned))


def _no_rule(steps: pd.DataFrame) -> bool:
    """No steps, or steps inferred here: XProf finds none, so its rules keep every step."""
    return not len(steps) or str(steps.source.iloc[0]).startswith("inferred")


def _table_hosts(steps: pd.DataFrame) -> list:
    """The hosts of a step table, in the order they come."""
    return list(pd.unique(steps["host"].astype(str))) if "host" in steps and len(steps) \
        else []


def _count(steps: pd.DataFrame) -> XprofSteps:
    hosts = _table_hosts(steps)
    if _no_rule(steps) or len(hosts) < 2 and len(_workers(steps, hosts)) < 2:
        kept = _kept_per_host(steps)
        rows = steps if kept.all() else steps[kept]
        return XprofSteps(rows, rows.duration_ms.astype(float), hosts, [], counted=kept)
    return _aligned(steps, _workers(steps, hosts), _first_host(steps, hosts))


def _hosts_looked_at(steps: pd.DataFrame, hosts: list) -> dict:
    """{host: whether it has a device} of every host whose steps were looked for, in the
    profile's order (``steps.attrs[HOST_DEVICES]``; else the table's hosts, as workers): those
    of the table, and those that had no steps (a host that had some, ``steps.attrs[CUT_ENDS]``,
    but is not in the table was filtered out of it: it does not count)."""
    devices = steps.attrs.get(HOST_DEVICES) or {h: True for h in hosts}
    had, present = steps.attrs.get(CUT_ENDS, {}), set(hosts)
    return {h: d for h, d in devices.items() if h in present or h not in had}


def _workers(steps: pd.DataFrame, hosts: list) -> list:
    """The hosts a pod's steps are aligned across, in order: every host whose steps were
    looked for, less those without a device where another has one."""
    devices = _hosts_looked_at(steps, hosts)
    if any(devices.values()):
        return [h for h, device in devices.items() if device]
    return list(devices)


def _first_host(steps: pd.DataFrame, hosts: list) -> str:
    """The host whose steps XProf's breakdown reads: the profile's first."""
    return next(iter(_hosts_looked_at(steps, hosts)))


def _kept_per_host(steps: pd.DataFrame) -> np.ndarray:
    """A bool per row: each host's steps without the first and last of its full list where
    that has more than five (see the module doc)."""
    if _no_rule(steps):
        return np.ones(len(steps), bool)
    code, hosts = (pd.factorize(steps["host"].astype(str)) if "host" in steps else
                   (np.zeros(len(steps), np.int64), np.array([""], dtype=object)))
    count = np.bincount(code, minlength=len(hosts))
    # each step's position in its host's list (the rows keep each host's order)
    order = np.argsort(code, kind="stable")
    position = np.empty(len(steps), np.int64)
    position[order] = np.arange(len(steps)) - np.repeat(np.cumsum(count) - count, count)
    cut = steps.attrs.get(CUT_ENDS, {})
    full, first_gone, last_gone = (np.array([cut.get(h, (n, False, False))[i]
                                             for h, n in zip(hosts, count)])[code]
                                   for i in range(3))
    count = count[code]
    return (full <= KEEP_CUT_STEPS) | (((position > 0) | first_gone)
                                       & ((position < count - 1) | last_gone))


def _aligned(steps: pd.DataFrame, workers: list, first: str,
             drop_ends: bool = True) -> XprofSteps:
    """A pod's steps aligned across ``workers``, the breakdown's rows ``first``'s (none where
    it is not a worker: see the module doc); ``drop_ends=False``: each host's whole list (the
    pod viewer's)."""
    kept = np.flatnonzero(_kept_per_host(steps) if drop_ends else
                          np.ones(len(steps), bool))  # (positions in the table)
    counted = steps.iloc[kept]
    host = counted.host.astype(str).to_numpy()
    per = {h: counted[host == h] for h in workers}
    where = {h: kept[host == h] for h in workers}
    spans = _file_spans(per, steps.attrs.get(FILE_TIME_NS) or {})
    length = {h: (s[1].max() - s[0].min()) if len(s[0]) else 0.0 for h, s in spans.items()}
    chief = min(workers, key=lambda h: length[h])  # (the first of the shortest)
    n_chief = len(per[chief])
    begin, num = {}, {}
    for h in workers:
        if h == chief:
            begin[h], num[h] = (0, 0), n_chief
        else:
            begin[h], num[h] = _alignment(spans[h], spans[chief])
    lo = max(b[1] for b in begin.values())
    hi = min(begin[h][1] + num[h] for h in workers)
    left_out = [h for h in _hosts_looked_at(steps, list(per)) if h not in per]
    mask = np.zeros(len(steps), bool)
    if not n_chief or lo >= hi:
        return XprofSteps(steps.iloc[:0], pd.Series(dtype=float), workers, left_out, pod=True,
                          counted=mask, aligned={h: np.zeros(0, np.int64) for h in workers})
    cut = {h: slice(begin[h][0] + lo - begin[h][1], begin[h][0] + hi - begin[h][1])
           for h in workers}
    picked = {h: per[h].iloc[cut[h]] for h in workers}
    for h in workers:
        mask[where[h][cut[h]]] = True
    rows = picked.get(first, steps.iloc[:0])
    times = np.max([picked[h].duration_ms.to_numpy(float) for h in workers], axis=0)
    return XprofSteps(rows, pd.Series(times, index=picked[workers[0]].index,
                                      name="duration_ms"), workers, left_out, pod=True,
                      counted=mask, aligned={h: where[h][cut[h]] for h in workers})


def _spans(table: pd.DataFrame, shift_us: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(begin, end) in us of each step of one host's table, ``shift_us`` added."""
    begin = table.start_us.to_numpy(float) + shift_us
    return begin, begin + table.duration_ms.to_numpy(float) * 1e3


def _file_spans(per: dict, file_ns: dict) -> dict:
    """{host: (begin, end)} of its steps as its file times them (less the hosts' least file
    offset, so that the numbers stay small; a host without an offset: the profile's axis)."""
    offsets = {h: file_ns.get(h, 0) for h in per}
    least = min(offsets.values(), default=0)
    return {h: _spans(t, (offsets[h] - least) / 1e3) for h, t in per.items()}


def _alignment(sub: tuple, chief: tuple) -> tuple[tuple[int, int], int]:
    """((first index on ``sub``, first index on the chief), steps) of the offset whose steps
    overlap the chief's the most: each pair of overlapping steps adds its overlap to its
    offset (chief index less sub index); offsets 0, 1, ... into the chief are tried first,
    then 1, 2, ... into ``sub``, a later one winning only when strictly better (none
    overlapping: offset 0)."""
    n_sub, n_chief = len(sub[0]), len(chief[0])
    if not n_sub or not n_chief:
        return (0, 0), 0
    # the chief's steps each sub step overlaps: those starting before it ends and ending
    # after it starts (a host's steps follow one another)
    first = np.searchsorted(chief[1], sub[0], side="right")
    last = np.searchsorted(chief[0], sub[1], side="left")
    count = np.maximum(last - first, 0)
    i = np.repeat(np.arange(n_sub), count)
    j = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count) + \
        np.repeat(first, count)
    overlap = np.minimum(sub[1][i], chief[1][j]) - np.maximum(sub[0][i], chief[0][j])
    score = np.zeros(n_sub + n_chief - 1)  # offset d at d + n_sub - 1
    np.add.at(score, j - i + n_sub - 1, np.maximum(overlap, 0.0))
    # the order offsets are tried in: 0 .. n_chief - 1, then -1 .. -(n_sub - 1)
    tried = np.concatenate([np.arange(n_chief), -np.arange(1, n_sub)])
    d = int(tried[int(np.argmax(score[tried + n_sub - 1]))])  # (the first of the best)
    if d >= 0:
        return (0, d), min(n_sub, n_chief - d)
    return (-d, 0), min(n_sub + d, n_chief)
