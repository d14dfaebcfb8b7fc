"""How each matched op's time per step changed between two runs, with its noise band, and how
much of the step-time change the ops explain.

An op's value in a run is the median over the run's steps of its self time in each step
(:mod:`.op_step_times`; 0 in a step it did not run in), so runs of different lengths compare;
on a pod over the host steps (each host's step a sample: its op time on that host).
Its delta is the new median minus the base median; its band the Hodges-Lehmann interval of
the shift between the two runs' per-step values (the interval ``tp.check`` forms on step
times, given as ``interval``), at a family-wise 95 %: each op's at ``1 - 5 % / n`` for the
``n`` ops with per-step values in both runs, so that the chance that any op of two runs of
one program is called beyond noise is at most 5 %.  An op is ``beyond noise`` when its band
leaves out every change smaller than :data:`NEGLIGIBLE_STEP_PCT` % of the base run's median
step time (``floor_us``): a change that small explains nothing of the step time, and a new
layout of memory or threads moves ops by that much when their own work did not change (a
band that leaves out 0 but not that: ``negligible``); else ``within noise``.  Where an op's
time per step cannot be had (the profile has no steps, or its
events could not be placed in them) its value is its total over the number of steps (a run
without steps: its total) and it has no band (``per_step`` says which).

The ops of the side that runs the steps' work (the device's: XLA ops and GPU kernels, else
the host's TensorFlow ops) explain the change: ``explained`` is the sum of their deltas,
``unexplained`` the step time's change (the medians') minus that: they add up to it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CHANGE_COLUMNS", "FAMILY_CONFIDENCE", "NEGLIGIBLE_STEP_PCT", "host_steps",
           "op_changes", "ops_time_words", "step_matrix", "explained"]

FAMILY_CONFIDENCE = 0.95
NEGLIGIBLE_STEP_PCT = 1.0  # an op change below this share of the base median step: noise
CHANGE_COLUMNS = ["host_or_device", "operation", "kind", "program", "program_name", "a_op",
                  "b_op", "category", "matched_by", "a", "b", "delta", "ratio", "band_low",
                  "band_high", "noise", "share_pct", "per_step"]
MEDIAN, TOTAL = "median of steps", "total / steps"
NEGLIGIBLE = f"negligible: beyond noise, under {NEGLIGIBLE_STEP_PCT:g} % of a step"


def host_steps(steps: pd.DataFrame) -> pd.Index:
    """The host steps of a step table, each once, as :func:`step_matrix`'s columns:
    "host|step" (on a pod each host's step is its own sample: hosts that train apart number
    their steps apart)."""
    if not len(steps):
        return pd.Index([], name="step", dtype=object)
    hosts = steps.host.astype(str).to_numpy() if "host" in steps else np.full(len(steps), "")
    keys = pd.unique(pd.Series(hosts + "|" + np.asarray(steps.index).astype(str)))
    return pd.Index(keys, name="step")


def step_matrix(op_steps: pd.DataFrame, steps: pd.Index) -> pd.DataFrame:
    """Each op's self time (us) in each host step (columns: ``steps``, :func:`host_steps`),
    keyed as :func:`.op_matching.op_rows` keys ops; empty when no op time lies in the
    steps."""
    if not len(op_steps) or not len(steps):
        return pd.DataFrame(columns=steps, dtype=float)
    xla = op_steps.program_id.to_numpy() >= 0
    key = np.where(xla, "xla|" + op_steps.program_id.astype(str) + "|" + op_steps.op.astype(str),
                   "tf|" + op_steps.side.astype(str) + "|" + op_steps.op.astype(str))
    step = op_steps.host.astype(str) + "|" + op_steps.step.astype(str)
    frame = pd.DataFrame({"key": key, "step": step.to_numpy(),
                          "us": op_steps.self_ps.to_numpy(dtype=float) / 1e6})
    wide = frame.pivot_table(index="key", columns="step", values="us", aggfunc="sum",
                             fill_value=0.0)
    return wide.reindex(columns=steps, fill_value=0.0).fillna(0.0)


def _values(rows: pd.DataFrame, matrix: pd.DataFrame, n_steps: int) -> tuple[dict, dict]:
    """({key: per-step values}, {key: total / steps}) of one run's ops (the totals of every
    op: a pair one of whose ops has no time per step compares totals on both sides)."""
    per_step = {k: matrix.loc[k].to_numpy(dtype=float) for k in rows.key if k in matrix.index}
    flat = {k: t / max(n_steps, 1) for k, t in zip(rows.key, rows.total_us)}  # (no steps:
    # the profile as one step, its total, as the kernels' table counts it)
    return per_step, flat


def _side(x: dict, flat: dict, key: str, n_steps: int, other_has: bool):
    """(value, per-step values or None, how) of one side of a pair ('' key: the op is not
    in this run: zero in each of its steps)."""
    if not key:
        return 0.0, (np.zeros(n_steps) if other_has else None), MEDIAN
    if key in x:
        return float(np.median(x[key])) if len(x[key]) else 0.0, x[key], MEDIAN
    return float(flat.get(key, np.nan)), None, TOTAL


def _band(interval, a_steps, b_steps, confidence: float):
    if interval is None or a_steps is None or b_steps is None:
        return np.nan, np.nan
    try:
        return interval(a_steps, b_steps, confidence)
    except ValueError:
        return np.nan, np.nan


def _noise(low: float, high: float, how: str, floor_us: float, steps: bool = True) -> str:
    """The verdict on one op's change; ``steps``: whether the runs have steps (without, the
    values compared are the runs' totals)."""
    if how == TOTAL:
        return "no band: total / steps (no time per step)" if steps else \
            "no band: the runs' totals (no steps)"
    if low != low:
        return "no band: too few steps"
    if low > floor_us or high < -floor_us:
        return "beyond noise"
    return NEGLIGIBLE if low > 0 or high < 0 else "within noise"


