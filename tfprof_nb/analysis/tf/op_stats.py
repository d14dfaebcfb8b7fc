"""TensorFlow stats: time and self time per op on the host and on devices.

Host ops are the events named ``name:Type`` (and tf.data ``Iterator::...`` calls, type
``Dataset``) plus events carrying a ``tf_op`` stat; self time is nested by time on each thread.
Device ops are the GPU kernels of each TensorFlow op (via their ``tf_op`` stat).  Each side has
an ``IDLE`` row: the time its threads or streams were not running an op.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..._native.kernels import (argsort, code_gather, code_lookup, op_stack_walk,
                                op_walk_rows, take_rows)
from ...constants import GPU_PLANE_PREFIX
from ..runtime.hostdata.host import HOST_PLANE, HostData
from ..runtime.unit import Analysis
from ..trace.tf_ops import TF, UNKNOWN, parse_tf_op
from ..xla.hlo_stats import framework_metrics, on_xla_cpu, op_totals
from .op_rooflines import ROOFLINE_COLUMNS, with_rooflines

__all__ = ["ANALYSES", "OP_STATS_COLUMNS", "op_stats_table", "top_op", "host_op_partial",
           "device_op_partial", "combine_metrics", "combine_device_metrics",
           "typed_by_hlo"]

OP_STATS_COLUMNS = ["rank", "host_or_device", "type", "operation", "occurrences",
                    "total_time_us", "avg_time_us", "total_self_time_us", "avg_self_time_us",
                    "self_time_pct", "cumulative_self_time_pct", "eager",
                    *ROOFLINE_COLUMNS]
IDLE = "IDLE"


def _parse_table(names) -> pd.DataFrame:
    """parse_tf_op of each distinct name (the index)."""
    uniq = pd.unique(pd.Series(names, dtype=object))
    return pd.DataFrame([parse_tf_op(n) for n in uniq], index=pd.Index(uniq, dtype=object),
                        columns=["category", "op", "type"])


def host_op_partial(hd: HostData, shift_ps: int = 0) -> tuple[pd.DataFrame, int, int]:
    """Per-op metrics of one host's CPU plane: (table, total_time_ps, total_op_time_ps)."""
    host_lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy()) & ~hd.derived_lines()
    if not (host_lines & (hd.line_counts > 0)).any():
        return _empty_metrics(), 0, 0
    by_name = _parse_table(hd.names)  # one row per distinct event name, in code order
    name_is_op = by_name["category"].to_numpy() != UNKNOWN
    name_is_tf = by_name["category"].to_numpy() == TF
    rows0 = hd.rows_on_lines(host_lines, name_is_op)
    code0 = take_rows(hd.name_code, rows0)
    tf_op = hd.str_stat("tf_op")
    nonempty = np.array([bool(v) for v in tf_op.table], dtype=bool)  # per distinct value
    keep = host_lines[hd.space.events.line[tf_op.rows]] & nonempty[tf_op.values] \
        if len(tf_op) else np.zeros(0, bool)
    rows2, code2 = tf_op.rows[keep], tf_op.values[keep]
    if not len(rows0) and not len(rows2):
        return _empty_metrics(), 0, 0
    p = _parse_table(tf_op.table)  # per distinct tf_op value
    op2 = np.where(p["category"].to_numpy() == UNKNOWN, p.index.to_numpy(dtype=object),
                   p["op"].to_numpy())
    # op and type codes: distinct op names of both kinds of instances, factorised once
    ops, op_of_name = _codes(by_name["op"].to_numpy(dtype=object), op2)
    types, type_of_name = _codes(by_name["type"].to_numpy(dtype=object),
                                 p["type"].to_numpy(dtype=object), empty_is_none=True)
    # instances in (row, name instance before tf_op instance) order: a stable merge
    rows = np.concatenate([rows0, rows2]) if len(rows2) else rows0  # (no copy of most rows)
    del rows0
    key = _gathered(op_of_name, code0, code2)
    typ = _gathered(type_of_name, code0, code2)
    is_tf = np.zeros(len(rows), bool)
    is_tf[:len(code0)] = code_lookup(code0, name_is_tf)
    del code0
    if len(rows2):
        order = argsort(rows)  # stable, int32
        rows, key, typ, is_tf = rows[order], key[order], typ[order], is_tf[order]
        del order
    occ, time_ps, self_ps, first_type, line_op, line_first, line_last = _walk(
        hd, rows, key, typ, len(ops))
    del typ  # (the eager flags' walk below needs memory of its own)
    used = line_first != np.iinfo(np.int64).min
    total_op = int(line_op[used].sum())
    total = int(np.maximum(line_op[used], line_last[used] - line_first[used]).sum())
    eager = _eager_flags(hd, rows, is_tf)
    eager_by_op = np.bincount(key[eager], minlength=len(ops)) > 0
    table = pd.DataFrame({
        "operation": ops, "type": [types[t] if t >= 0 else "" for t in first_type],
        "occurrences": occ, "time_ps": time_ps, "self_ps": self_ps, "eager": eager_by_op})
    return table[occ > 0].reset_index(drop=True), total, total_op


