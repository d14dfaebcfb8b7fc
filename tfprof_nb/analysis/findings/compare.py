"""Comparing two profiles: step time and categories, ops and kernels."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ...constants import CATEGORY_COLUMNS

__all__ = ["Comparison", "compare", "COMPARED"]

# the analyses a comparison reads from each profile
COMPARED = ("steps", "op_stats_without_idle", "kernel_stats")


@dataclass
class Comparison:
    """Differences ``b - a``: ``steps`` (mean per category), ``ops`` and ``kernels``;
    ``step_time``: the change of the median step time with its noise band and verdict (the
    statistic ``tp.check`` and ``tfprof diff`` judge; empty when not given)."""

    steps: pd.DataFrame = field(default_factory=pd.DataFrame)
    ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    kernels: pd.DataFrame = field(default_factory=pd.DataFrame)
    labels: tuple = ("a", "b")
    step_time: dict = field(default_factory=dict)

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
        changed = self.steps.drop(index="duration_ms", errors="ignore")
        changed = changed[changed.delta.abs() > 0]
        if len(changed):
            lines.append("  mean per step, by category:")
        for name, row in changed.iterrows():
            lines.append(f"  {name}: {row.a:.3f} -> {row.b:.3f} ms ({row.delta:+.3f})")
        return "\n".join(lines)


def _delta(a: pd.Series, b: pd.Series, key_name: str) -> pd.DataFrame:
    df = pd.concat([a.rename("a"), b.rename("b")], axis=1).fillna(0.0)
    df["delta"] = df.b - df.a
    df["ratio"] = df.b / df.a.where(df.a != 0)
    df.index.name = key_name
    return df.sort_values("delta", key=abs, ascending=False)


def compare(a: dict, b: dict, labels=("a", "b")) -> Comparison:
    """Differences ``b - a`` between two profiles' tables (``a`` and ``b``: {analysis name:
    result} of the analyses in COMPARED)."""
    cols = ["duration_ms"] + CATEGORY_COLUMNS

    def mean_step(tables):
        steps = tables["steps"]
        return steps[cols].mean() if len(steps) else pd.Series(0.0, index=cols)

    sa, sb = mean_step(a), mean_step(b)
    steps = pd.concat([sa.rename("a"), sb.rename("b")], axis=1)
    steps["delta"] = steps.b - steps.a
    steps["pct"] = steps.delta / steps.a.where(steps.a != 0) * 100
    steps.index.name = "metric"

    def op_series(tables):
        ops = tables["op_stats_without_idle"]
        return ops.set_index(["host_or_device", "operation"]).total_self_time_us

    def kernel_series(tables):
        ks = tables["kernel_stats"]
        if ks.empty:
            return pd.Series(dtype=float)
        return ks.groupby(["kernel_name", "op_name"]).total_duration_us.sum()

    return Comparison(steps, _delta(op_series(a), op_series(b), "op"),
                      _delta(kernel_series(a), kernel_series(b), "kernel"), tuple(labels))
