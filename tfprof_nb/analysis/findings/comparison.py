"""Comparing two profiles: the step time, its categories, ops matched across recompiles with
their change per step and noise band, kernels, and the XLA programs' HLO diff.

The modules it reads: :mod:`.op_step_times` (each op's time in each step),
:mod:`.hlo_identity` (what each XLA instruction computes), :mod:`.op_matching` (which op is
which), :mod:`.op_changes` (per-step medians, bands, explained and unexplained change),
:mod:`.hlo_diff` (fusions, copies, rematerialisation, collectives, memory peaks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...constants import CATEGORY_COLUMNS
from ..xla.memory.program_memory import programs_table
from .hlo_diff import HLO_DIFF_COLUMNS, hlo_diff
from .hlo_identity import module_key
from .op_changes import (CHANGE_COLUMNS, explained, host_steps, op_changes, ops_time_words,
                         step_matrix)
from .op_matching import match_ops, op_rows

__all__ = ["Comparison", "compare", "COMPARED", "WATERFALL_COLUMNS"]

# the analyses a comparison reads from each profile
COMPARED = ("steps", "op_stats_without_idle", "kernel_stats", "hlo_stats", "hlo_identity",
            "op_step_times", "program_memory")
WATERFALL_COLUMNS = ["label", "delta_ms", "measure", "category", "noise"]


def _empty_ops() -> pd.DataFrame:
    return pd.DataFrame(columns=CHANGE_COLUMNS).set_index(["host_or_device", "operation"])


@dataclass
class Comparison:
    """Differences ``b - a``: ``steps`` (mean per category, ms; also ``categories``),
    ``ops`` (every op of both runs matched across recompiles: median self time per step of
    each run, ``delta``, noise band, ``share_pct`` of the step-time change; us), ``kernels``
    (time per step, us), ``hlo`` (the HLO diff), ``step_time`` (the change of the median
    step time with its noise band and verdict: the statistic ``tp.check`` and ``tfprof
    diff`` judge) and ``explained`` (the ops' part of that change and the rest)."""

    steps: pd.DataFrame = field(default_factory=pd.DataFrame)
    ops: pd.DataFrame = field(default_factory=_empty_ops)
    kernels: pd.DataFrame = field(default_factory=pd.DataFrame)
    labels: tuple = ("a", "b")
    step_time: dict = field(default_factory=dict)
    explained: dict = field(default_factory=dict)
    hlo: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=HLO_DIFF_COLUMNS))

    @property
    def categories(self) -> pd.DataFrame:
        """The mean step time per category of both runs (``steps``)."""
        return self.steps

    @property
    def speedup(self) -> float | None:
        """Median step time of a divided by that of b (> 1: b is faster); the means' ratio
        where no median was given."""
        st = self.step_time
        if st.get("base") and st.get("new"):
            return float(st["base"] / st["new"])
        if self.steps.empty or "duration_ms" not in self.steps.index:
            return None
        row = self.steps.loc["duration_ms"]
        return float(row.a / row.b) if row.b else None

    def waterfall(self, top: int = 10) -> pd.DataFrame:
        """WATERFALL_COLUMNS: the base median step (``absolute``), the ``top`` op changes of
        the side that explains the steps, the other ops' sum, the unexplained rest
        (``relative``) and the new median step (``total``): the relative rows add up to the
        change (ms)."""
        st, ex = self.step_time, self.explained
        if st.get("base") is None or st.get("new") is None or ex.get("unexplained_ms") is None:
            return pd.DataFrame(columns=WATERFALL_COLUMNS)
        mine = self.ops[self.ops.index.get_level_values(0) == ex["side"]]
        shown, rest = mine.iloc[:top], mine.iloc[top:]
        rows = [(f"{self.labels[0]} (median step)", st["base"], "absolute", "", "")]
        labels = _distinct_labels([_op_label(name, r) for (_, name), r in shown.iterrows()],
                                  shown.matched_by.astype(str).tolist())
        rows += [(label, r.delta / 1e3, "relative", r.category, r.noise)
                 for label, (_, r) in zip(labels, shown.iterrows())]
        if len(rest):
            rows.append((f"{len(rest)} other ops", float(np.nansum(rest.delta)) / 1e3,
                         "relative", "", ""))
        rows.append(("unexplained", ex["unexplained_ms"], "relative", "", ""))
        rows.append((f"{self.labels[1]} (median step)", st["new"], "total", "", ""))
        return pd.DataFrame(rows, columns=WATERFALL_COLUMNS)

    def __repr__(self) -> str:
        a, b = self.labels
        lines = [f"Comparison {a} -> {b}"]
        st = self.step_time
        if st.get("verdict"):
            lines.append("  " + st["verdict"].replace("NEW", b).replace("BASE", a))
        elif self.speedup is not None:
            row = self.steps.loc["duration_ms"]
            lines.append(f"  mean step time {row.a:.3f} -> {row.b:.3f} ms "
                         f"({self.speedup:.2f}x)")
        lines += _explained_lines(self.explained)
        beyond = self.ops[self.ops.noise == "beyond noise"] if len(self.ops) else self.ops
        if len(beyond):
            lines.append("  ops beyond noise (self time per step: the median of steps):")
        for (side, name), row in beyond.head(10).iterrows():
            lines.append(f"  {side} {_op_label(name, row)}: {row.a:.1f} -> {row.b:.1f} us "
                         f"({row.delta:+.1f}, {row.matched_by})")
        for _, row in self.hlo.iterrows():
            lines.append(f"  HLO {row.program}: {row.change}: {row.detail}")
        changed = self.steps.drop(index="duration_ms", errors="ignore")
        changed = changed[changed.delta.abs() > 0] if len(changed) else changed
        if len(changed):
            lines.append("  mean per step, by category:")
        for name, row in changed.iterrows():
            lines.append(f"  {name}: {row.a:.3f} -> {row.b:.3f} ms ({row.delta:+.3f})")
        return "\n".join(lines)


