"""TensorFlow stats: time and self time per op on the host and on devices.

Host ops are the events named ``name:Type`` (and tf.data ``Iterator::...`` calls, type
``Dataset``) plus events carrying a ``tf_op`` stat; self time is nested by time on each thread.
Device ops are the GPU kernels of each TensorFlow op (via their ``tf_op`` stat).  Each side has
an ``IDLE`` row: the time its threads or streams were not running an op.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._opstack import op_stack_walk
from .grouping import HOST_PLANE
from .host_events import HostEvents, host_events
from .tf_ops import TF, UNKNOWN, parse_tf_op

__all__ = ["OP_STATS_COLUMNS", "op_stats_table"]

OP_STATS_COLUMNS = ["rank", "host_or_device", "type", "operation", "occurrences",
                    "total_time_us", "avg_time_us", "total_self_time_us", "avg_self_time_us",
                    "self_time_pct", "cumulative_self_time_pct", "eager"]
IDLE = "IDLE"


def _parse_table(names) -> pd.DataFrame:
    """parse_tf_op of each distinct name (the index)."""
    uniq = pd.unique(pd.Series(names, dtype=object))
    return pd.DataFrame([parse_tf_op(n) for n in uniq], index=pd.Index(uniq, dtype=object),
                        columns=["category", "op", "type"])


def host_op_metrics(prof, host: str) -> tuple[pd.DataFrame, int, int]:
    """Per-op metrics of one host's CPU plane: (table, total_time_ps, total_op_time_ps).
    Cached on the profile (op stats, input pipeline and overview share it)."""
    cache = prof.__dict__.setdefault("_host_op_metrics", {})
    if host not in cache:
        cache[host] = _host_metrics(host_events(prof, host))
    return cache[host]


def _host_metrics(hev: HostEvents) -> tuple[pd.DataFrame, int, int]:
    real = hev.event_id >= 0
    on_host = real & hev.plane_is(HOST_PLANE) & ~hev.is_derived_line()
    if not on_host.any():
        return _empty_metrics(), 0, 0
    by_name = _parse_table(hev.names)  # one row per distinct event name, in code order
    name_is_op = (by_name["category"].to_numpy() != UNKNOWN)
    name_is_tf = (by_name["category"].to_numpy() == TF)
    tf_op = hev.strs["tf_op"]
    has_tf_op = on_host & np.array([bool(v) for v in tf_op], dtype=bool)
    parts = []
    rows = np.flatnonzero(on_host & name_is_op[hev.name_code])
    if len(rows):
        code = hev.name_code[rows]
        parts.append(pd.DataFrame({"row": rows, "slot": 0,
                                   "op": by_name["op"].to_numpy()[code],
                                   "type": by_name["type"].to_numpy()[code],
                                   "tf": name_is_tf[code]}))
    rows = np.flatnonzero(has_tf_op)
    if len(rows):
        full = tf_op[rows]
        p = _parse_table(full).reindex(full)
        op_name = np.where(p["category"].to_numpy() == UNKNOWN, full, p["op"].to_numpy())
        parts.append(pd.DataFrame({"row": rows, "slot": 2, "op": op_name,
                                   "type": p["type"].to_numpy(), "tf": False}))
    if not parts:
        return _empty_metrics(), 0, 0
    inst = pd.concat(parts, ignore_index=True)
    n = len(inst)
    rows = inst["row"].to_numpy()
    slot = inst["slot"].to_numpy()
    instance = np.arange(n, dtype=np.int64)
    acts = pd.DataFrame({
        "line": np.concatenate([hev.line[rows]] * 2),
        "ts": np.concatenate([hev.begin[rows], hev.end[rows]]),
        "seq": np.concatenate([rows * 4 + slot, rows * 4 + slot + 1]),
        "is_end": np.concatenate([np.zeros(n, bool), np.ones(n, bool)]),
        "instance": np.concatenate([instance, instance]),
    }).sort_values(["line", "ts", "seq"], kind="stable")
    op_codes, op_table = pd.factorize(inst["op"])
    type_codes, type_table = pd.factorize(inst["type"].where(inst["type"] != "", None))
    inst_op = op_codes.astype(np.int64)
    inst_type = type_codes.astype(np.int64)
    k = acts["instance"].to_numpy()
    line = acts["line"].to_numpy(np.int64)
    n_keys, n_lines = len(op_table), int(hev.line.max()) + 1
    occ = np.zeros(n_keys, np.int64)
    time_ps = np.zeros(n_keys, np.int64)
    self_ps = np.zeros(n_keys, np.int64)
    first_type = np.full(n_keys, -1, np.int64)
    line_op = np.zeros(n_lines, np.int64)
    line_first = np.zeros(n_lines, np.int64)
    line_last = np.zeros(n_lines, np.int64)
    op_stack_walk(line, acts["ts"].to_numpy(np.int64), acts["is_end"].to_numpy(),
                  k.astype(np.int64), inst_op[k], inst_type[k], occ, time_ps, self_ps,
                  first_type, line_op, line_first, line_last)
    lines_used = np.unique(line)
    total_op = int(line_op[lines_used].sum())
    total = int(np.maximum(line_op[lines_used], line_last[lines_used] -
                           line_first[lines_used]).sum())
    eager = _eager_flags(hev, rows, inst["tf"].to_numpy())
    eager_by_op = pd.Series(eager).groupby(inst_op).any()
    table = pd.DataFrame({
        "operation": np.asarray(op_table, dtype=object),
        "type": [type_table[t] if t >= 0 else "" for t in first_type],
        "occurrences": occ, "time_ps": time_ps, "self_ps": self_ps,
        "eager": eager_by_op.reindex(np.arange(n_keys), fill_value=False).to_numpy()})
    return table[occ > 0], total, total_op


def _eager_flags(hev: HostEvents, rows: np.ndarray, tf_op: np.ndarray) -> np.ndarray:
    """An op ran eagerly when its event says so (``is_eager``) or, for ``name:Type`` op events,
    when its nearest enclosing ``EagerExecute`` on the same thread has ``is_func == 0``."""
    value, present = hev.int_stat("is_eager")
    flags = present[rows] & (value[rows] != 0)
    eager_exec = hev.name_is("EagerExecute")
    if not eager_exec.any():
        return flags
    parent = hev.nesting_parent()
    is_func, has_func = hev.int_stat("is_func")
    eager_call = eager_exec & has_func & (is_func == 0)
    node = np.where(tf_op, parent[rows], -1)
    found = np.zeros(len(rows), dtype=bool)
    decided = np.zeros(len(rows), dtype=bool)
    for _ in range(64):
        live = (node >= 0) & ~decided
        if not live.any():
            break
        hit = live & eager_exec[np.maximum(node, 0)]
        found[hit] = eager_call[node[hit]]
        decided |= hit
        node = np.where(live & ~hit, parent[np.maximum(node, 0)], -1)
    return flags | found


def _device_metrics(hev: HostEvents) -> tuple[pd.DataFrame, int, int]:
    dev = (hev.event_id >= 0) & hev.plane_mask(
        lambda s: s.str.startswith("/device:GPU").to_numpy()) & ~hev.is_derived_line()
    if not dev.any():
        return _empty_metrics(), 0, 0
    rows = np.flatnonzero(dev)
    spans = pd.DataFrame({"plane": hev.plane_code[rows], "b": hev.begin[rows],
                          "e": hev.end[rows]}).groupby("plane").agg(b=("b", "min"),
                                                                    e=("e", "max"))
    total = int((spans.e - spans.b).sum())
    tf_op = hev.strs["tf_op"][rows]
    has = np.array([bool(v) for v in tf_op], dtype=bool)
    if not has.any():
        return _empty_metrics(), total, 0
    rows, tf_op = rows[has], tf_op[has]
    p = _parse_table(tf_op).reindex(tf_op)
    kernels = pd.DataFrame({"op": p["op"].to_numpy(),
                            "type": p["type"].replace("", "unknown").to_numpy(),
                            "kernel": hev.name_code[rows],
                            "dur": hev.end[rows] - hev.begin[rows]})
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


def _empty_metrics() -> pd.DataFrame:
    return pd.DataFrame({"operation": pd.Series(dtype=object), "type": pd.Series(dtype=object),
                         "occurrences": pd.Series(dtype=np.int64),
                         "time_ps": pd.Series(dtype=np.int64),
                         "self_ps": pd.Series(dtype=np.int64),
                         "eager": pd.Series(dtype=bool)})


def _combine(parts) -> tuple[pd.DataFrame, int, int]:
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


def op_stats_table(prof, include_idle: bool = True) -> pd.DataFrame:
    """The TensorFlow stats table: one row per (side, op), device rows first, each side sorted
    by self time.  Percentages are of the side's total time, with or without its idle time."""
    out = []
    for side in ("Device", "Host"):
        parts = []
        for host in prof.hosts:
            parts.append(host_op_metrics(prof, host) if side == "Host" else
                         _device_metrics(host_events(prof, host)))
        table, total, total_op = _combine(parts)
        if table.empty and total == 0:
            continue
        if include_idle:
            idle = total - total_op
            table = pd.concat([table, pd.DataFrame({
                "operation": [IDLE], "type": [IDLE], "occurrences": [0], "time_ps": [idle],
                "self_ps": [idle], "eager": [False]})], ignore_index=True)
        denominator = total if include_idle else total_op
        table = table.sort_values(["self_ps", "operation"], ascending=[False, True],
                                  kind="stable")
        pct = table.self_ps / denominator * 100 if denominator else table.self_ps * 0.0
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
    return result[OP_STATS_COLUMNS]
