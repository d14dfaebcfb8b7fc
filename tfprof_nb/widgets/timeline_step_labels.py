"""The trace viewer's labels of step markers, as XProf's viewer labels them: an event that
carries a ``step_name`` stat (a file grouped while it was captured) by that stat, and a step
marker of a raw file (a root, ``_r``: ``train`` with ``step_num`` 5) by the step name XProf's
grouping gives it, ``train 5``.  The event keeps its name for the tables, the search and the
details."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["relabel_step_markers", "step_marker_labels"]


def _positions(ev: pd.DataFrame, values: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """(positions in ``ev`` of the events ``values`` is indexed by, their values): a search
    of the sorted event ids (no hash table of tens of millions of ids)."""
    ids, wanted = ev.index.to_numpy(), values.index.to_numpy()
    if not len(ids):
        return np.empty(0, np.int64), values[:0]
    if ev.index.is_monotonic_increasing:
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        at = np.where(ids[at] == wanted, at, -1)
    else:
        at = ev.index.get_indexer(wanted)
    keep = at >= 0
    return at[keep], values[keep]


def step_marker_labels(prof, ev: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(positions in ``ev`` (``prof.events`` or a part of it), their labels) of the events
    labelled by their step: a ``step_name`` stat's value, else a root's (an ``_r`` stat) name
    and ``step_num`` ("train 5")."""
    at, labels = [], []
    named = prof.stat("step_name")
    if len(named):
        pos, values = _positions(ev, named)
        at.append(pos)
        labels.append(values.astype(str).to_numpy(object))
    numbers = prof.stat("step_num")
    if len(numbers):
        numbers = numbers[numbers.index.isin(prof.stat("_r").index)]
        pos, values = _positions(ev, numbers)
        if len(at):
            keep = ~np.isin(pos, at[0])  # (a file's own step name wins)
            pos, values = pos[keep], values[keep]
        names = ev["name"].to_numpy()[pos].astype(str)
        at.append(pos)
        labels.append(np.array([f"{n} {int(v)}" for n, v in zip(names, values.to_numpy())],
                               object))
    if not at:
        return np.empty(0, np.int64), np.empty(0, object)
    return np.concatenate(at).astype(np.int64), np.concatenate(labels)


def relabel_step_markers(codes: np.ndarray, names: list[str], long_names: dict,
                         at: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each event's label code (``codes``, changed in place) with the events at ``at``
    labelled ``labels``, new labels appended to ``names`` and their events' own names to
    ``long_names`` (in place too); returns ``codes``."""
    if not len(at):
        return codes
    own = [names[c] for c in codes[at]]
    index: dict[str, int] = {}
    for pos, label, name in zip(at.tolist(), labels.tolist(), own):
        if label == name:
            continue
        code = index.get(label)
        if code is None:
            code = index[label] = len(names)
            names.append(label)
            long_names[str(code)] = name
        codes[pos] = code
    return codes
