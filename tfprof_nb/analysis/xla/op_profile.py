"""Op profile: XLA time as a tree, by program or by category, with utilisation against the
device's peaks (XProf's ``op_profile``).

Trees, as a table with one row per node (``node``, ``parent``, ``depth``, ``kind``):

* ``group_by="program"``: root -> program (``module(program_id)``; GPU kernels of TensorFlow
  ops outside XLA are program ``main``) -> HLO category -> duplicates group -> HLO op;
* ``group_by="category"``: root -> HLO category -> duplicates group -> HLO op.

Under a TPU fusion op, its fused instructions (kind ``fused``, no time; XProf shows them too).

Ops that share a ``deduplicated_name`` (XLA's name for identical fusions) form a group named
``"<slowest> and its duplicate(s)"``; a group of one is the op itself.  With ``include_idle``
an ``IDLE`` leaf under the root holds the devices' time without ops.

Metrics: ``time_us`` (ops: their time; categories and groups: the sum of their ops; programs
and the root: the sum of the self times below, the root's being the total time when idle is
included), ``time_pct`` of the root, ``occurrences``, ``flops`` / ``normalized_flops`` /
``memory_accessed_bytes`` summed (TPU and GPU ops: their HBM bytes, as XProf), rates, and
utilisations in percent: ``flop_utilization_pct``
= min(100, normalized FLOP rate / peak FLOP rate) and ``memory_bw_utilization_pct`` =
min(100, bytes / time / peak bandwidth).  XProf's ``metrics.flops`` is the FLOP utilisation
times the time fraction; we give the two separately.  Unlike XProf, no level is pruned to
its top 100 children.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .device_peaks import DevicePeaks
from .hlo_stats import hlo_stats_table
from .combined import XlaData

__all__ = ["op_profile_table", "op_profile_for", "OP_PROFILE_COLUMNS"]

OP_PROFILE_COLUMNS = ["node", "parent", "depth", "kind", "name", "program_id", "category",
                      "occurrences", "time_us", "time_pct", "flops", "normalized_flops",
                      "memory_accessed_bytes", "flop_rate_flops_per_s",
                      "memory_bw_bytes_per_s", "flop_utilization_pct",
                      "memory_bw_utilization_pct", "expression", "provenance"]
_SUMS = ["occurrences", "time_ps", "self_ps", "flops", "normalized_flops",
         "memory_accessed_bytes"]


def _ops(stats: pd.DataFrame) -> pd.DataFrame:
    """The op rows the tree is built from (times in ps)."""
    ops = pd.DataFrame({
        "name": stats.hlo_op_name, "program_id": stats.program_id.astype(object),
        "module": stats.module, "category": stats.category.replace("", "unknown"),
        "occurrences": stats.occurrences,
        "time_ps": (stats.total_time_us * 1e6).round().astype(np.int64),
        "self_ps": (stats.total_self_time_us * 1e6).round().astype(np.int64),
        "flops": stats.flops.fillna(0), "normalized_flops": stats.normalized_flops.fillna(0),
        # TPU and GPU: the HBM bytes of the ops' memory breakdowns (none: 0), as XProf's op
        # profile (on GPU, XLA's cost analysis leaves a library call's tuple output out)
        "memory_accessed_bytes": stats.hbm_bytes.fillna(0).where(
            stats.device_type != "CPU", stats.memory_accessed_bytes.fillna(0)),
        "expression": stats.hlo_op_expression.where(stats.program_id > 0, ""),
        "provenance": stats.framework_op_name, "dedup": stats.deduplicated_name,
        "tpu": stats.device_type == "TPU"})
    ops["program"] = np.where((ops.program_id == 0) & (ops.module == ""), "main",
                              ops.module + "(" + ops.program_id.astype(str) + ")")
    return ops


def op_profile_table(stats: pd.DataFrame, total_ps: int, peaks: DevicePeaks,
                     group_by: str = "program", include_idle: bool = True,
                     fused: pd.DataFrame | None = None) -> pd.DataFrame:
    """The op profile tree as a table (OP_PROFILE_COLUMNS) of the HLO stats table ``stats``
    (made with ``peaks``) and the devices' total time; ``fused``: the TPU fusions'
    instructions (:func:`.fused.fused_children`), nodes without time under their fusion;
    ``attrs["reasons"]``."""
    if group_by not in ("program", "category"):
        raise ValueError(f"group_by must be 'program' or 'category', not {group_by!r}")
    if stats.empty:
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in OP_PROFILE_COLUMNS})
        empty.attrs.update(reasons=list(stats.attrs["reasons"]), peaks=peaks)
        return empty
    ops = _ops(stats)
    op_time = int(ops.self_ps.sum()) if len(ops) else 0
    root_time = total_ps if include_idle else op_time
    rows: list[dict] = []

    def add(node, parent, depth, kind, name, frame, time_ps=None, **extra):
        sums = {c: frame[c].sum() for c in _SUMS} if len(frame) else dict.fromkeys(_SUMS, 0)
        if time_ps is not None:
            sums["time_ps"] = time_ps
        sums.update(extra)
        rows.append({"node": node, "parent": parent, "depth": depth, "kind": kind,
                     "name": name, **sums})

    add("root", "", 0, "root", f"by_{group_by}", ops, time_ps=root_time, occurrences=0)
    children = _fused_by_op(fused)
    # an op that holds others (a while on XLA:CPU: its body's ops run inside it) counts in
    # its program by its self time but under no category, XProf's rule (its time is the ops
    # listed there already)
    leaves = ops.time_ps <= ops.self_ps
    if group_by == "program":
        for prog, frame in _ordered(ops, "program", "self_ps"):
            pnode = f"root/{prog}"
            add(pnode, "root", 1, "program", prog, frame, time_ps=int(frame.self_ps.sum()),
                program_id=frame.program_id.iloc[0], occurrences=0)
            _categories(add, frame[leaves[frame.index]], pnode, 2, children)
    else:
        _categories(add, ops[leaves], "root", 1, children)
    if include_idle:
        add("root/IDLE", "root", 1, "idle", "IDLE", ops.iloc[:0],
            time_ps=max(total_ps - op_time, 0), category="IDLE")
    rows = _root_children_by_time(rows)
    # TPU ops carry device-normalized times: XProf rates the root over the ops' time
    rate_ps = op_time if bool(ops.tpu.any()) else root_time
    return _finish(rows, root_time, peaks, stats.attrs.get("reasons", []), rate_ps)


def _fused_by_op(fused: pd.DataFrame | None) -> dict:
    """{(program id, op): its fused instructions}."""
    if fused is None or fused.empty:
        return {}
    return {key: frame for key, frame in fused.groupby(["program_id", "op"], sort=False)}


def _add_fused(add, frame: pd.DataFrame, under: str, depth: int) -> None:
    """The fused instructions of one op (depth-first, as nested as the fusions)."""
    base = {c: 0 for c in _SUMS}
    top = frame.parent.iloc[0] if len(frame) else ""
    for row in frame.itertuples(index=False):
        level = row.path.count("/") - top.count("/")
        parent = under if row.parent == top else f"{under}/{row.parent[len(top) + 1:]}"
        add(f"{under}/{row.path[len(top) + 1:]}", parent, depth + level - 1, "fused",
            row.name, pd.DataFrame([base]), occurrences=1, category=row.category,
            expression=row.expression, provenance=row.provenance, program_id=0)


def _root_children_by_time(rows: list[dict]) -> list[dict]:
    """The rows (depth-first) with the root's subtrees ordered by time, IDLE among them."""
    subtrees: list[list[dict]] = []
    for row in rows[1:]:
        if row["depth"] == 1:
            subtrees.append([])
        subtrees[-1].append(row)
    subtrees.sort(key=lambda t: -t[0]["time_ps"])
    return rows[:1] + [r for t in subtrees for r in t]


