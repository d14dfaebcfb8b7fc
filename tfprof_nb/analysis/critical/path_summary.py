"""``prof.critical_path_summary``: the critical path's time per category and per op, and the
overview's sentence, from the path's rows only.

One row per category (``level`` "category") and per op (``level`` "op": category, name and
resource of ``event``/``wait`` segments; idle segments per resource): ``duration_us`` on the
paths of all steps, ``share`` of the steps' total time, ``steps`` in which it is on the path,
and, for categories, ``resource``: where most of that category's time is.  Sorted by level,
then by time.  ``attrs["sentence"]``: what bounds the steps, e.g. "On their critical paths, the 20
steps are bound by 62% device compute on /device:GPU:0, 21% host compute between launches on
/host:CPU, 9% gaps with no traced event" (the path's ``idle``: not the devices' idle time the
overview shows); where devices ran during those gaps (the path's ``devices_busy_us``), the
gaps say how much of their time, as no traced event ties that work to the path:
``attrs["gap_devices_busy_share"]`` (NaN: no gap, or no device activity)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ..._native.kernels import group_sums
from ..runtime.unit import Analysis
from .distinct_codes import distinct_codes
from .text_columns import text_codes
from .walk import beside

__all__ = ["ANALYSES", "SUMMARY_COLUMNS", "TPU_PATH_NOTE", "TPU_PATH_WHY", "critical_path_summary",
           "bound_sentence", "untold_on"]

# On TPUs the dependency graph has no edge from a host's call to the program it starts (GPUs'
# launches carry a correlation id, TPU programs none) nor from a program's end to the host
# thread that waits for it, and the steps inferred from the program's executions overlap and
# end at no one event: the walk from a step's end lands on a host thread or a device by
# chance (on a TPU v6e capture, 100% host compute, 100% gaps and 100% device compute for
# three alike steps), so no sentence is made of it
TPU_PATH_WHY = ("the trace links no host call to the TPU program it runs, so a step's critical "
                "path cannot be followed between the host and the TPUs")
TPU_PATH_NOTE = (f"What bounds the steps is not told on TPUs: {TPU_PATH_WHY} (the device "
                 "figures say what the TPUs did)")

_BESIDE_MIN_ROWS = 1 << 20  # paths this long code their names on a helper thread
SUMMARY_COLUMNS = ["level", "category", "name", "resource", "duration_us", "share", "steps"]
_WORDS = {"device_compute": "device compute", "device_collectives": "collectives",
          "device_to_device": "device-to-device copies", "input": "input",
          # (the host's launch calls on the path, not the devices' launch gaps the page shows)
          "output": "device-to-host output", "kernel_launch": "kernel launch calls",
          # (not the step-time breakdown's "Host compute", XProf's ops on the host: every host
          # event of no other category, the ops and the code between them)
          "host_compute": "host work (ops, Python and framework code)",
          "host_wait": "host waits after the device finished", "compilation": "compilation",
          # (not the devices' idle time the page shows: time on the path no traced event covers)
          "idle": "gaps with no traced event"}


def _plane(resource: str) -> str:
    return str(resource).split(" / ", 1)[0]


def critical_path_summary(critical_path: pd.DataFrame) -> pd.DataFrame:
    """The summary table (see module doc) of ``prof.critical_path``."""
    cp = critical_path
    if cp.empty:
        out = pd.DataFrame({c: pd.Series(dtype=object) for c in SUMMARY_COLUMNS})
        out.attrs["sentence"] = ""
        return out
    dur = cp.duration_us.to_numpy(np.float64)
    # (a long path's names coded beside the rest)
    with beside(len(cp) >= _BESIDE_MIN_ROWS, text_codes, cp["name"]) as named:
        steps, step = _groups(_step_keys(cp))
        total = pd.Series(_sums(step, dur, len(steps))).sum()  # (as a groupby's .sum().sum())
        (cat, cats), (res, resources) = (text_codes(cp[c]) for c in ("category", "resource"))
        name, names = named()
    planes = pd.Series([_plane(r) for r in resources], dtype=cp.host.dtype)
    plane_of, plane_values = pd.factorize(planes, sort=True)  # (each resource's once)
    values = {"category": cats, "name": names, "resource": resources, "plane": plane_values}
    cats_all = cats  # (the category of each code)
    cat, name, res = (cat, len(cats)), (name, len(names)), (res, len(resources))
    per_plane = _grouped({"category": cat, "plane": (plane_of[res[0]], len(plane_values))},
                         dur).sort_values("duration_us", ascending=False, kind="stable")
    by_res = _decoded(per_plane.drop_duplicates("category"), values)
    cats = _decoded(_grouped({"category": cat}, dur, step), values).merge(
        by_res[["category", "plane"]].rename(columns={"plane": "resource"}), on="category")
    cats.insert(0, "level", "category")
    cats["name"] = cats.category
    ops = _decoded(_grouped({"category": cat, "name": name, "resource": res}, dur, step),
                   values)
    ops.insert(0, "level", "op")
    out = pd.concat([c.sort_values("duration_us", ascending=False, kind="stable")
                     for c in (cats, ops)], ignore_index=True)
    out["share"] = out.duration_us / total if total > 0 else 0.0
    out = out[SUMMARY_COLUMNS]
    out.attrs["gap_devices_busy_share"] = _gap_devices_busy(cp)
    out.attrs["planes"] = _planes_of(_decoded(per_plane, values))
    out.attrs["devices_busy_share"] = _busy_shares(cp, cat[0], cats_all)
    out.attrs["steps"] = len(steps)
    out.attrs["hosts"] = int(cp.host.nunique())
    out.attrs["sentence"] = bound_sentence(out)
    return out


_HOST_SIDE = ("host_compute", "kernel_launch", "host_wait", "input", "compilation")


def _busy_shares(cp: pd.DataFrame, code: np.ndarray, categories) -> dict:
    """{host-side category: the share of its path time in which a device ran something} (a
    host category on the path while the devices run: they were not waiting on it); ``code``:
    each row's category code into ``categories``."""
    if "devices_busy_us" not in cp:
        return {}
    busy = cp.devices_busy_us.to_numpy(np.float64)
    rows = ~np.isnan(busy) & (cp.kind != "idle").to_numpy()
    n = len(categories)
    total = np.bincount(code[rows], cp.duration_us.to_numpy(np.float64)[rows], minlength=n)
    ran = np.bincount(code[rows], busy[rows], minlength=n)
    return {str(c): float(ran[k] / total[k]) for k, c in enumerate(categories)
            if str(c) in _HOST_SIDE and total[k] > 0}