def _program(info) -> str:
    """An XLA op's program as the op profile names it, ``jit_dot(12)`` (its new run's, where
    it ran in both: programs of one name are told apart by their ids); "" for TensorFlow
    ops."""
    return f"{info.module}({info.program_id})" if info.kind == "xla" and info.module else ""


def op_changes(rows_a: pd.DataFrame, rows_b: pd.DataFrame, pairs: pd.DataFrame,
               matrices: tuple, n_steps: tuple, step_ms: tuple, interval=None) -> pd.DataFrame:
    """CHANGE_COLUMNS (index: host_or_device, operation; times in us per step): each pair of
    ``pairs`` (:func:`.op_matching.match_ops`) with both runs' values, delta, band and share
    of the step-time change (``step_ms``: both runs' median steps), the largest changes
    first; ``interval(base, new, confidence)``: the band's (None: no bands)."""
    base_ms, new_ms = step_ms
    step_delta_ms = new_ms - base_ms if base_ms is not None and new_ms is not None else None
    floor_us = NEGLIGIBLE_STEP_PCT / 100 * base_ms * 1e3 if base_ms else 0.0
    info_a, info_b = rows_a.set_index("key"), rows_b.set_index("key")
    (xa, fa), (xb, fb) = (_values(r, m, n) for r, m, n in zip((rows_a, rows_b), matrices,
                                                               n_steps))
    sides = []
    for a_key, b_key in zip(pairs.a_key, pairs.b_key):
        a = _side(xa, fa, a_key, n_steps[0], bool(b_key) and b_key in xb)
        b = _side(xb, fb, b_key, n_steps[1], bool(a_key) and a_key in xa)
        sides.append((a, b))
    banded = sum(1 for a, b in sides if a[1] is not None and b[1] is not None)
    confidence = 1 - (1 - FAMILY_CONFIDENCE) / max(banded, 1)
    out = []
    for (a_key, b_key, how), (a, b) in zip(pairs[["a_key", "b_key", "matched_by"]]
                                           .itertuples(index=False), sides):
        info = info_b.loc[b_key] if b_key else info_a.loc[a_key]
        low, high = _band(interval, a[1], b[1], confidence)
        per = TOTAL if TOTAL in (a[2], b[2]) else MEDIAN
        if per == TOTAL:  # (one side has no time per step: both compare totals / steps)
            a = (float(fa.get(a_key, np.nan)) if a_key else 0.0,) + a[1:]
            b = (float(fb.get(b_key, np.nan)) if b_key else 0.0,) + b[1:]
        out.append({"host_or_device": info.side, "operation": info.op, "kind": info.kind,
                    "program": info.module_key, "program_name": _program(info),
                    "a_op": info_a.op.get(a_key, "") if a_key else "",
                    "b_op": info.op if b_key else "", "category": info.category,
                    "matched_by": how, "a": a[0], "b": b[0], "delta": b[0] - a[0],
                    "band_low": low if per == MEDIAN else np.nan,
                    "band_high": high if per == MEDIAN else np.nan,
                    "noise": _noise(low, high, per, floor_us, any(n_steps)),
                    "per_step": per})
    table = pd.DataFrame(out, columns=[c for c in CHANGE_COLUMNS if c not in
                                       ("ratio", "share_pct")])
    table["ratio"] = table.b / table.a.where(table.a != 0)
    table["share_pct"] = 100 * table.delta / (step_delta_ms * 1e3) if step_delta_ms else np.nan
    table = table.iloc[np.argsort(-table.delta.abs().to_numpy(), kind="stable")]
    table = table[CHANGE_COLUMNS].set_index(["host_or_device", "operation"])
    table.attrs["floor_us"] = floor_us
    return table