def _gathered(tables: list, code0: np.ndarray, code2: np.ndarray) -> np.ndarray:
    """int32 tables[0][code0] then tables[1][code2] (int32 from the start: the instances are
    most of a host's events; every code is inside its table)."""
    out = np.empty(len(code0) + len(code2), np.int32)
    code_gather(code0, tables[0], out=out[:len(code0)])
    code_gather(code2, tables[1], out=out[len(code0):])
    return out


def _walk(hd: HostData, rows, key, typ, n_ops: int):
    """The op stack walk of the instances at ``rows``: straight from the rows when they are
    in (line, begin) order (file order usually is), else over their sorted activities."""
    out = op_walk_rows(rows, hd.line, hd.begin, hd.duration, key, typ, n_ops, hd.n_lines)
    if out is not None:
        return out
    line = hd.line[rows]
    begin, end = hd.begin[rows], hd.end_of(rows)
    m = len(rows)
    act_line = np.repeat(line, 2)
    act_ts = np.empty(2 * m, np.int64)
    act_ts[0::2], act_ts[1::2] = begin, end
    act = argsort(act_line, act_ts)
    del act_line, act_ts
    return op_stack_walk(act, line, begin, end, key, typ, n_ops, hd.n_lines)


def _codes(*tables, empty_is_none: bool = False):
    """(distinct values of several code tables, per table the int64 code of each entry);
    with ``empty_is_none`` the value "" gets code -1."""
    merged: dict = {}
    maps = []
    for table in tables:
        codes = np.empty(len(table), np.int64)
        for i, v in enumerate(table):
            codes[i] = -1 if (empty_is_none and v == "") else merged.setdefault(v, len(merged))
        maps.append(codes)
    return np.asarray(list(merged), dtype=object), maps


def _eager_flags(hd: HostData, rows: np.ndarray, tf_op: np.ndarray) -> np.ndarray:
    """An op ran eagerly when its event says so (``is_eager``) or, for ``name:Type`` op events,
    when its nearest enclosing ``EagerExecute`` on the same thread (within 64 levels) has
    ``is_func == 0``."""
    is_eager = hd.int_stat("is_eager")
    flags = np.zeros(len(rows), bool)
    if len(is_eager):
        value, present = is_eager.lookup(rows)
        flags = present & (value != 0)
        del value, present
    eager_exec = hd.name_table(lambda s: (s == "EagerExecute").to_numpy())
    if not (hd.name_counts[eager_exec] > 0).any() or not tf_op.any():
        return flags
    # (only the EagerExecute events' is_func is read: the walk stops at them; a few rows
    # sought in the stats, not a pass over every stat)
    calls = hd.name_rows(lambda s: (s == "EagerExecute").to_numpy())
    value, present = hd.stats_at({"is_func": ("is_func", calls)})["is_func"]
    eager_call = np.zeros(len(hd), dtype=bool)
    eager_call[calls[present & (value == 0)]] = True
    # one nesting walk answers at the climbing rows (increasing): no parent per event
    flags[tf_op] |= hd.nesting_parent_at(rows[tf_op], eager_exec, eager_call, levels=64,
                                         parents=False)[1]
    return flags


def device_op_partial(hd: HostData, shift_ps: int = 0) -> tuple[pd.DataFrame, int, int]:
    """Per-op metrics of one host's GPU planes: (table, total_time_ps, total_op_time_ps)."""
    dev = hd.plane_mask(lambda s: s.str.startswith(GPU_PLANE_PREFIX).to_numpy()) & \
        ~hd.derived_line_mask()
    if not dev.any():
        return _empty_metrics(), 0, 0
    rows = np.flatnonzero(dev)
    spans = pd.DataFrame({"plane": hd.space.line_plane[hd.space.events.line[rows]],
                          "b": hd.begin[rows], "e": hd.end_of(rows)}).groupby("plane") \
        .agg(b=("b", "min"), e=("e", "max"))
    total = int((spans.e - spans.b).sum())
    tf_op = hd.str_stat("tf_op")
    nonempty = np.array([bool(v) for v in tf_op.table], dtype=bool)
    codes, has = tf_op.lookup(rows)
    has &= nonempty[codes] if len(nonempty) else False
    hlo = hd.str_stat("hlo_op")
    if len(hlo):  # XLA ops are counted by their HLO op (analysis.xla.ops), not here
        has &= ~hlo.lookup(rows)[1]
    if not has.any():
        return _empty_metrics(), total, 0
    rows, codes = rows[has], codes[has]
    p = _parse_table(tf_op.table)
    kernels = pd.DataFrame({"op": p["op"].to_numpy(dtype=object)[codes],
                            "type": p["type"].replace("", "unknown").to_numpy(dtype=object)[codes],
                            "kernel": hd.name_code[rows], "dur": hd.duration[rows]})
    per_kernel = kernels.groupby(["op", "kernel"], sort=False).agg(
        type=("type", "first"), n=("dur", "size"), t=("dur", "sum"))
    per_op = per_kernel.groupby(level="op", sort=False).agg(
        type=("type", "first"), occurrences=("n", "max"), time_ps=("t", "sum"))
    table = pd.DataFrame({"operation": per_op.index.to_numpy(dtype=object),
                          "type": per_op["type"].to_numpy(),
                          "occurrences": per_op["occurrences"].to_numpy(),
                          "time_ps": per_op["time_ps"].to_numpy(),
                          "self_ps": per_op["time_ps"].to_numpy(), "eager": False})
    return table, total, int(table.self_ps.sum())


