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
from .tf_ops import TF, UNKNOWN, parse_tf_op

__all__ = ["OP_STATS_COLUMNS", "op_stats_table"]

OP_STATS_COLUMNS = ["rank", "host_or_device", "type", "operation", "occurrences",
                    "total_time_us", "avg_time_us", "total_self_time_us", "avg_self_time_us",
                    "self_time_pct", "cumulative_self_time_pct", "eager"]
IDLE = "IDLE"
_DERIVED_LINE_MIN, _DERIVED_LINE_SPAN = 0xDEADBEEF, 64


def _is_derived_line(line_id: np.ndarray) -> np.ndarray:
    low = line_id.astype(np.int64) & 0xFFFFFFFF
    return (low >= _DERIVED_LINE_MIN) & (low < _DERIVED_LINE_MIN + _DERIVED_LINE_SPAN)


def _parse_many(names) -> pd.DataFrame:
    """parse_tf_op over distinct names only."""
    uniq = pd.unique(pd.Series(names, dtype=object))
    parsed = [parse_tf_op(n) for n in uniq]
    return pd.DataFrame(parsed, index=pd.Index(uniq, dtype=object),
                        columns=["category", "op", "type"])


def _aligned_str(series: pd.Series, ids: np.ndarray) -> np.ndarray:
    series = series[~series.index.duplicated(keep="last")]
    out = series.reindex(ids)
    return out.astype(object).where(out.notna(), None).to_numpy()