def explained(ops: pd.DataFrame, step_delta_ms: float | None,
              xla_cpu: bool = False) -> dict:
    """``side`` (the ops that explain the steps: "Device" where a run has device ops, else
    "Host"), ``step_ms`` (the medians' change), ``explained_ms`` (the sum of that side's op
    deltas) and ``unexplained_ms`` (the rest): explained + unexplained = step change."""
    sides = set(ops.index.get_level_values(0)) if len(ops) else set()
    side = "Device" if "Device" in sides else "Host"
    mine = ops[ops.index.get_level_values(0) == side] if len(ops) else ops
    total = float(np.nansum(mine.delta.to_numpy(dtype=float))) / 1e3 if len(mine) else 0.0
    # (how many of those deltas are of totals / steps, not of medians: the words say so)
    basis = {"ops": len(mine), "totals": int((mine.per_step == TOTAL).sum()) if len(mine)
             else 0,
             # (XLA on the CPU: XProf's op stats call its ops device ops, its step
             # breakdown their time host compute: the words name them for what they are)
             "words": "the XLA:CPU ops'" if xla_cpu and side == "Device"
             else f"the {side.lower()} ops'"}
    if step_delta_ms is None:
        return {"side": side, "step_ms": None, "explained_ms": total, "unexplained_ms": None,
                **basis}
    return {"side": side, "step_ms": step_delta_ms, "explained_ms": total,
            "unexplained_ms": step_delta_ms - total, **basis}


def ops_time_words(ex: dict) -> str:
    """What the explained part sums, in words: "the device ops' medians", or where some ops'
    times per step are totals over the steps (their events could not be placed in steps)
    "the device ops' times per step (210 of 215 are totals / steps, not medians)"."""
    whose = ex.get("words") or f"the {ex['side'].lower()} ops'"
    if not ex.get("totals"):
        return f"{whose} medians"
    if ex["totals"] == ex["ops"]:
        return f"{whose} totals / steps (no op's time per step is known)"
    return (f"{whose} times per step ({ex['totals']} of {ex['ops']} are totals / "
            "steps, not medians)")
