"""TPU device planes: what each TensorCore ran, read the way XProf's converters read it.

A TensorCore plane (``/device:TPU:<n>``) has lines written by the TPU runtime:

* ``XLA Ops``: one event per execution of an HLO op.  Its metadata names the op (display
  name: the instruction; name: its HLO text) and carries ``program_id``, ``symbol_id``,
  ``hlo_category``, ``tf_op`` (the framework op), ``flops``, ``model_flops``,
  ``bytes_accessed``, ``memory_access_breakdown`` (bytes per memory space), ``deduplicated_name``,
  ``source`` and ``source_stack``.  The op's device time is its ``device_offset_ps`` /
  ``device_duration_ps`` stats when present, else the event's own time.
* ``XLA Modules``: one event per execution of a program (``<module>(<program id>)``).
* ``Steps``: step markers, where the runtime writes them.
* ``Async XLA Ops``, ``XLA TraceMe`` and the derived lines: shown in the trace only.

The rules (XProf's): ops are keyed by (program, symbol); ops nest on their line by device
time and an op's self time is its time minus its direct children's; occurrences count events
(an aggregated event counts its ``num_occurrences``); FLOPs, bytes and the memory breakdown
are per execution times occurrences (a custom call adds its events' own stats instead); a
plane's total time runs from its first to its last op (``Steps`` events included); events
whose metadata has no program or symbol are left out of the ops (their time is idle) and
counted in a reason.  (The duty cycle is :mod:`..gpu.activity`'s, for GPUs and TPUs alike.)

The per-host step (:func:`host_tpu`) returns the host's ops (OP_COLUMNS, see
:mod:`.ops`), per-plane totals, the program executions, the host plane's hardware
counters and reasons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..._native.kernels import nest_strict, nesting_order
from ...constants import (HOST_PLANE, STEPS_LINE, TPU_OP_LINES, TPU_PLANE_PREFIX,
                         TPU_TENSOR_CORE_PLANE, TPU_TRACE_ONLY_LINES, XLA_MODULES_LINE,
                         XLA_OPS_LINE)
from ...xspace.model import stat_value
from ...xspace.proto_wire import ProtoWireError, memory_access_bytes
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..trace.display_names import hlo_instruction

__all__ = ["ANALYSES", "host_tpu", "combine_tpu", "tensor_core_planes", "op_events",
           "op_executions",
           "categorized_ops", "module_runs", "MEMORY_COLUMNS", "TpuData"]

_CORE_PLANE = re.compile(TPU_TENSOR_CORE_PLANE)
_PROGRAM_IN_NAME = re.compile(r"^(.*)\((\d+)\)$", re.S)
_CUSTOM_CALL = "custom-call"
_U64 = 2**64 - 1
# per-execution bytes by memory space (NaN where the op has no breakdown)
MEMORY_COLUMNS = ["hbm_bytes", "cmem_read_bytes", "cmem_write_bytes", "vmem_read_bytes",
                  "vmem_write_bytes"]
_MD_STATS = ("program_id", "symbol_id", "hlo_category", "tf_op", "flops", "model_flops",
             "bytes_accessed", "memory_access_breakdown", "deduplicated_name", "source",
             "source_stack")


def tensor_core_planes(hd: HostData) -> dict[int, int]:
    """{plane index: TPU ordinal} of the host's TensorCore planes."""
    out = {}
    for i, name in enumerate(hd.plane_names):
        match = _CORE_PLANE.match(name)
        if match:
            out[i] = int(match.group(1))
    return out


def _line_rows(hd: HostData, planes, names) -> np.ndarray:
    """Rows of the events on lines called one of ``names`` of the planes ``planes``."""
    sp = hd.space
    ok = np.isin(sp.line_plane, list(planes)) & np.isin(
        np.asarray(sp.line_names, dtype=object), list(names))
    ok = ok[sp.events.line] if len(ok) else np.zeros(len(hd), bool)
    return np.flatnonzero(ok)