def _ordered(frame: pd.DataFrame, key: str, by: str):
    """(value, rows) of ``frame`` grouped by ``key``, largest ``by`` first."""
    sizes = frame.groupby(key, sort=False)[by].sum().sort_values(ascending=False,
                                                                   kind="stable")
    for value in sizes.index:
        yield value, frame[frame[key] == value]


def _categories(add, frame: pd.DataFrame, parent: str, depth: int, fused: dict) -> None:
    for cat, cframe in _ordered(frame, "category", "time_ps"):
        cnode = f"{parent}/{cat}"
        add(cnode, parent, depth, "category", cat, cframe, category=cat)
        groups = cframe.assign(group=np.where(cframe.dedup != "", cframe.dedup, cframe.name))
        for group, gframe in _ordered(groups, "group", "time_ps"):
            gframe = gframe.sort_values(["time_ps", "name"], ascending=[False, True],
                                        kind="stable")
            under, level = cnode, depth + 1
            if len(gframe) > 1:
                top = gframe.iloc[0]
                under = f"{cnode}/{group}*"
                add(under, cnode, level, "duplicates", f"{top['name']} and its duplicate(s)",
                    gframe, category=cat, expression=top.expression,
                    provenance=top.provenance, program_id=top.program_id)
                level += 1
            for op in gframe.itertuples(index=False):
                node = f"{under}/{op.name}#{op.program_id}"
                add(node, under, level, "op", op.name, pd.DataFrame([op._asdict()]),
                    category=cat, expression=op.expression, provenance=op.provenance,
                    program_id=op.program_id)
                if (op.program_id, op.name) in fused:
                    _add_fused(add, fused[(op.program_id, op.name)], node, level + 1)