def _empty_metrics() -> pd.DataFrame:  # (numpy arrays: 8x faster than empty Series)
    return pd.DataFrame({"operation": np.empty(0, object), "type": np.empty(0, object),
                         "occurrences": np.empty(0, np.int64), "time_ps": np.empty(0, np.int64),
                         "self_ps": np.empty(0, np.int64), "eager": np.empty(0, bool)})


def combine_metrics(parts: dict) -> tuple[pd.DataFrame, int, int]:
    """Per-op metrics of several hosts summed: (table, total_time_ps, total_op_time_ps)."""
    parts = list(parts.values())
    tables = [t for t, _, _ in parts if not t.empty]
    total = sum(t for _, t, _ in parts)
    total_op = sum(o for _, _, o in parts)
    if not tables:
        return _empty_metrics(), total, total_op
    merged = pd.concat(tables, ignore_index=True)
    merged["type"] = merged["type"].where(merged["type"] != "", None)
    table = merged.groupby("operation", sort=False).agg(
        type=("type", "first"), occurrences=("occurrences", "sum"), time_ps=("time_ps", "sum"),
        self_ps=("self_ps", "sum"), eager=("eager", "any")).reset_index()
    table["type"] = table["type"].fillna("")
    return table, total, total_op


def combine_device_metrics(parts: dict, xla) -> tuple[pd.DataFrame, int, int]:
    """Device metrics of several hosts with the XLA ops added, rolled up into framework ops
    (GPU kernels' time is already in the GPU planes' total; TPU planes and XLA:CPU thunks
    add their own spans)."""
    table, total, total_op = combine_metrics(parts)
    if xla.ops.empty:
        return table, total, total_op
    xla_table = framework_metrics(xla)
    other_total = sum(op_totals(xla, kind)[0] for kind in ("CPU", "TPU"))
    total_op += int(xla_table.self_ps.sum())
    total = max(total + other_total, total_op)
    merged = pd.concat([t for t in (table, xla_table) if not t.empty], ignore_index=True)
    return merged, total, total_op


def _ranked(table: pd.DataFrame, denominator) -> tuple[pd.DataFrame, pd.Series]:
    """A side's ops by self time (ties by name), and each one's share of ``denominator``
    (%; 0 where it is 0)."""
    table = table.sort_values(["self_ps", "operation"], ascending=[False, True], kind="stable")
    return table, table.self_ps / denominator * 100 if denominator else table.self_ps * 0.0


def top_op(device_ops: tuple, host_ops: tuple) -> tuple[str, float]:
    """The first row of ``op_stats_table(device_ops, host_ops, include_idle=False)`` (the
    device side's op with the most self time where there are device ops, else the host's)
    and its share of its side's op time (%), without building the table; ``("", nan)``
    without ops."""
    for table, _, total_op in (device_ops, host_ops):
        if not table.empty:
            ranked, pct = _ranked(table, total_op)
            return str(ranked.operation.iloc[0]), float(pct.iloc[0])
    return "", float("nan")