def _metadata_frame(hd: HostData, md_rows: np.ndarray) -> pd.DataFrame:
    """The op stats of event-metadata rows ``md_rows`` (one row each, NaN where absent), with
    ``name`` (the display name, else the name) and ``expression`` (the name)."""
    sp, st = hd.space, hd.space.stats
    frame = pd.DataFrame(index=pd.Index(md_rows, name="md"))
    names = np.asarray(sp.event_metadata_names, dtype=object)[md_rows]
    display = np.asarray(sp.event_metadata_display_names, dtype=object)[md_rows]
    frame["expression"] = names
    frame["name"] = np.where(display != "", display, [hlo_instruction(n) for n in names])
    codes = {st.names.index(n): n for n in _MD_STATS if n in st.names}
    md = st.owned_by(1)  # (the metadata's stats: far fewer than the events')
    sel = md[np.isin(st.owner[md], md_rows) & np.isin(st.name_code[md], list(codes))]
    for code, name in codes.items():
        rows = sel[st.name_code[sel] == code]
        values = pd.Series([stat_value(st, r) for r in rows.tolist()],
                           index=st.owner[rows], dtype=object)
        frame[name] = values[~values.index.duplicated(keep="last")].reindex(frame.index)
    for name in _MD_STATS:
        if name not in frame:
            frame[name] = pd.Series(None, index=frame.index, dtype=object)
    return frame