def _distinct_labels(labels: list[str], matched_by: list[str]) -> list[str]:
    """An op's label in a chart, told apart from another op's of the same name (a removed
    op and the added one that took its name): "loop_convert_fusion (removed)"; by number
    where that is not enough.  A chart's categories are its labels: two equal ones would
    draw two bars in one place."""
    twice = {x for x in labels if labels.count(x) > 1}
    out = [f"{x} ({how})" if x in twice else x for x, how in zip(labels, matched_by)]
    seen: dict[str, int] = {}
    for i, x in enumerate(out):
        seen[x] = seen.get(x, 0) + 1
        if seen[x] > 1:
            out[i] = f"{x} #{seen[x]}"
    return out


def _op_label(name: str, row) -> str:
    """An op's name, with its base name where a recompile renamed it."""
    if row.a_op and row.b_op and row.a_op != row.b_op:
        return f"{row.b_op} (was {row.a_op})"
    return str(name)


def _explained_lines(ex: dict) -> list[str]:
    if ex.get("unexplained_ms") is None:
        return []
    return [f"  of the median step's change {ex['step_ms']:+.3f} ms: {ex['explained_ms']:+.3f} "
            f"ms in {ops_time_words(ex)}, {ex['unexplained_ms']:+.3f} ms unexplained"]


# the scope of the comparison's mean time per step in each category (its ``steps`` table)
MEANS_SCOPE = "over every step of each run (a pod's: every host's step, in its own time)"


def _mean_steps(a: dict, b: dict) -> pd.DataFrame:
    cols = ["duration_ms"] + CATEGORY_COLUMNS

    def mean_step(tables):
        steps = tables["steps"]
        return steps[cols].mean() if len(steps) else pd.Series(0.0, index=cols)

    steps = pd.concat([mean_step(a).rename("a"), mean_step(b).rename("b")], axis=1)
    steps["delta"] = steps.b - steps.a
    steps["pct"] = steps.delta / steps.a.where(steps.a != 0) * 100
    steps.index.name = "metric"
    return steps


def _kernels(a: dict, b: dict, n_steps: tuple) -> pd.DataFrame:
    """Kernel time per step (total / steps, us) by kernel and op."""
    def per_step(tables, n):
        ks = tables["kernel_stats"]
        if ks.empty:
            return pd.Series(dtype=float)
        return ks.groupby(["kernel_name", "op_name"]).total_duration_us.sum() / max(n, 1)

    df = pd.concat([per_step(a, n_steps[0]).rename("a"), per_step(b, n_steps[1]).rename("b")],
                   axis=1).fillna(0.0)
    df["delta"] = df.b - df.a
    df["ratio"] = df.b / df.a.where(df.a != 0)
    return df.sort_values("delta", key=abs, ascending=False)


def _memory(tables: dict, rows: pd.DataFrame) -> pd.DataFrame:
    """The program memory table of the programs that ran, with their ``module_key``."""
    table = programs_table(tables["program_memory"])
    table = table[table.program_id.isin(rows.program_id[rows.kind == "xla"])]
    return table.assign(module_key=table.module.map(module_key))


def compare(a: dict, b: dict, labels=("a", "b"), step_time: dict | None = None,
            interval=None) -> Comparison:
    """Differences ``b - a`` between two profiles' tables (``a`` and ``b``: {analysis name:
    result} of the analyses in COMPARED); ``step_time``: the median step time's change
    (``base``/``new`` ms, band, verdict); ``interval(base, new, confidence)``: the noise band
    of a shift of per-step values (None: no bands)."""
    st = step_time or {}
    steps = [host_steps(t["steps"]) for t in (a, b)]  # (a pod's: each host's step)
    n_steps = tuple(len(s) for s in steps)
    rows = [op_rows(t["hlo_stats"], t["hlo_identity"], t["op_stats_without_idle"])
            for t in (a, b)]
    matrices = tuple(step_matrix(t["op_step_times"], s) for t, s in zip((a, b), steps))
    medians = (st.get("base"), st.get("new"))
    ops = op_changes(rows[0], rows[1], match_ops(*rows), matrices, n_steps, medians, interval)
    delta = medians[1] - medians[0] if None not in medians else None
    ran = [t["hlo_identity"].program_id.isin(r.program_id[r.kind == "xla"])
           for t, r in zip((a, b), rows)]
    hlo = hlo_diff((a["hlo_identity"][ran[0]], b["hlo_identity"][ran[1]]), ops.reset_index(),
                   tuple(_memory(t, r) for t, r in zip((a, b), rows)))
    xla_cpu = all(len(t["hlo_stats"]) and (t["hlo_stats"].device_type == "CPU").all()
                  for t in (a, b))
    return Comparison(_mean_steps(a, b), ops, _kernels(a, b, n_steps), tuple(labels), st,
                      explained(ops, delta, xla_cpu), hlo)