def _finish(rows: list[dict], root_time: int, peaks: DevicePeaks, reasons: list,
            root_rate_ps: int) -> pd.DataFrame:
    pids = [r.get("program_id") for r in rows]
    tree = pd.DataFrame(rows)
    tree["program_id"] = pd.Series([None if p is None or p != p else p for p in pids],
                                   dtype=object)
    t = tree.time_ps.to_numpy(dtype=float)
    secs = t / 1e12
    rate_secs = secs.copy()
    rate_secs[0] = root_rate_ps / 1e12
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(rate_secs > 0, tree.normalized_flops / rate_secs, 0.0)
        bw = np.where(secs > 0, tree.memory_accessed_bytes / secs, 0.0)
    known = peaks.known
    tree["time_us"] = t / 1e6
    tree["time_pct"] = t / root_time * 100 if root_time else 0.0
    tree["flop_rate_flops_per_s"] = rate
    tree["memory_bw_bytes_per_s"] = bw
    tree["flop_utilization_pct"] = np.minimum(rate / peaks.peak_flops_per_s, 1) * 100 \
        if known else np.nan
    tree["memory_bw_utilization_pct"] = np.minimum(bw / peaks.memory_bw_bytes_per_s, 1) \
        * 100 if known else np.nan
    for c in ("category", "expression", "provenance"):
        tree[c] = tree.get(c, pd.Series("", index=tree.index)).fillna("")
    out = tree.reindex(columns=OP_PROFILE_COLUMNS)
    out["occurrences"] = out.occurrences.astype(np.int64)
    out.attrs["reasons"] = list(reasons)
    out.attrs["peaks"] = peaks
    return out


def op_profile_for(xla: XlaData, peaks: DevicePeaks, stats: pd.DataFrame | None = None,
                   **options) -> pd.DataFrame:
    """The op profile of the XLA ops in ``xla`` against ``peaks`` (``stats``: their HLO
    stats table when already made with those peaks); ``options`` as for
    :func:`op_profile_table`."""
    stats = hlo_stats_table(xla, peaks) if stats is None else stats
    return op_profile_table(stats, xla.total_ps, peaks, fused=xla.fused, **options)
