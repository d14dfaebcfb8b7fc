"""The events behind a row of a table, for the trace viewer: a click on a row of TensorFlow
stats (op stats), GPU kernel stats or HLO op stats shows its occurrences in the trace.

- ``ops``: an op (``operation``) on the host or the devices (``host_or_device``): events of
  that side whose name is the op (``name:Type`` parsed as TensorFlow's stats parse it, a
  tf.data iterator's own name) or whose ``tf_op`` stat is; on the devices also the events of
  the HLO ops rolled up into it (their framework op, as op stats roll them up);
- ``kernels``: device events named ``kernel_name``;
- ``hlo``: device events whose ``hlo_op`` stat is ``hlo_op_name`` or that ran inside a command
  buffer attributed to it (of ``program_id`` where the events say their program), or, for
  events without that stat, whose name is the op or its HLO
  text (``%name = ...``, as TPU ``XLA Ops`` lines name their events; not their ``Async XLA
  Ops`` copies).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from ..analysis.trace.tf_ops import parse_tf_op
from ..constants import ASYNC_XLA_OPS_LINE

__all__ = ["TABLES", "occurrences"]

TABLES = ("ops", "kernels", "hlo")


@lru_cache(maxsize=1 << 16)
def _op_of(name: str) -> str:
    """The op a trace event or ``tf_op`` value names (the name itself when it names none)."""
    category, op, _ = parse_tf_op(name)
    return name if category == "unknown" else op


def _names(prof) -> pd.Series:
    return prof.events["name"]


def _side(prof, device: bool) -> np.ndarray:
    """bool per event: on a device plane (``device``), else on a host plane."""
    planes = prof.events["plane"]
    is_device = np.asarray(planes.cat.categories.str.startswith("/device:"), bool)
    return is_device[planes.cat.codes.to_numpy()] == device


def _named(prof, match) -> np.ndarray:
    """bool per event: ``match`` (a function of one name) holds for its name."""
    names = _names(prof)
    table = np.array([bool(match(str(n))) for n in names.cat.categories], bool)
    return table[names.cat.codes.to_numpy()] if len(table) else np.zeros(len(names), bool)


def _stat_is(prof, stat: str, match) -> np.ndarray:
    """bool per event: it carries ``stat`` and ``match`` holds for its value."""
    out = np.zeros(len(prof.events), bool)
    values = prof.stat(stat)
    if not len(values):
        return out
    if isinstance(values.dtype, pd.CategoricalDtype):
        table = np.array([bool(match(str(v))) for v in values.cat.categories], bool)
        hit = table[values.cat.codes.to_numpy()] & (values.cat.codes.to_numpy() >= 0)
    else:
        hit = np.array([bool(match(str(v))) for v in values], bool)
    out[values.index.to_numpy()[hit]] = True
    return out


def _hlo_ops_of(prof, op: str) -> set[str]:
    """The HLO ops a device op row stands for: those whose framework op (the ``op_name`` of
    their provenance) is ``op``, and ``op`` itself (an HLO op without a framework op)."""
    hlo = prof.hlo_stats
    if not len(hlo):
        return {op}
    provenance = hlo.framework_op_name.fillna("").astype(str)
    framework = np.array([_op_of(p) if p else "" for p in provenance], object)
    return {op} | set(hlo.hlo_op_name.astype(str)[framework == op])


def _attributed(prof, ops: set) -> tuple[np.ndarray, np.ndarray]:
    """(the kernels run inside command buffers, whose ``hlo_op`` names the buffer; whether
    the op each is attributed to is one of ``ops``)."""
    inside = prof.result("command_buffer_kernels")
    return inside.event.to_numpy(), inside.hlo_op.isin(ops).to_numpy()


def _ops(prof, key: dict) -> np.ndarray:
    op = str(key.get("operation", ""))
    device = str(key.get("host_or_device", "Host")) == "Device"
    hit = _named(prof, lambda n: _op_of(n) == op)
    hit |= _stat_is(prof, "tf_op", lambda v: _op_of(v) == op)
    if device:  # XLA's ops: by their HLO op, rolled up into framework ops as the stats are
        hlo = _hlo_ops_of(prof, op)
        hit |= _stat_is(prof, "hlo_op", lambda v: v in hlo)
        events, mine = _attributed(prof, hlo)
        hit[events] |= mine
        hit |= _named(prof, lambda n: n.startswith("%") and n[1:].split(" = ", 1)[0] in hlo)
        hit &= _not_async(prof)
    return hit & _side(prof, device)


def _kernels(prof, key: dict) -> np.ndarray:
    name = str(key.get("kernel_name", ""))
    return _named(prof, lambda n: n == name) & _side(prof, True)


def _hlo(prof, key: dict) -> np.ndarray:
    op = str(key.get("hlo_op_name", ""))
    text = f"%{op} = "
    hit = _stat_is(prof, "hlo_op", lambda v: v == op).copy()
    events, mine = _attributed(prof, {op})
    hit[events] = mine  # (a buffer's own row: the kernels left unresolved in it)
    program = key.get("program_id")
    if hit.any() and program not in (None, ""):
        ids = prof.stat("program_id")
        same = np.ones(len(prof.events), bool)
        same[ids.index.to_numpy()] = ids.astype(str).to_numpy() == str(program)
        hit &= same
    carries = _stat_is(prof, "hlo_op", lambda v: True)  # (their names may be other ops')
    hit |= _named(prof, lambda n: n == op or n.startswith(text)) & ~carries
    return hit & _side(prof, True) & _not_async(prof)


def _not_async(prof) -> np.ndarray:
    """bool per event: not on a TPU's async ops line (it draws the XLA Ops' async ops again,
    which HLO op stats do not count twice)."""
    lines = prof.events["line"]
    table = np.asarray(lines.cat.categories != ASYNC_XLA_OPS_LINE, bool)
    return table[lines.cat.codes.to_numpy()]


def occurrences(prof, table: str, key: dict) -> np.ndarray:
    """The event ids (rows of ``prof.events``) behind the row ``key`` of table ``table``
    (one of TABLES), in id order."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}: one of {', '.join(TABLES)}")
    hit = {"ops": _ops, "kernels": _kernels, "hlo": _hlo}[table](prof, key)
    return np.flatnonzero(hit)