def op_stats_table(device_ops: tuple, host_ops: tuple, include_idle: bool = True,
                   rooflines: tuple | None = None) -> pd.DataFrame:
    """The TensorFlow stats table from the device and host metrics ((table, total_ps,
    total_op_ps) each): one row per (side, op), device rows first (XProf's order; where the
    device side is XLA:CPU's ops, which XProf does not list, host rows first, so that their
    ranks are XProf's), each side sorted by self time.  Percentages are of the side's total
    time, with or without its idle time.  ``rooflines``: (hlo_stats, kernel_stats, device
    peaks) for the roofline columns (:mod:`.op_rooflines`; empty without)."""
    out = []
    sides = (("Device", device_ops), ("Host", host_ops))
    if rooflines is not None and on_xla_cpu(rooflines[0]):
        sides = sides[::-1]
    for side, (table, total, total_op) in sides:
        if table.empty and total == 0:
            continue
        if include_idle:
            idle = total - total_op
            table = pd.concat([table, pd.DataFrame({
                "operation": [IDLE], "type": [IDLE], "occurrences": [0], "time_ps": [idle],
                "self_ps": [idle], "eager": [False]})], ignore_index=True)
        table, pct = _ranked(table, total if include_idle else total_op)
        occ = table.occurrences.replace(0, np.nan)
        out.append(pd.DataFrame({
            "host_or_device": side, "type": table["type"].to_numpy(),
            "operation": table["operation"].to_numpy(),
            "occurrences": table.occurrences.to_numpy(np.int64),
            "total_time_us": table.time_ps.to_numpy() / 1e6,
            "avg_time_us": (table.time_ps / occ / 1e6).fillna(0.0).to_numpy(),
            "total_self_time_us": table.self_ps.to_numpy() / 1e6,
            "avg_self_time_us": (table.self_ps / occ / 1e6).fillna(0.0).to_numpy(),
            "self_time_pct": pct.to_numpy(),
            "cumulative_self_time_pct": pct.cumsum().to_numpy(),
            "eager": np.where(table.eager.to_numpy(), "Eager", "Function")}))
    if not out:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in OP_STATS_COLUMNS})
    result = pd.concat(out, ignore_index=True)
    result.insert(0, "rank", np.arange(1, len(result) + 1))
    if rooflines is not None:
        result = with_rooflines(result, *rooflines)
    return result.reindex(columns=OP_STATS_COLUMNS)


_OPCODE = re.compile(r" = (?:\([^)]*\)|\S+) ([\w-]+)\(")
COMMAND_BUFFER = "XLA command buffer"  # the type of a command buffer's row (no HLO op)


def _hlo_types(hlo: pd.DataFrame) -> pd.Series:
    """{HLO op name: its category, else the opcode of its expression} (first program's)."""
    first = hlo.drop_duplicates("hlo_op_name")
    category = first.category.fillna("").astype(str)
    opcode = first.hlo_op_expression.fillna("").astype(str).str.extract(_OPCODE)[0].fillna("")
    return pd.Series(np.where(category != "", category, opcode),
                     index=first.hlo_op_name.astype(str).to_numpy())


def typed_by_hlo(ops: pd.DataFrame, hlo: pd.DataFrame) -> pd.DataFrame:
    """``ops`` (an op stats table) with the device rows XProf types "Unknown" (HLO ops with
    no framework op: ``copy-done``, ...) typed by the HLO the profile has: the op's category
    (its opcode where it has none), "XLA command buffer" for a command buffer's row, else
    left empty.  A copy; the numbers stay XProf's."""
    unknown = ((ops.host_or_device == "Device") & (ops["type"] == "Unknown")).to_numpy()
    if not unknown.any():
        return ops
    names = ops.operation[unknown].astype(str)
    types = names.map(_hlo_types(hlo)) if len(hlo) else pd.Series("", index=names.index)
    types = types.where(types.notna() & (types != ""), "")
    types[names.str.startswith("command_buffer") & (types == "")] = COMMAND_BUFFER
    out = ops.copy()
    out.loc[unknown, "type"] = types.to_numpy(dtype=object)
    return out


def _op_stats(parts: dict, device_ops: tuple, host_ops: tuple, hlo_stats: pd.DataFrame,
              kernel_stats: pd.DataFrame, device_peaks) -> pd.DataFrame:
    return op_stats_table(device_ops, host_ops, include_idle=True,
                          rooflines=(hlo_stats, kernel_stats, device_peaks))


def _busy_op_stats(parts: dict, device_ops: tuple, host_ops: tuple, hlo_stats: pd.DataFrame,
                   kernel_stats: pd.DataFrame, device_peaks) -> pd.DataFrame:
    return op_stats_table(device_ops, host_ops, include_idle=False,
                          rooflines=(hlo_stats, kernel_stats, device_peaks))


_NEEDS = ("device_ops", "host_ops", "hlo_stats", "kernel_stats", "device_peaks")


ANALYSES = (
    Analysis("host_ops", host=host_op_partial, combine=combine_metrics),
    Analysis("device_ops", host=device_op_partial, combine=combine_device_metrics,
             needs=("xla",), host_cost=0.5),
    Analysis("op_stats", combine=_op_stats, needs=_NEEDS),
    Analysis("op_stats_without_idle", combine=_busy_op_stats, needs=_NEEDS),
)
