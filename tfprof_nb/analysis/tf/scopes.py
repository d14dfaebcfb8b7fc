"""Time and memory along the name-scope hierarchy (``outer/inner/op``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["scope_stats_table", "SCOPE_COLUMNS"]

SCOPE_COLUMNS = ["scope", "parent", "name", "depth", "self_time_us", "ops", "occurrences",
                 "allocated_bytes", "allocations"]


def _scopes_of(op_name: str) -> list[str]:
    parts = op_name.split("/")[:-1]
    return ["/".join(parts[:i + 1]) for i in range(len(parts))]


def scope_stats_table(ops: pd.DataFrame, memory_timeline: pd.DataFrame, min_bytes: int = 0,
                      max_depth: int | None = None, side: str = "Host") -> pd.DataFrame:
    """One row per name scope: the self time of the ops under it (``side``: "Host",
    "Device" or "all"), their occurrences, and the bytes allocated by them (from memory
    events); scopes allocating less than ``min_bytes`` and deeper than ``max_depth`` are left
    out.  Rows are in tree order (each scope right after its parent).  ``ops`` is the
    TensorFlow stats table without idle rows."""
    if side != "all":
        ops = ops[ops.host_or_device == side]
    rows = {}
    for name, self_us, occ in zip(ops.operation, ops.total_self_time_us, ops.occurrences):
        for s in _scopes_of(name):
            r = rows.setdefault(s, [0.0, 0, 0, 0, 0])
            r[0] += self_us
            r[1] += 1
            r[2] += int(occ)
    tl = memory_timeline
    if len(tl):
        allocs = tl[tl.event == "allocation"].groupby("tf_op").allocation_bytes.agg(["sum",
                                                                                     "size"])
        for op, (total, count) in allocs.iterrows():
            for s in _scopes_of(str(op)):
                r = rows.setdefault(s, [0.0, 0, 0, 0, 0])
                r[3] += int(total)
                r[4] += int(count)
    if not rows:
        return pd.DataFrame(columns=SCOPE_COLUMNS)
    df = pd.DataFrame([(s, *v) for s, v in rows.items()],
                      columns=["scope", "self_time_us", "ops", "occurrences", "allocated_bytes",
                               "allocations"])
    df["depth"] = df.scope.str.count("/")
    df["parent"] = df.scope.map(lambda s: s.rpartition("/")[0] or None)
    df["name"] = df.scope.map(lambda s: s.rpartition("/")[2])
    if min_bytes:
        df = df[df.allocated_bytes >= min_bytes]
    if max_depth is not None:
        df = df[df.depth <= max_depth]
    df = df.sort_values("scope", key=lambda s: s.str.replace("/", "\x00"), kind="stable")
    return df[SCOPE_COLUMNS].reset_index(drop=True).astype({"depth": np.int64})