def _planes_of(per_plane: pd.DataFrame) -> dict:
    """{category: (how many planes its path time is on, the largest one's share of it)}."""
    out = {}
    for category, rows in per_plane.groupby("category", sort=False):
        total = float(rows.duration_us.sum())
        out[str(category)] = (len(rows), float(rows.duration_us.max()) / total if total > 0
                              else 1.0)
    return out


def _gap_devices_busy(cp: pd.DataFrame) -> float:
    """The share of the path's idle time in which a device ran something (NaN: no idle
    segment, or no device activity on their hosts)."""
    if "devices_busy_us" not in cp:
        return float("nan")
    idle = (cp.kind == "idle").to_numpy()
    busy = cp.devices_busy_us.to_numpy(np.float64)[idle]
    known = ~np.isnan(busy)
    gaps = float(cp.duration_us.to_numpy(np.float64)[idle][known].sum())
    return float(busy[known].sum()) / gaps if known.any() and gaps > 0 else float("nan")


def _groups(key: np.ndarray, high: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct keys ascending, int64 group of each row among them) of int64 keys in
    [0, high): linear passes where the keys are dense enough, else a sort."""
    high = int(key.max()) + 1 if high is None else high
    if high <= 4 * len(key) + (1 << 20):
        return distinct_codes(key, high)
    distinct, group = np.unique(key, return_inverse=True)
    return distinct, group.astype(np.int64, copy=False)


def _sums(group: np.ndarray, dur: np.ndarray, n_groups: int) -> np.ndarray:
    """float64 sum of ``dur`` over each group's rows, the floats pandas' groupby sum gives:
    ``np.add.reduceat`` over the runs where the groups come sorted, without NaN, and this
    pandas sums them so (3.1 does), else Kahan-compensated in row order (``group_sums``)."""
    if (len(group) and _reduceat_sorted() and (group[1:] >= group[:-1]).all()
            and not np.isnan(dur).any()):
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        out = np.zeros(n_groups, np.float64)
        out[group[starts]] = np.add.reduceat(dur, starts)
        return out
    return group_sums(group, dur, n_groups)


@functools.cache
def _reduceat_sorted() -> bool:
    """Whether this pandas sums sorted groups by ``np.add.reduceat`` (pairwise), not Kahan:
    the two differ on this group."""
    x = np.array([1.0, 1e16, 1.0, 1.0])
    return pd.Series(x).groupby(np.zeros(4, np.int64)).sum().iloc[0] == np.add.reduceat(x, [0])[0]


def _step_keys(cp: pd.DataFrame) -> np.ndarray:
    """An int64 key per row, ordered as its (host, step) (a host's steps: one key each)."""
    host, _ = text_codes(cp.host, runs=True)
    step = cp.step.to_numpy(np.int64)
    low, high = (int(step.min()), int(step.max())) if len(step) else (0, 0)
    width = high - low + 1
    if width * (int(host.max()) + 1) >= 1 << 40:
        step, width = pd.factorize(step, sort=True)[0], int(step.max()) + 1
    else:
        step = step - low
    return host * width + step


def _combined(codes: list) -> tuple[np.ndarray, int]:
    """(one int64 key per row, ordered as its tuple of ``codes``, and a bound on the keys);
    ``codes``: (int64 column, bound on its codes) each."""
    key, high = codes[0]
    for c, width in codes[1:]:
        if high * width >= 1 << 62:  # (keys made dense first)
            distinct, key = _groups(key, high)
            high = len(distinct)
        key, high = key * width + c, high * width
    return key, high


def _grouped(codes: dict, dur: np.ndarray, step=None) -> pd.DataFrame:
    """One row per distinct tuple of ``codes`` ({column: (int64 code per row, bound on the
    codes)}) ascending, as
    ``cp.groupby(columns)``: the codes, ``duration_us`` (their rows' sum) and, with ``step``
    (a dense id per step), ``steps``: the number of steps among their rows."""
    distinct, group = _groups(*_combined(list(codes.values())))
    first = np.empty(len(distinct), np.int64)
    first[group] = np.arange(len(group))  # (a row of each group: any, they share its codes)
    out = pd.DataFrame({c: v[first] for c, (v, _) in codes.items()})
    out["duration_us"] = _sums(group, dur, len(distinct))
    if step is not None:
        out["steps"] = _distinct_counts(group, len(distinct), step)
    return out


def _distinct_counts(group: np.ndarray, n_groups: int, key: np.ndarray) -> np.ndarray:
    """int64 number of distinct ``key`` values (non-negative) among each group's rows: a
    table of (group, key) pairs seen, or a sort of the pairs where that table is large."""
    width = int(key.max()) + 1
    if n_groups * width <= 1 << 26:
        seen = np.zeros(n_groups * width, bool)
        seen[group * width + key] = True
        return seen.reshape(n_groups, width).sum(axis=1, dtype=np.int64)
    pairs = np.unique(group.astype(np.int64) * width + key)
    return np.bincount(pairs // width, minlength=n_groups).astype(np.int64)


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
    busy = summary.attrs.get("gap_devices_busy_share", float("nan"))
    planes = summary.attrs.get("planes", {})
    hosts = int(summary.attrs.get("hosts", 1))
    each = "each host's " if hosts > 1 else ""  # (a plane's name is each host's own)
    for row in cats.itertuples():
        where = "" if row.category == "idle" else f" on {each}{row.resource}"
        n, top = planes.get(str(row.category), (1, 1.0))
        if row.category != "idle" and n > 1 and top < 0.95:  # (spread over several planes)
            noun = "devices" if str(row.resource).startswith("/device:") else "planes"
            where = f" on {n} {noun} ({top * 100:.0f}% of it on {each}{row.resource})"
        share = summary.attrs.get("devices_busy_share", {}).get(str(row.category))
        if share is not None and share >= 0.01:  # (host work while the devices ran)
            where += f" (a device running during {share * 100:.0f}% of it)"
        if row.category == "compilation":  # (a category XProf's step breakdown never fills)
            where += (" (events named for compiling; the step-time breakdown counts them as "
                      "host compute, XProf's rule)")
        if row.category == "idle" and not np.isnan(busy):
            share = f"{busy * 100:.0f}%" if busy >= 0.005 else "under 1%"
            where = (f" (during {share} of them a device was running, with no traced event "
                     "tying it to the path)" if busy > 0 else " (no device was running then)")
        n_steps = summary.attrs.get("steps") or 0
        in_steps = int(getattr(row, "steps", n_steps) or 0)
        few = f" in {in_steps} of the {n_steps} steps" \
            if n_steps > 1 and 0 < in_steps * 2 <= n_steps else ""  # (step 0's compile)
        parts.append(f"{row.share * 100:.0f}% {_WORDS.get(row.category, row.category)}{few}"
                     f"{where}")
    n = summary.attrs.get("steps")
    head = "On its critical path, the step is bound by " if n == 1 and hosts == 1 \
        else f"On their critical paths, the {n} steps of the {hosts} hosts are bound by " \
        if hosts > 1 else f"On their critical paths, the {n} steps are bound by "
    return head + ", ".join(parts) + "."


def untold_on(environment: dict) -> str:
    """Why no critical path is told for the profile of ``environment`` (``prof.result(
    "environment")``): :data:`TPU_PATH_NOTE` as a sentence on TPUs; "" elsewhere."""
    return TPU_PATH_NOTE + "." if environment.get("device_type") == "TPU" else ""


def _combine(parts: dict, critical_path: pd.DataFrame, environment: dict) -> pd.DataFrame:
    out = critical_path_summary(critical_path)
    out.attrs["sentence"] = untold_on(environment) or out.attrs["sentence"]
    return out


ANALYSES = (Analysis("critical_path_summary", combine=_combine,
                     needs=("critical_path", "environment")),)
