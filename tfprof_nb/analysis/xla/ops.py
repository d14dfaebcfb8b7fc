"""The per-host step of the XLA analyses: time of every HLO op a host's devices ran.

XLA programs show up in three ways:

* TPU: the ``XLA Ops`` lines of ``/device:TPU:N`` planes, read by :mod:`.tpu` (their
  metadata carries category, framework op, FLOPs and bytes: no HLO proto is needed).
* GPU: kernels on the CUPTI stream lines of ``/device:GPU:N`` carry ``hlo_op`` (its last
  ``::`` part names the instruction), ``hlo_module`` and ``program_id``.  Every kernel event
  is one occurrence (an HLO op that launches two kernels per run counts two, as in XProf);
  self time equals time.  Kernels run inside XLA command buffers (CUDA graphs), whose
  ``hlo_op`` names the buffer, are attributed to their HLO ops by :mod:`.command_buffers`
  (the ``attribution`` column says how: ``stat``, ``name``, ``position``, ``unresolved``).
  Kernels with a ``tf_op`` but no ``hlo_op`` are TensorFlow ops run outside XLA and are kept
  apart (XProf lists them in its HLO stats too, as program 0).
* CPU (XLA:CPU: JAX on CPU, TensorFlow ``jit_compile`` on CPU): the thunks XLA:CPU runs are
  host events on ``/host:CPU`` with the same stats.  A thunk that finishes asynchronously
  (e.g. a dot handed to the Eigen pool) ends with an ``end: <op>`` event, on whatever thread
  completed it, linked to the thunk by its ``_p``/``_c`` context: the op's time runs to that
  event's end.  Thunks nest (a while loop's body runs inside the while thunk), so self time is
  time minus the nested thunks' time.  XProf ignores these events altogether.  On a profile
  with GPU or TPU planes, the host events that launch device work carry the same stats (the
  launch of each thunk): an hlo_op event with a ``correlation_id``, or of a program that ran
  on a device, is a launch, not an XLA:CPU op (it stays host time).

Each op is then resolved against the program's HLO proto (``/host:metadata``): category,
expression, framework op (provenance), source and FLOPs/bytes: on GPU by XLA's GPU cost analysis
as XProf runs it (:mod:`.gpu_cost`), on XLA:CPU by our own model (:mod:`.hlo_cost`).  Ops that
cannot be resolved (no proto, a proto that does not parse, a name the proto lacks) are kept
with those columns empty and a reason.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._words import counted
from ...constants import DEVICE_PLANE_PREFIXES, GPU_PLANE_PREFIX
from ...xspace.hlo_proto import programs_of_space
from ..runtime.hostdata.host import HOST_PLANE, HostData
from ..runtime.unit import Analysis, parts_list
from ..trace.nested_times import self_times, thunk_ends
from ..trace.tf_ops import UNKNOWN, parse_tf_op
from .command_buffers import ATTRIBUTION, STAT, UNRESOLVED, attribute_kernels, buffer_reasons
from .device_peaks import peaks_from_plane_stats
from .fused import fused_children
from .gpu_cost import GpuCostModel
from .hlo_cost import CostModel
from .hlo_text import category, expression
from .tpu import MEMORY_COLUMNS

__all__ = ["ANALYSES", "host_xla_ops", "host_tf_kernels", "OP_COLUMNS", "INFO_COLUMNS",
           "tf_op_fullname", "source_of", "program_id_array"]

INFO_COLUMNS = ["module", "category", "expression", "provenance", "deduplicated_name",
                "source_file", "source_line", "source_stack", "flops", "normalized_flops",
                "bytes_accessed", "resolved"]
OP_COLUMNS = ["device_type", "program_id", "hlo_op", "occurrences", "time_ps", "self_ps",
              "event_flops", "event_bytes"] + INFO_COLUMNS + MEMORY_COLUMNS + ["attribution"]


def tf_op_fullname(metadata) -> str:
    """XLA's framework-op name of an instruction: ``op_name:op_type`` ("" if both empty;
    TensorFlow's ``XLA_Args``/``XLA_Retvals`` are their own type)."""
    op_type, op_name = metadata.op_type, metadata.op_name
    if not op_type:
        if not op_name:
            return ""
        if op_name in ("XLA_Args", "XLA_Retvals"):
            op_type = op_name
    return f"{op_name}:{op_type}"


