"""``prof.critical_path_summary``: the critical path's time per category and per op, and the
overview's sentence, from the path's rows only.

One row per category (``level`` "category") and per op (``level`` "op": category, name and
resource of ``event``/``wait`` segments; idle segments per resource): ``duration_us`` on the
paths of all steps, ``share`` of the steps' total time, ``steps`` in which it is on the path,
and, for categories, ``resource``: where most of that category's time is.  Sorted by level,
then by time.  ``attrs["sentence"]``: what bounds the steps, e.g. "The steps are bound by 62%
device compute on /device:GPU:0, 21% host compute between launches on /host:CPU, 9% idle".
"""

from __future__ import annotations

import pandas as pd

from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "SUMMARY_COLUMNS", "critical_path_summary", "bound_sentence"]

SUMMARY_COLUMNS = ["level", "category", "name", "resource", "duration_us", "share", "steps"]
_WORDS = {"device_compute": "device compute", "device_collectives": "collectives",
          "device_to_device": "device-to-device copies", "input": "input",
          "output": "device-to-host output", "kernel_launch": "kernel launches",
          "host_compute": "host compute (Python and framework code)",
          "host_wait": "host waits after the device finished", "compilation": "compilation",
          "idle": "idle"}


def _plane(resource: str) -> str:
    return str(resource).split(" / ", 1)[0]


def critical_path_summary(critical_path: pd.DataFrame) -> pd.DataFrame:
    """The summary table (see module doc) of ``prof.critical_path``."""
    cp = critical_path
    if cp.empty:
        out = pd.DataFrame({c: pd.Series(dtype=object) for c in SUMMARY_COLUMNS})
        out.attrs["sentence"] = ""
        return out
    total = cp.groupby(["host", "step"]).duration_us.sum().sum()
    cp, values = _coded(cp, ("category", "name", "resource"))
    planes = pd.Series([_plane(r) for r in values["resource"]], dtype=cp.host.dtype)
    plane_of, values["plane"] = pd.factorize(planes, sort=True)  # (each resource's once)
    cp = cp.assign(step_key=cp.groupby(["host", "step"], sort=False).ngroup().to_numpy(),
                   plane=plane_of[cp.resource.to_numpy()])
    by_res = _decoded(cp.groupby(["category", "plane"]).duration_us.sum().reset_index()
                      .sort_values("duration_us", ascending=False, kind="stable")
                      .drop_duplicates("category"), values)
    cats = cp.groupby("category").agg(duration_us=("duration_us", "sum"),
                                      steps=("step_key", "nunique")).reset_index()
    cats = _decoded(cats, values).merge(
        by_res[["category", "plane"]].rename(columns={"plane": "resource"}), on="category")
    cats.insert(0, "level", "category")
    cats["name"] = cats.category
    ops = _decoded(cp.groupby(["category", "name", "resource"]).agg(
        duration_us=("duration_us", "sum"), steps=("step_key", "nunique")).reset_index(),
        values)
    ops.insert(0, "level", "op")
    out = pd.concat([c.sort_values("duration_us", ascending=False, kind="stable")
                     for c in (cats, ops)], ignore_index=True)
    out["share"] = out.duration_us / total if total > 0 else 0.0
    out = out[SUMMARY_COLUMNS]
    out.attrs["sentence"] = bound_sentence(out)
    return out


def _coded(cp: pd.DataFrame, columns) -> tuple[pd.DataFrame, dict]:
    """``cp`` with each text column of ``columns`` as its code among its distinct values,
    sorted (a groupby on the codes orders and sums its groups as on the text, and faster),
    and those values (see :func:`_decoded`)."""
    codes, values = {}, {}
    for c in columns:
        codes[c], values[c] = pd.factorize(cp[c], sort=True)
        if (codes[c] < 0).any():  # (a missing value: groupby leaves it out, a code would not)
            raise ValueError(f"critical path rows without a {c}")
    return cp.assign(**codes), values


def _decoded(frame: pd.DataFrame, values: dict) -> pd.DataFrame:
    """``frame`` with its coded columns as their values again."""
    return frame.assign(**{c: values[c].take(frame[c].to_numpy()) for c in values
                           if c in frame})


def bound_sentence(summary: pd.DataFrame, top: int = 4) -> str:
    """What bounds the steps: the largest categories' shares of the path and their place."""
    cats = summary[summary.level == "category"].head(top)
    cats = cats[cats.share >= 0.005]
    if cats.empty:
        return ""
    parts = []
    for row in cats.itertuples():
        where = "" if row.category == "idle" else f" on {row.resource}"
        parts.append(f"{row.share * 100:.0f}% {_WORDS.get(row.category, row.category)}{where}")
    return "The steps are bound by " + ", ".join(parts) + " (their critical paths)."


def _combine(parts: dict, critical_path: pd.DataFrame) -> pd.DataFrame:
    return critical_path_summary(critical_path)


ANALYSES = (Analysis("critical_path_summary", combine=_combine,
                     needs=("critical_path",)),)