def _device_times(hd: HostData, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(begin, duration) in ps of event ``rows`` on the device's clock: the events'
    ``device_offset_ps``/``device_duration_ps`` where both are present, else their times."""
    off, has_off = hd.int_stat("device_offset_ps").lookup(rows)
    dur, has_dur = hd.int_stat("device_duration_ps").lookup(rows)
    both = has_off & has_dur
    return (np.where(both, off, hd.begin[rows]).astype(np.int64),
            np.where(both, dur, hd.duration[rows]).astype(np.int64))


def op_events(hd: HostData) -> pd.DataFrame:
    """One row per event on the TensorCores' op lines: ``row``, ``plane``, ``line``, ``xla``
    (on an XLA Ops line), ``begin_ps``/``end_ps`` (event time, host clock),
    ``dev_begin``/``dev_ps`` (device time), ``self_ps``, ``md`` (metadata row) and
    ``occurrences``."""
    planes = tensor_core_planes(hd)
    rows = _line_rows(hd, planes, TPU_OP_LINES)
    line = hd.line[rows].astype(np.int32)
    dev_begin, dev_ps = _device_times(hd, rows)
    order = nesting_order(line, dev_begin, dev_ps)
    empty = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64))
    parent = nest_strict(order, len(rows), (line, dev_begin, dev_ps), empty)
    child = np.bincount(parent[parent >= 0], weights=dev_ps[parent >= 0],
                        minlength=len(rows)).astype(np.int64)
    occ = np.maximum(hd.space.events.num_occurrences[rows], 1)
    line_names = np.asarray(hd.space.line_names, dtype=object)
    return pd.DataFrame({
        "row": rows, "plane": hd.space.line_plane[hd.space.events.line[rows]],
        "line": line, "xla": line_names[hd.space.events.line[rows]] == XLA_OPS_LINE,
        "begin_ps": hd.begin[rows], "end_ps": hd.end_of(rows),
        "dev_begin": dev_begin, "dev_ps": dev_ps, "self_ps": dev_ps - child,
        "md": hd.space.events.metadata_row[rows].astype(np.int64), "occurrences": occ})


def categorized_ops(hd: HostData) -> pd.DataFrame:
    """The TensorCores' op events that name a program and symbol: ``plane``, ``begin_ps``
    (event time), ``dev_begin``/``dev_end`` and ``self_ps`` (device time) and ``category``
    (their ``hlo_category``)."""
    events = op_events(hd)
    keyed, md = _keyed(hd, events)
    category = md.hlo_category.reindex(keyed.md.to_numpy()).fillna("").to_numpy(object)
    return pd.DataFrame({"plane": keyed.plane.to_numpy(), "begin_ps": keyed.begin_ps.to_numpy(),
                         "dev_begin": keyed.dev_begin.to_numpy(),
                         "dev_end": (keyed.dev_begin + keyed.dev_ps).to_numpy(),
                         "self_ps": keyed.self_ps.to_numpy(), "category": category})


def _keyed(hd: HostData, events: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the events whose metadata names a program and a symbol (symbol 0 is the program's
    root), the metadata frame of their ops)."""
    md = _metadata_frame(hd, np.unique(events.md[events.md >= 0].to_numpy()))
    ok = md.program_id.notna() & md.symbol_id.notna() & (md.symbol_id.fillna(0) != 0)
    keyed = events[events.md.isin(md.index[ok])]
    return keyed, md[ok]


def op_executions(hd: HostData) -> pd.DataFrame:
    """One row per execution of an XLA op on the TensorCores' XLA Ops lines that names a
    program and symbol: ``plane``, ``begin_ps``/``end_ps`` (event time, host clock), ``op``
    and ``module`` (as ``hlo_stats`` names them)."""
    events = op_events(hd)
    keyed, md = _keyed(hd, events[events.xla])
    runs = module_runs(hd)
    modules = dict(zip(runs.program_id.dropna(), runs.module[runs.program_id.notna()]))
    md = md.reindex(keyed.md.to_numpy())
    pid = [int(p) & _U64 for p in md.program_id]
    return pd.DataFrame({"plane": keyed.plane.to_numpy(), "begin_ps": keyed.begin_ps.to_numpy(),
                         "end_ps": keyed.end_ps.to_numpy(), "op": md.name.to_numpy(object),
                         "module": [modules.get(p, "") for p in pid]})


def _event_stats(hd: HostData, rows: np.ndarray, names) -> dict[str, np.ndarray]:
    """Integer event stats ``names`` of event ``rows`` (0 where absent)."""
    return {n: hd.int_stat(n).lookup(rows)[0].astype(float) for n in names}


def _num(frame: pd.DataFrame, column: str) -> np.ndarray:
    return pd.to_numeric(frame[column], errors="coerce").fillna(0).to_numpy(float)


def _breakdowns(md: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Per metadata row: bytes per memory space (MEMORY_COLUMNS, NaN without a breakdown)."""
    out = pd.DataFrame(np.nan, index=md.index, columns=MEMORY_COLUMNS)
    bad = []
    for row, data in md.memory_access_breakdown.items():
        if not isinstance(data, bytes) or not data:
            continue
        try:
            parts = memory_access_bytes(data)
        except ProtoWireError as exc:
            bad.append(f"{md.name[row]}: {exc}")
            continue
        if parts:
            out.loc[row] = [float(parts.get(c[:-6], 0)) for c in MEMORY_COLUMNS]
    return out, bad


def _contributions(hd: HostData, events: pd.DataFrame, md: pd.DataFrame) -> pd.DataFrame:
    """Per keyed event: its op key and its FLOPs, model FLOPs, bytes and memory bytes."""
    info = md.reindex(events.md.to_numpy())
    occ = events.occurrences.to_numpy(float)
    custom = (info.hlo_category == _CUSTOM_CALL).to_numpy()
    ev = _event_stats(hd, events.row.to_numpy(), ("flops", "model_flops", "bytes_accessed"))
    out = pd.DataFrame({"key": info.key.to_numpy(), "occurrences": events.occurrences.to_numpy(),
                        "time_ps": events.dev_ps.to_numpy(),
                        "self_ps": events.self_ps.to_numpy(), "custom": custom})
    for col, stat in (("flops", "flops"), ("model", "model_flops"),
                      ("bytes", "bytes_accessed")):
        per = _num(info, stat)
        out[col] = np.where(custom, per + ev[stat], per * occ)
    mem = info[MEMORY_COLUMNS].to_numpy(float)
    for i, col in enumerate(MEMORY_COLUMNS):
        out[col] = mem[:, i] * occ
    out["model_md"] = _num(info, "model_flops")
    return out


def _aggregate(contrib: pd.DataFrame, md: pd.DataFrame, modules: dict) -> pd.DataFrame:
    """One row per op (program, symbol) in the OP_COLUMNS layout, costs per execution."""
    sums = contrib.groupby("key", sort=True).agg(
        occurrences=("occurrences", "sum"), time_ps=("time_ps", "sum"),
        self_ps=("self_ps", "sum"), flops=("flops", "sum"), model=("model", "sum"),
        bytes=("bytes", "sum"), custom=("custom", "first"), model_md=("model_md", "first"),
        **{c: (c, lambda s: s.sum(min_count=1)) for c in MEMORY_COLUMNS})
    first = md.drop_duplicates("key").set_index("key").reindex(sums.index)
    occ = sums.occurrences.to_numpy(float)
    model = np.where(sums.custom | (sums.model_md > 0), sums.model, sums.flops)
    file, line = zip(*[_source(s) for s in first.source]) if len(first) else ((), ())
    pid = [int(p) & _U64 for p in first.program_id]  # ids written as int64 wrap around
    out = pd.DataFrame({
        "device_type": "TPU", "program_id": pid, "hlo_op": first.name.to_numpy(object),
        "occurrences": sums.occurrences.to_numpy(np.int64),
        "time_ps": sums.time_ps.to_numpy(np.int64), "self_ps": sums.self_ps.to_numpy(np.int64),
        "event_flops": 0.0, "event_bytes": 0.0,
        "module": [modules.get(p, "") for p in pid],
        "category": first.hlo_category.fillna("").to_numpy(object),
        "expression": first.expression.to_numpy(object),
        "provenance": first.tf_op.fillna("").to_numpy(object),
        "deduplicated_name": first.deduplicated_name.fillna("").to_numpy(object),
        "source_file": list(file), "source_line": list(line),
        "source_stack": first.source_stack.fillna("").to_numpy(object),
        "flops": model / occ, "normalized_flops": sums.flops.to_numpy(float) / occ,
        "bytes_accessed": sums.bytes.to_numpy(float) / occ, "resolved": True})
    for c in MEMORY_COLUMNS:
        out[c] = sums[c].to_numpy(float) / occ
    return out


def _source(value) -> tuple[str, int]:
    """(file, line) of a ``source`` stat ``file:line`` ("", -1 when it is not that)."""
    if not isinstance(value, str) or ":" not in value:
        return "", -1
    file, line = value.split(":", 1)
    return (file, int(line)) if line.lstrip("-").isdigit() else ("", -1)


def module_runs(hd: HostData) -> pd.DataFrame:
    """One row per program execution on the TensorCores' ``XLA Modules`` lines: ``plane``,
    ``program_id`` (None when the name carries none), ``module`` (name without the id),
    ``run_id`` (-1 when absent), ``begin_ps``, ``end_ps`` (event time, host clock)."""
    rows = _line_rows(hd, tensor_core_planes(hd), (XLA_MODULES_LINE,))
    names = hd.name_of(rows)
    parsed = [_PROGRAM_IN_NAME.match(str(n)) for n in names]
    run, has_run = hd.int_stat("run_id").lookup(rows)
    return pd.DataFrame({
        "plane": hd.space.line_plane[hd.space.events.line[rows]],
        "program_id": pd.Series([int(m.group(2)) if m else None for m in parsed],
                                dtype=object),
        "module": [m.group(1) if m else str(n) for m, n in zip(parsed, names)],
        "name": names, "run_id": np.where(has_run, run, -1),
        "begin_ps": hd.begin[rows], "end_ps": hd.end_of(rows)})


def _plane_totals(hd: HostData, events: pd.DataFrame, keyed: pd.DataFrame,
                  planes: dict) -> pd.DataFrame:
    """Per TensorCore plane: span of its ops and steps on the device clock, and op time."""
    steps = _line_rows(hd, planes, (STEPS_LINE,))
    s_begin, s_dur = _device_times(hd, steps)
    spans = pd.DataFrame({
        "plane": np.concatenate([events.plane.to_numpy(),
                                 hd.space.line_plane[hd.space.events.line[steps]]]),
        "b": np.concatenate([events.dev_begin.to_numpy(), s_begin]),
        "e": np.concatenate([(events.dev_begin + events.dev_ps).to_numpy(), s_begin + s_dur])})
    span = spans.groupby("plane").agg(b=("b", "min"), e=("e", "max"))
    op = keyed.groupby("plane").self_ps.sum()
    return pd.DataFrame([{"device_type": "TPU", "plane": hd.plane_names[p],
                          "span_ps": int(span.e.get(p, 0) - span.b.get(p, 0)),
                          "op_ps": int(op.get(p, 0))} for p in planes],
                        columns=["device_type", "plane", "span_ps", "op_ps"])


def _line_reasons(hd: HostData, planes: dict) -> list[str]:
    """What the TPU planes hold that the op tables do not read: trace-only lines, lines of
    unknown names and SparseCore planes, with their event counts."""
    sp = hd.space
    counts = np.bincount(sp.events.line, minlength=len(sp.line_names))
    frame = pd.DataFrame({"plane": sp.line_plane, "line": sp.line_names, "n": counts})
    plane_names = pd.Series(hd.plane_names, dtype=object)
    on_tpu = plane_names.str.startswith(TPU_PLANE_PREFIX).to_numpy()[frame.plane]
    frame = frame[on_tpu & (frame.n > 0)]
    used = TPU_OP_LINES + (XLA_MODULES_LINE, STEPS_LINE)
    core = frame.plane.isin(list(planes))
    out = []
    trace = frame[core & frame.line.isin(TPU_TRACE_ONLY_LINES)].groupby("line").n.sum()
    if len(trace):
        out.append("TPU lines shown in the trace only (not device ops): " + ", ".join(
            f"{n:,} events on '{line}'" for line, n in trace.items()))
    unknown = frame[core & ~frame.line.isin(used + TPU_TRACE_ONLY_LINES)]
    for line, n in unknown.groupby("line").n.sum().items():
        out.append(f"{n:,} events on TPU line '{line}' are not analysed (a line tfprof_nb "
                   "does not know)")
    other = frame[~core].groupby("plane").n.sum()
    for plane, n in other.items():
        out.append(f"{hd.plane_names[plane]}: {n:,} events not analysed (SparseCore and other "
                   "non-TensorCore TPU planes are not supported)")
    return out


def _unkeyed_reason(events: pd.DataFrame, keyed: pd.DataFrame) -> list[str]:
    """Events on XLA Ops lines left out (the derived Framework Ops never name a program)."""
    n = int(events.xla.sum() - keyed.xla.sum())
    if not n:
        return []
    return [f"{n:,} events on TPU op lines name no program and symbol in their metadata: "
            "left out of the op tables, their time counts as idle (as in XProf)"]


def host_tpu(hd: HostData, shift_ps: int = 0) -> dict:
    """One host's TensorCores: ``ops`` (OP_COLUMNS + MEMORY_COLUMNS), ``totals`` (per plane),
    ``modules`` (program executions, times relative to the host's origin, as the steps need
    them), ``cores``
    (TensorCore count), ``counters`` (the host plane's utilisation counters) and
    ``reasons``.  A host without TPU planes costs next to nothing."""
    planes = tensor_core_planes(hd)
    counters = _counters(hd)
    if not any(n.startswith(TPU_PLANE_PREFIX) for n in hd.plane_names):
        return {"ops": None, "totals": None, "modules": None, "cores": 0,
                "counters": counters, "reasons": []}
    events = op_events(hd)
    keyed, md = _keyed(hd, events)
    md = md.assign(key=md.program_id.astype(str) + ":" + md.symbol_id.astype(str))
    runs = module_runs(hd)
    names = dict(zip(runs.program_id.dropna(), runs.module[runs.program_id.notna()]))
    breakdown, bad = _breakdowns(md)
    md = md.join(breakdown)
    ops = _aggregate(_contributions(hd, keyed, md), md, names) if len(keyed) else None
    reasons = _line_reasons(hd, planes) + _unkeyed_reason(events, keyed)
    reasons += [f"memory access breakdown not readable: {b}" for b in bad[:5]]
    return {"ops": ops, "totals": _plane_totals(hd, events, keyed, planes),
            "modules": runs, "cores": len(planes), "counters": counters, "reasons": reasons}


def _counters(hd: HostData) -> dict:
    """The host plane's hardware counters (MXU and HBM utilisation, percent), when present."""
    plane = hd.space.plane_index(HOST_PLANE)
    stats = hd.space.plane_stats(plane) if plane is not None else {}
    return {k: float(stats[s]) for k, s in (("mxu_utilization_pct",
                                             "matrix_unit_utilization_percent"),
                                            ("hbm_utilization_pct", "hbm_utilization_percent"))
            if isinstance(stats.get(s), (int, float))}


@dataclass
class TpuData:
    """The TPU side of a profile, all hosts: TensorCore count, the host planes' hardware
    counters and reasons (the duty cycle is :mod:`..gpu.duty_cycle`'s)."""

    cores: int = 0
    counters: dict = field(default_factory=dict)
    reasons: list = field(default_factory=list)


def combine_tpu(parts: dict) -> TpuData:
    """The hosts' TPU partials combined (counters: the mean over hosts that have them)."""
    data = TpuData()
    counters: dict = {}
    for part in parts.values():
        data.cores += part["cores"]
        for k, v in part["counters"].items():
            counters.setdefault(k, []).append(v)
        data.reasons += [r for r in part["reasons"] if r not in data.reasons]
    data.counters = {k: float(np.mean(v)) for k, v in counters.items()}
    return data


ANALYSES = (Analysis("tpu", host=host_tpu, combine=combine_tpu, host_cost=0.1),)