def source_of(module, instr) -> tuple[str, int, str]:
    """(file, line, stack) of an instruction: its metadata's source file and line, else the
    first ``file:line:col`` of its stack frames (as XProf reads them)."""
    md = instr.metadata
    stack = module.stack(md.stack_frame_id) if md.stack_frame_id else ""
    if md.source_file:
        return md.source_file, int(md.source_line), stack
    if stack:
        parts = stack.split("\n", 1)[0].split(":")
        if len(parts) >= 2:
            line = int(parts[1]) if parts[1].lstrip("-").isdigit() else -1
            return parts[0], line, stack
    return "", -1, stack


def _empty_ops() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in OP_COLUMNS})


def _op_names(table) -> np.ndarray:
    """The instruction name of each distinct ``hlo_op`` value (its last ``::`` part)."""
    return np.array([str(v).split("::")[-1] for v in table], dtype=object)


def _name_ids(codes: np.ndarray, hlo) -> tuple[np.ndarray, np.ndarray]:
    """(name id per row, names) of rows whose ``hlo_op`` values are ``codes``."""
    name_id, names = pd.factorize(pd.Series(_op_names(hlo.table), dtype=object))
    return name_id[codes], np.asarray(names, dtype=object)


def _last_per_key(keys: np.ndarray, values: np.ndarray, present: np.ndarray) -> pd.Series:
    """The last present value of each key (events in row order)."""
    if not present.any():
        return pd.Series(dtype=np.int64)
    frame = pd.DataFrame({"k": keys[present], "v": values[present]})
    return frame.groupby("k", sort=False)["v"].last()