def _host_metrics(prof, ev: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """Per-op metrics of one host's CPU plane: (table, total_time_ps, total_op_time_ps)."""
    host = ev[(ev["plane"] == HOST_PLANE) & ~_is_derived_line(ev["line_id"].to_numpy())]
    if host.empty:
        return _empty_metrics(), 0, 0
    ids = host.index.to_numpy()
    names = host["name"].astype(object).to_numpy()
    parsed = _parse_many(names)
    cat = parsed["category"].reindex(names).to_numpy()
    is_op = cat != UNKNOWN
    tf_op = _aligned_str(prof.stat("tf_op"), ids)
    has_tf_op = np.array([bool(v) for v in tf_op], dtype=bool)
    begin = host["start_ps"].to_numpy()
    end = begin + host["duration_ps"].to_numpy()
    line = pd.MultiIndex.from_arrays([host["line_id"].to_numpy()]).factorize()[0]
    order_in_line = np.arange(len(host))

    parts = []
    for mask, full in ((is_op, names), (has_tf_op, tf_op)):
        rows = np.flatnonzero(mask)
        if not len(rows):
            continue
        p = _parse_many(full[rows]).reindex(full[rows])
        op_name = np.where(p["category"].to_numpy() == UNKNOWN, full[rows], p["op"].to_numpy())
        parts.append(pd.DataFrame({"row": rows, "slot": 0 if full is names else 2,
                                   "op": op_name, "type": p["type"].to_numpy(),
                                   "tf": (p["category"].to_numpy() == TF) & (full is names)}))
    if not parts:
        return _empty_metrics(), 0, 0
    inst = pd.concat(parts, ignore_index=True)
    inst["instance"] = np.arange(len(inst))
    eager = _eager_flags(prof, host, inst["row"].to_numpy(), ids, inst["tf"].to_numpy())
    n = len(inst)
    rows = inst["row"].to_numpy()
    acts = pd.DataFrame({
        "line": np.concatenate([line[rows], line[rows]]),
        "ts": np.concatenate([begin[rows], end[rows]]),
        "seq": np.concatenate([order_in_line[rows] * 4 + inst["slot"].to_numpy(),
                               order_in_line[rows] * 4 + inst["slot"].to_numpy() + 1]),
        "is_end": np.concatenate([np.zeros(n, bool), np.ones(n, bool)]),
        "instance": np.concatenate([inst["instance"].to_numpy()] * 2),
    }).sort_values(["line", "ts", "seq"], kind="stable")
    op_codes, op_table = pd.factorize(inst["op"])
    type_codes, type_table = pd.factorize(inst["type"].where(inst["type"] != "", None))
    inst_op = op_codes.astype(np.int64)
    inst_type = type_codes.astype(np.int64)
    k = acts["instance"].to_numpy()
    n_keys, n_lines = len(op_table), int(line.max()) + 1
    occ = np.zeros(n_keys, np.int64)
    time_ps = np.zeros(n_keys, np.int64)
    self_ps = np.zeros(n_keys, np.int64)
    first_type = np.full(n_keys, -1, np.int64)
    line_op = np.zeros(n_lines, np.int64)
    line_first = np.zeros(n_lines, np.int64)
    line_last = np.zeros(n_lines, np.int64)
    op_stack_walk(acts["line"].to_numpy(np.int64), acts["ts"].to_numpy(np.int64),
                  acts["is_end"].to_numpy(), k.astype(np.int64), inst_op[k], inst_type[k],
                  occ, time_ps, self_ps, first_type, line_op, line_first, line_last)
    lines_used = np.unique(acts["line"].to_numpy())
    total_op = int(line_op[lines_used].sum())
    total = int(np.maximum(line_op[lines_used], line_last[lines_used] -
                           line_first[lines_used]).sum())
    eager_by_op = pd.Series(eager).groupby(inst_op).any()
    table = pd.DataFrame({
        "operation": np.asarray(op_table, dtype=object),
        "type": [type_table[t] if t >= 0 else "" for t in first_type],
        "occurrences": occ, "time_ps": time_ps, "self_ps": self_ps,
        "eager": eager_by_op.reindex(np.arange(n_keys), fill_value=False).to_numpy()})
    return table[occ > 0], total, total_op


def _eager_flags(prof, host: pd.DataFrame, rows: np.ndarray, ids: np.ndarray,
                 tf_op: np.ndarray) -> np.ndarray:
    """An op ran eagerly when its event says so (``is_eager``) or, for ``name:Type`` op events,
    when its nearest enclosing ``EagerExecute`` on the same thread has ``is_func == 0``."""
    is_eager = prof.stat("is_eager")
    is_eager = is_eager[~is_eager.index.duplicated(keep="last")]
    flags = is_eager.reindex(ids[rows]).fillna(0).to_numpy() != 0
    eager_exec = host["name"].to_numpy() == "EagerExecute"
    if not eager_exec.any():
        return flags
    from .nesting import event_nesting

    line = host["line_id"].to_numpy()
    nest = event_nesting(pd.factorize(line)[0], host["start_ps"].to_numpy(),
                         host["duration_ps"].to_numpy())
    parent = nest["parent"].to_numpy()
    is_func = prof.stat("is_func")
    is_func = is_func[~is_func.index.duplicated(keep="last")].reindex(ids)
    eager_call = eager_exec & (is_func.fillna(1).to_numpy() == 0)
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


def _device_metrics(prof, ev: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    dev = ev[ev["plane"].astype(str).str.startswith("/device:GPU")
             & ~_is_derived_line(ev["line_id"].to_numpy())]
    if dev.empty:
        return _empty_metrics(), 0, 0
    begin = dev["start_ps"].to_numpy()
    end = begin + dev["duration_ps"].to_numpy()
    planes = dev["plane"].astype(object).to_numpy()
    spans = pd.DataFrame({"plane": planes, "b": begin, "e": end}).groupby("plane") \
        .agg(b=("b", "min"), e=("e", "max"))
    total = int((spans.e - spans.b).sum())
    tf_op = _aligned_str(prof.stat("tf_op"), dev.index.to_numpy())
    has = np.array([bool(v) for v in tf_op], dtype=bool)
    if not has.any():
        return _empty_metrics(), total, 0
    p = _parse_many(tf_op[has]).reindex(tf_op[has])
    kernels = pd.DataFrame({"op": p["op"].to_numpy(), "type": p["type"].replace("", "unknown")
                            .to_numpy(), "kernel": dev["name"].astype(object).to_numpy()[has],
                            "dur": (end - begin)[has]})
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
    for side, fn in (("Device", _device_metrics), ("Host", _host_metrics)):
        parts = []
        for host in prof.hosts:
            ev = prof.events
            if len(prof.hosts) > 1:
                ev = ev[ev["host"] == host]
            parts.append(fn(prof, ev))
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