def _first_seen_keys(pids: np.ndarray, name_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(key per row, first row of each key) of the (program, name) pairs, keys numbered in
    the order their first row comes (pandas' ``ngroup`` with ``sort=False``)."""
    pairs = np.stack([pids.astype(np.int64), name_id.astype(np.int64)], axis=1)
    _, first, inverse = np.unique(pairs, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank[inverse.ravel()], first[order]


def _aggregate(hd: HostData, rows, ops: tuple, pids, time_ps, self_ps, device_type,
               how: np.ndarray | None = None) -> pd.DataFrame:
    """Occurrences, time and self time per (program, op name) of event ``rows`` (``ops``:
    (name id per row, names)); the last ``flops``/``bytes_accessed`` stats seen; the weakest
    attribution of the op's events (``how``: codes per row, ``stat`` when None)."""
    name_id, names = ops
    fl, fl_has = hd.int_stat("flops").lookup(rows)
    by, by_has = hd.int_stat("bytes_accessed").lookup(rows)
    pids, name_id = np.asarray(pids), np.asarray(name_id)
    keys, first = _first_seen_keys(pids, name_id)
    by_key = np.argsort(keys, kind="stable")
    starts = np.searchsorted(keys[by_key], np.arange(len(first)))
    how = np.full(len(keys), STAT) if how is None else np.asarray(how)

    def per_key(values, reduce):
        return reduce.reduceat(np.asarray(values)[by_key], starts)
    out = pd.DataFrame({"program_id": pids[first],
                        "hlo_op": np.asarray(names, dtype=object)[name_id[first]],
                        "occurrences": np.diff(np.append(starts, len(keys))).astype(np.int64),
                        "time_ps": per_key(time_ps, np.add), "self_ps": per_key(self_ps, np.add),
                        "attribution": np.asarray(ATTRIBUTION, dtype=object)[
                            per_key(how, np.maximum)]},
                       index=pd.RangeIndex(len(first), name="k"))
    out["event_flops"] = _last_per_key(keys, fl, fl_has).reindex(out.index).fillna(0)
    out["event_bytes"] = _last_per_key(keys, by, by_has).reindex(out.index).fillna(0)
    out.insert(0, "device_type", device_type)
    return out.reset_index(drop=True)


def _gpu_rows(hd: HostData) -> np.ndarray:
    """Rows of the events on GPU planes' stream lines (derived lines left out): one pass over
    the lines' rows, none when the host has no such line."""
    lines = hd.plane_lines(lambda s: s.str.startswith(GPU_PLANE_PREFIX).to_numpy()) & \
        ~hd.derived_lines()
    return hd.rows_on_lines(lines)


def host_tf_kernels(hd: HostData, shift_ps: int = 0) -> pd.DataFrame:
    """GPU kernels of TensorFlow ops run outside XLA (a ``tf_op`` but no ``hlo_op`` stat),
    one row per (op, kernel name): hlo_op (``op/kernel``), category (op type), provenance,
    occurrences, time_ps."""
    rows = _gpu_rows(hd)
    hlo = hd.str_stat("hlo_op")
    if len(hlo) and len(rows):
        rows = rows[~hlo.lookup(rows)[1]]
    return _tf_kernels(hd, rows)


def _gpu_ops(hd: HostData, hlo, pid_stat, modules: dict):
    """(ops, per-plane totals, :class:`.command_buffers.Attribution` or None) of the GPU
    planes: kernels inside command buffers attributed to their HLO ops."""
    rows = _gpu_rows(hd)
    if not len(rows):
        return None, [], None
    plane = hd.space.line_plane[hd.space.events.line[rows]]
    codes, has = hlo.lookup(rows)
    xrows = rows[has]
    pid, pid_has = pid_stat.lookup(xrows)
    pids = np.where(pid_has, pid, -1)
    dur = hd.duration[xrows]
    name_id, names = _name_ids(codes[has], hlo)
    att = attribute_kernels(hd, xrows, names[name_id], pids, modules)
    if len(att.rows):
        name_id, names = pd.factorize(pd.Series(att.op, dtype=object))
    ops = _aggregate(hd, xrows, (name_id, np.asarray(names, dtype=object)), pids, dur, dur,
                     "GPU", att.how) if len(xrows) else None
    totals = []
    for p in np.unique(plane).tolist():  # (few planes: one pass over the rows each)
        on = plane == p
        first, last = int(hd.begin[rows[on]].min()), int(hd.end_of(rows[on]).max())
        totals.append({"device_type": "GPU", "plane": hd.plane_names[p],
                       "span_ps": last - first, "op_ps": int(dur[on[has]].sum())})
    return ops, totals, att


def _tf_kernels(hd: HostData, rows: np.ndarray) -> pd.DataFrame:
    """GPU kernels of TensorFlow ops run outside XLA, one row per (op, kernel name)."""
    tf_op = hd.str_stat("tf_op")
    codes, has = tf_op.lookup(rows)
    if not has.any():
        return pd.DataFrame(columns=["hlo_op", "category", "provenance", "occurrences",
                                     "time_ps"])
    rows, codes = rows[has], codes[has]
    parsed = [parse_tf_op(str(v)) for v in tf_op.table]
    op = np.array([p[1] for p in parsed], dtype=object)
    kind = np.array([p[2] if p[0] != UNKNOWN and p[2] else "Unknown" for p in parsed],
                    dtype=object)
    frame = pd.DataFrame({"code": codes, "kernel": hd.name_code[rows],
                          "t": hd.duration[rows]})
    out = frame.groupby(["code", "kernel"]).agg(occurrences=("t", "size"),
                                                time_ps=("t", "sum")).reset_index()
    c = out.code.to_numpy()
    return pd.DataFrame({
        "hlo_op": op[c] + "/" + hd.names[out.kernel.to_numpy()].astype(object),
        "category": kind[c], "provenance": np.asarray(tf_op.table, dtype=object)[c],
        "occurrences": out.occurrences.to_numpy(), "time_ps": out.time_ps.to_numpy()})


def _launches(hd: HostData, rows: np.ndarray, pid_stat, on_device: set) -> np.ndarray:
    """bool per host event ``rows`` with an hlo_op: it launches device work (it has a
    ``correlation_id``, or its program ran on a device), so it is no XLA:CPU thunk."""
    launch = hd.int_stat("correlation_id").lookup(rows)[1]
    if on_device:
        pid, has = pid_stat.lookup(rows)
        known = np.array(sorted(_u64(p) for p in on_device), dtype=np.uint64)
        launch |= has & np.isin(pid.astype(np.int64).view(np.uint64), known)
    return launch


def _u64(value: int) -> int:
    """A program id as the unsigned 64-bit number the profiler wrote (-1: none, kept)."""
    return value & (2**64 - 1) if value < -1 else value


def _cpu_ops(hd: HostData, hlo, pid_stat, on_device: set):
    """(ops, totals, number of launch events left out) of the XLA:CPU thunks on the host
    plane: host events with an hlo_op that launch device work are left out."""
    host = hd.plane_is(HOST_PLANE) & ~hd.derived_line_mask()
    on_host = host[hlo.rows]
    rows = hlo.rows[on_host].astype(np.int64)
    launch = _launches(hd, rows, pid_stat, on_device) if len(rows) else np.zeros(0, bool)
    rows = rows[~launch]
    on_host[np.flatnonzero(on_host)[launch]] = False
    if not len(rows):
        return None, [], int(launch.sum())
    begin, end = hd.begin[rows], thunk_ends(hd, rows)
    total = end - begin
    self_ps = self_times(hd, rows, total)  # (minus the nested thunks)
    pid, pid_has = pid_stat.lookup(rows)
    ops = _aggregate(hd, rows, _name_ids(hlo.values[on_host], hlo),
                     np.where(pid_has, pid, -1), total, self_ps, "CPU")
    totals = [{"device_type": "CPU", "plane": HOST_PLANE,
               "span_ps": int(end.max() - begin.min()), "op_ps": int(self_ps.sum())}]
    return ops, totals, int(launch.sum())


def _op_row(module, instr, model: CostModel | GpuCostModel) -> dict:
    """The instruction columns of op ``instr`` of ``module``."""
    try:  # (an HLO the cost model cannot read leaves this op's costs empty, said)
        cost = model.cost(instr)
        hbm = model.hbm_bytes(instr) if isinstance(model, GpuCostModel) else np.nan
        error = ""
    except Exception as e:  # noqa: BLE001 - any proto content the model trips on
        cost, hbm, error = (None, None, None), np.nan, f"{type(e).__name__}: {e}"
    file, line, stack = source_of(module, instr)
    return dict(module=module.name, category=category(module, instr),
                expression=expression(module, instr), provenance=tf_op_fullname(instr.metadata),
                deduplicated_name=instr.metadata.deduplicated_name, source_file=file,
                source_line=line, source_stack=stack, flops=cost[0], normalized_flops=cost[1],
                bytes_accessed=cost[2], resolved=True, hbm_bytes=hbm, cost_error=error)


def _resolve(ops: pd.DataFrame, modules: dict, module_stat: dict,
             reasons: list) -> pd.DataFrame:
    """``ops`` with the instruction columns filled from the programs' HLO protos (one
    concatenation, not a column at a time: a third of the cost on a monitor's window)."""
    info = {c: [] for c in INFO_COLUMNS}
    hbm: list = []  # (GPU ops: the HBM bytes XProf's cost analysis keeps)
    costless: dict = {}  # {(program, module, error): ops whose costs could not be computed}
    models: dict = {}
    missing: dict = {}
    unplaced = ops.attribution.to_numpy() == ATTRIBUTION[UNRESOLVED]
    for device, pid, name, buffer in zip(ops.device_type, ops.program_id, ops.hlo_op, unplaced):
        module = modules.get(pid)
        instr = module.instructions.get(name) if module is not None else None
        if instr is None or buffer:  # (a buffer's unplaced kernels: said by buffer_reasons)
            if not buffer:
                missing.setdefault(pid, []).append(name)
            row = {c: None for c in INFO_COLUMNS}
            row.update(module=module.name if module is not None else module_stat.get(pid, ""),
                       category="", expression="", provenance="", deduplicated_name="",
                       source_file="", source_line=-1, source_stack="", resolved=False)
        else:
            rows = module.memo.setdefault(("op rows", device), {})  # (the same program's
            row = rows.get(name)  # windows, or analyses, resolve each op once)
            if row is None:  # (a cost model per call: its memo is not for two threads)
                key = (device, pid)
                if key not in models:
                    models[key] = GpuCostModel(module) if device == "GPU" else \
                        CostModel(module)
                row = rows[name] = _op_row(module, instr, models[key])
        for c in INFO_COLUMNS:
            info[c].append(row[c])
        hbm.append(row.get("hbm_bytes", np.nan))
        if row.get("cost_error"):
            costless.setdefault((pid, row["module"], row["cost_error"]), []).append(name)
    filled = pd.DataFrame({c: pd.Series(info[c], index=ops.index, dtype=object if c not in
                                        ("flops", "normalized_flops", "bytes_accessed")
                                        else float) for c in INFO_COLUMNS}, index=ops.index)
    for pid, names in missing.items():
        shown = ", ".join(sorted(names)[:5]) + (" ..." if len(names) > 5 else "")
        if pid < 0:
            one = len(names) == 1
            reasons.append(f"{counted(len(names), 'XLA op')} carr{'ies' if one else 'y'} no "
                           f"program_id ({shown}): {'it' if one else 'they'} cannot be matched "
                           "with an HLO proto")
        elif pid not in modules:
            reasons.append(f"program {pid} ({module_stat.get(pid, '?')}) has no readable HLO "
                           f"proto: category, expression, framework op and FLOPs of its "
                           f"{counted(len(names), 'op')} are unknown")
        else:
            reasons.append(f"{counted(len(names), 'op')} of program {pid} ({modules[pid].name}) "
                           f"{'is' if len(names) == 1 else 'are'} not in its HLO proto: {shown}")
    reasons += _costless_reasons(costless)
    there = [c for c in INFO_COLUMNS if c in ops.columns]
    out = pd.concat([ops.drop(columns=there) if there else ops, filled], axis=1)
    hbm = np.asarray(hbm, dtype=float)
    if "hbm_bytes" in out.columns:
        hbm = np.where(np.isnan(hbm), out.hbm_bytes.to_numpy(dtype=float), hbm)
    out["hbm_bytes"] = hbm
    return out


def _costless_reasons(costless: dict) -> list[str]:
    """What :func:`_resolve` says of the ops whose costs the model could not compute
    (``{(program, module, error): op names}``)."""
    out = []
    for (pid, module_name, error), names in costless.items():
        names = sorted(set(names))
        shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
        out.append(f"the FLOPs and bytes of {counted(len(names), 'op')} of program {pid} "
                   f"({module_name}) could not be computed from its HLO proto ({error}): "
                   f"left empty ({shown})")
    return out


def host_xla_ops(hd: HostData, shift_ps: int = 0, tpu: dict | None = None) -> dict:
    """One host's XLA ops (TPU ops, GPU kernels and XLA:CPU thunks) resolved against its
    HLO protos (TPU ops carry their own metadata): ``ops`` (one row per device type, program
    and HLO op), ``totals`` (per device plane: span and op time, ps), ``peaks`` (per device
    plane), ``programs`` ({program id: name}) and ``reasons``.  ``tpu`` is the host's
    :func:`.tpu.host_tpu` partial.  A host without XLA events costs next to nothing."""
    hlo = hd.str_stat("hlo_op")
    peaks = []
    for i, plane in enumerate(hd.plane_names):
        if plane.startswith(DEVICE_PLANE_PREFIXES):
            p, why = peaks_from_plane_stats(plane, hd.space.plane_stats(i))
            peaks.append((plane, p, why))
    tpu = tpu or {}
    tpu_ops = tpu.get("ops")
    tpu_totals = tpu.get("totals")
    reasons = list(tpu.get("reasons", []))
    if not len(hlo) and tpu_ops is None:
        return {"ops": _empty_ops(), "totals": _totals([]) if tpu_totals is None else
                tpu_totals, "peaks": peaks, "programs": {}, "reasons": reasons}
    modules, program_names, proto_reasons = programs_of_space(hd.space)
    reasons += proto_reasons
    parts, totals, buffers = _device_ops(hd, hlo, modules, tpu_ops, reasons)
    ops = pd.concat(parts, ignore_index=True) if parts else _empty_ops()
    if len(ops):
        if not modules:
            reasons.append("no HLO protos in the profile (no 'Hlo Proto' stats in a "
                           "/host:metadata plane): categories, expressions, framework ops "
                           "and FLOPs of XLA ops are unknown")
        ops = _resolve(ops, modules, _module_names(hd, hlo), reasons)
    fused = fused_children(tpu_ops, modules) if tpu_ops is not None else None
    if tpu_ops is not None:
        reasons += _tpu_proto_reasons(tpu_ops, modules)
    if tpu_ops is not None:
        ops = pd.concat([o for o in (ops.reindex(columns=OP_COLUMNS),
                                     _with_program_ids(tpu_ops.reindex(columns=OP_COLUMNS)))
                         if len(o)], ignore_index=True)
    totals = _totals(totals)
    if tpu_totals is not None:
        totals = pd.concat([t for t in (totals, tpu_totals) if len(t)], ignore_index=True) \
            if len(tpu_totals) else totals
    ops = ops.reindex(columns=OP_COLUMNS)
    how = ops.attribution.astype(object)
    ops["attribution"] = how.where(how.notna(), ATTRIBUTION[STAT])  # (TPU ops: their stats)
    return {"ops": ops, "totals": totals, "fused": fused, "peaks": peaks,
            "programs": dict(program_names), "reasons": reasons, "command_buffers": buffers}


def _device_ops(hd: HostData, hlo, modules: dict, tpu_ops, reasons: list):
    """(op partials, per-plane totals, the kernels run inside command buffers) of the GPU
    kernels and XLA:CPU thunks; ``reasons`` grows.  The kernels inside command buffers:
    ``{"rows": event rows, "op": the op each is attributed to}`` (the kernel table names
    their framework ops from it)."""
    parts, totals = [], []
    buffers = {"rows": np.empty(0, np.int64), "op": np.empty(0, dtype=object)}
    if not len(hlo):
        return parts, totals, buffers
    pid_stat = hd.int_stat("program_id")
    gpu, gpu_totals, att = _gpu_ops(hd, hlo, pid_stat, modules)
    if att is not None and len(att.inside):
        reasons += buffer_reasons(att.buffers, {p: m.name for p, m in modules.items()})
        buffers = {"rows": att.rows[att.inside], "op": att.op[att.inside]}
    on_device = set() if gpu is None else set(gpu.program_id.tolist())
    if tpu_ops is not None:
        on_device |= set(tpu_ops.program_id.tolist())
    cpu, cpu_totals, launches = _cpu_ops(hd, hlo, pid_stat, on_device)
    if launches:
        reasons.append(f"{launches:,} host events carry an hlo_op stat but launch device "
                       "work (a correlation_id, or a program that ran on a device): "
                       "they count as host time, not as XLA:CPU ops")
    for part, tot in ((gpu, gpu_totals), (cpu, cpu_totals)):
        if part is not None and len(part):
            parts.append(_with_program_ids(part))
        totals += tot
    return parts, totals, buffers


def _tpu_proto_reasons(ops: pd.DataFrame, modules: dict) -> list[str]:
    """TPU programs without an HLO proto: their ops' metadata has every column, but the op
    profile cannot list what their fusions fuse."""
    out = []
    for pid in sorted(set(ops.program_id.tolist()) - set(modules)):
        name = ops.module[ops.program_id == pid].iloc[0]
        out.append(f"TPU program {pid} ({name or '?'}) has no readable HLO proto: the op "
                   "profile shows its fusions without their fused instructions")
    return out


def _with_program_ids(ops: pd.DataFrame) -> pd.DataFrame:
    """``ops`` with program ids as Python ints (TPU ids use all 64 bits: no int64 column can
    hold them alongside others; :func:`program_id_array` makes the final column)."""
    ops = ops.copy()
    ops["program_id"] = pd.Series([_u64(int(v)) for v in ops.program_id], index=ops.index,
                                  dtype=object)
    return ops


def program_id_array(values) -> np.ndarray:
    """Program ids as int64 when all fit, else uint64 (TPU ids), else Python ints."""
    values = [int(v) for v in values]
    for dtype in (np.int64, np.uint64):
        try:
            return np.array(values, dtype=dtype)
        except OverflowError:
            continue
    return np.array(values, dtype=object)


def _totals(rows: list) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["device_type", "plane", "span_ps", "op_ps"])


def _module_names(hd: HostData, hlo) -> dict:
    """{program id: the ``hlo_module`` stat of its events} (names programs without protos)."""
    mod = hd.str_stat("hlo_module")
    if not len(mod) or not len(hlo):
        return {}
    pid, has = hd.int_stat("program_id").lookup(mod.rows)
    first = pd.DataFrame({"p": pid[has], "c": mod.values[has]}).drop_duplicates("p")
    return dict(zip(first.p.tolist(), mod.text(first.c.to_numpy()).tolist()))


ANALYSES = (Analysis("xla_ops", host=host_xla_ops, combine=parts_list, host_needs=("tpu",)),
            Analysis("tf_kernels", host=host_tf_kernels, combine=parts_list, host_cost=0.3))
