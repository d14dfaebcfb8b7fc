"""GPU time accounting: where each device (and each of its streams) is busy, and why it idles.

Per host (:func:`host_gpu_time`, next to the host's steps), every step window of every device
(overlapping steps cut where the next begins, so that no time counts twice) is cut into parts
that add up to the window exactly (integer picoseconds), by priority:

1. ``busy``: a kernel runs (compute or collective, any stream of the device; for a stream's row,
   a kernel of that stream);
2. ``sync_memcpy``: a copy or memset runs on the device, or the host blocks on the device
   (``*Synchronize``, blocking copies, ``block_until_ready``);
3. ``input``: a longer gap whose next kernel was launched only after the device went idle,
   while the host waited for input (``IteratorGetNext``, host-to-device transfers, infeed): a
   short gap, or one whose next kernel was already queued, is never input;
4. ``launch_bound``: a gap of at most ``LAUNCH_GAP_US`` between two kernels (launch overhead);
5. ``host_bound``: the rest of the longer gaps whose next kernel was launched only after the
   device went idle (the host was computing, or running Python, between launches), and the
   time after the device's last kernel (the host launched nothing more);
6. ``other``: the rest (the next kernel was queued but waited: dependencies, events; or no
   launch is recorded).

A TPU's ops are not launched one by one by the host: its gaps are never launch gaps or late
launches (hence never input either), only ``other``.

A host without steps has one window per device, its active span from its first to its last
activity (step -1, ``PROFILE_WINDOW``; the span its duty cycle divides by).  A host with
steps gives each device one more row, step -2 (``OUTSIDE_STEPS``), for its time outside every
step: from its first to its last activity, less the steps' windows (a device whose kernels all
ran outside the steps shows them there, and idles through the steps with no cause but
``other``).  The combined
tables (``gpu_utilization``, ``gpu_overlap``, ``launch_latency``, ``duty_cycle``) are built in
:mod:`.utilization`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...constants import TPU_PLANE_PREFIX
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis, parts_dict
from ..trace.intervals import EMPTY, Intervals, intersect, measure_in, subtract, union, union_of
from .activity import (COLLECTIVE, COMPUTE, COPY, NO_LAUNCH, DeviceActivity,
                           device_activity, host_waits, stream_names, tpu_module_spans)
from .launch_latency import launch_tables

__all__ = ["ALL_STREAMS", "ANALYSES", "CAUSE_COLUMNS", "LAUNCH_GAP_US", "OUTSIDE_STEPS",
           "OVERLAP_COLUMNS", "PROFILE_WINDOW", "UTILIZATION_COLUMNS", "GpuTimePart",
           "concat_parts", "cut_step_windows", "empty_overlap", "empty_utilization", "has_steps",
           "host_gpu_time", "step_rows", "the_steps"]

LAUNCH_GAP_US = 10.0
ALL_STREAMS = "all"  # the stream of a device's own row (busy: any stream computes)
PROFILE_WINDOW = -1  # the step of the rows of a host without steps: the device's active span
OUTSIDE_STEPS = -2  # the step of a device's rows for its time outside every step
CAUSE_COLUMNS = ["sync_memcpy_us", "input_us", "launch_bound_us", "host_bound_us", "other_us"]
UTILIZATION_COLUMNS = ["host", "device", "stream", "step", "start_us", "wall_us", "busy_us",
                       *CAUSE_COLUMNS, "idle_us", "busy_pct", "kernels", "first_start_us",
                       "last_end_us"]
OVERLAP_COLUMNS = ["host", "device", "step", "start_us", "wall_us", "compute_us",
                   "collective_us", "hidden_us", "exposed_us", "hidden_pct"]


@dataclass
class GpuTimePart:
    """One host's share of every GPU-time table (times on the profile's axis)."""

    utilization: pd.DataFrame
    overlap: pd.DataFrame
    devices: pd.DataFrame  # per device: kernels, small kernels, busy and span (duty cycle)
    launch: dict  # per_kernel, histogram, outliers, queue (see :mod:`.launch_latency`)
    reasons: list


def cut_step_windows(steps: pd.DataFrame, shift_ps: int = 0):
    """(step numbers, w0, w1) of the host's step windows in host ps, each cut where the next
    begins: steps inferred over several devices overlap (a TPU still ends step 7 as another
    begins step 8), and the time they share is counted once, in the later step."""
    w0 = np.rint(steps.start_us.to_numpy() * 1e6).astype(np.int64) - shift_ps
    w1 = w0 + np.rint(steps.duration_ms.to_numpy() * 1e9).astype(np.int64)
    order = np.argsort(w0, kind="stable")
    nxt = np.full(len(w0), np.iinfo(np.int64).max, np.int64)
    nxt[order[:-1]] = w0[order[1:]]
    return steps.index.to_numpy(np.int64), w0, np.maximum(w0, np.minimum(w1, nxt))


def _span(dev: DeviceActivity, module: tuple | None) -> tuple[int, int]:
    """A device's active span in host ps: its first to its last activity (a TPU's XLA
    modules too), as its duty cycle counts it."""
    lo, hi = int(dev.begin.min()), int(dev.end.max())
    if module is not None:
        lo, hi = min(lo, module[0]), max(hi, module[1])
    return lo, hi


def _span_window(dev: DeviceActivity, module: tuple | None):
    """The one window (step PROFILE_WINDOW) of a device on a host without steps."""
    lo, hi = _span(dev, module)
    return (np.array([PROFILE_WINDOW], np.int64), np.array([lo], np.int64),
            np.array([hi], np.int64))


def _segments(begin: np.ndarray, end: np.ndarray, launch: np.ndarray):
    """Busy segments of kernels sorted by begin, with the launch of each segment's first
    kernel."""
    keep = end > begin
    begin, end, launch = begin[keep], end[keep], launch[keep]
    if not len(begin):
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    seg_b, seg_e = union(begin, end)
    return seg_b, seg_e, launch[np.searchsorted(begin, seg_b, "left")]


def _gap_sets(seg, lo: int, hi: int, steps: Intervals) -> tuple[Intervals, Intervals]:
    """(launch-bound gaps, host-bound gaps) between busy segments within [lo, hi); the time
    after the last segment is host-bound where that segment ends inside one of ``steps``'
    windows (the step went on with nothing launched; a device whose kernels all ran outside
    the steps idles through them with no cause)."""
    seg_b, seg_e, seg_launch = seg
    gb = np.concatenate([[lo], seg_e])
    ge = np.concatenate([seg_b, [hi]])
    nxt = np.concatenate([seg_launch, [NO_LAUNCH]])
    interior = np.ones(len(gb), dtype=bool)
    interior[0] = interior[-1] = False
    short = interior & (ge - gb <= int(LAUNCH_GAP_US * 1e6))
    late = ~short & (nxt != NO_LAUNCH) & (nxt >= gb)
    if len(seg_e) and np.any((steps[0] <= seg_e[-1]) & (seg_e[-1] < steps[1])):
        late[-1] = True  # (after the device's last kernel, in a step: nothing launched)
    return union(gb[short], ge[short]), union(gb[late], ge[late])


def _cause_sets(kernels: DeviceActivity, copies: Intervals, waits: dict, lo: int, hi: int,
                launched: bool = True, steps: Intervals = EMPTY) -> dict[str, Intervals]:
    """Busy and each idle cause as disjoint interval sets covering [lo, hi) (widened to the
    kernels); without ``launched`` (a TPU: its ops are not launched one by one by the host)
    no gap is a launch gap or a late launch."""
    seg = _segments(kernels.begin, kernels.end, kernels.launch)
    if len(seg[0]):
        lo, hi = min(lo, int(seg[0][0])), max(hi, int(seg[1][-1]))
    busy = (seg[0], seg[1])
    launch_gaps, host_gaps = _gap_sets(seg, lo, hi, steps) if launched else (EMPTY, EMPTY)
    sets = {"busy_us": busy}
    taken = busy
    # input: the late gaps (see _gap_sets) while the host waits for input, so a short gap
    # between kernels, or one whose next kernel was already queued, is never input
    for key, candidate in (("sync_memcpy_us", copies), ("sync_host", waits["sync"]),
                           ("input_us", intersect(waits["input"], host_gaps)),
                           ("launch_bound_us", launch_gaps), ("host_bound_us", host_gaps)):
        part = subtract(candidate, taken)
        sets[key] = part
        taken = union_of(taken, part)
    sets["other_us"] = subtract((np.array([lo], np.int64), np.array([hi], np.int64)), taken)
    return sets


def _account(kernels: DeviceActivity, copies: Intervals, waits: dict, windows,
             launched: bool = True, steps: Intervals = EMPTY) -> dict:
    """Per window: wall, busy and each cause in us, kernels, first start and last end
    (``steps``: the step windows, see :func:`_gap_sets`)."""
    _, w0, w1 = windows
    sets = _cause_sets(kernels, copies, waits, int(w0.min()), int(w1.max()), launched, steps)
    out = {k: measure_in(v, w0, w1) for k, v in sets.items()}
    out["sync_memcpy_us"] = out["sync_memcpy_us"] + out.pop("sync_host")
    out = {k: v / 1e6 for k, v in out.items()}
    out["wall_us"] = (w1 - w0) / 1e6
    out.update(_extent(kernels.begin, sets["busy_us"], w0, w1))
    return out


def _extent(begin: np.ndarray, busy: Intervals, w0, w1) -> dict:
    """Kernels starting in each window, and the first start / last end of busy time in it
    (ps as float, NaN: none); ``begin`` sorted."""
    count = np.searchsorted(begin, w1, "left") - np.searchsorted(begin, w0, "left")
    seg_b, seg_e = busy
    n = len(seg_b)
    if not n:
        none = np.full(len(w0), np.nan)
        return {"kernels": count, "first_ps": none, "last_ps": none}
    k0 = np.minimum(np.searchsorted(seg_e, w0, "right"), n - 1)
    k1 = np.maximum(np.searchsorted(seg_b, w1, "left") - 1, 0)
    has0 = (seg_e[k0] > w0) & (seg_b[k0] < w1)
    has1 = (seg_b[k1] < w1) & (seg_e[k1] > w0)
    first = np.where(has0, np.maximum(seg_b[k0], w0), np.nan)
    last = np.where(has1, np.minimum(seg_e[k1], w1), np.nan)
    return {"kernels": count, "first_ps": first, "last_ps": last}


def _outside(dev: DeviceActivity, windows, module: tuple | None) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """(begins, ends) ps of a device's time outside every step window: from its first to its
    last activity (its duty cycle's span: a TPU's XLA modules too), less the windows (none
    for the profile window)."""
    steps, w0, w1 = windows
    if not len(dev) or (steps == PROFILE_WINDOW).all():
        return np.empty(0, np.int64), np.empty(0, np.int64)
    lo, hi = _span(dev, module)
    return subtract((np.array([lo], np.int64), np.array([hi], np.int64)), union(w0, w1))


def _with_outside(windows, outside) -> tuple:
    """The step windows followed by the parts outside them (step OUTSIDE_STEPS)."""
    steps, w0, w1 = windows
    o0, o1 = outside
    return (np.concatenate([steps, np.full(len(o0), OUTSIDE_STEPS, np.int64)]),
            np.concatenate([w0, o0]), np.concatenate([w1, o1]))


def _one_outside_row(values: dict, n_steps: int) -> dict:
    """Per-window values with the outside parts (after the first ``n_steps``) summed into
    one row (first and last activity: the earliest and latest of the parts)."""
    out = {}
    for key, v in values.items():
        v = np.asarray(v)
        rest = v[n_steps:]
        if key == "first_ps":
            one = np.nanmin(rest) if np.isfinite(rest).any() else np.nan
        elif key == "last_ps":
            one = np.nanmax(rest) if np.isfinite(rest).any() else np.nan
        else:
            one = rest.sum()
        out[key] = np.concatenate([v[:n_steps], [one]]) if len(rest) else v
    return out


def _overlap(act: DeviceActivity, windows) -> dict:
    """Per window: compute, collective, hidden and exposed collective time (us)."""
    _, w0, w1 = windows
    compute = act.intervals(act.kind == COMPUTE)
    collective = act.intervals(act.kind == COLLECTIVE)
    hidden = intersect(collective, compute)
    exposed = subtract(collective, compute)
    return {k: measure_in(v, w0, w1) / 1e6 for k, v in
            (("compute_us", compute), ("collective_us", collective), ("hidden_us", hidden),
             ("exposed_us", exposed))}


def _rows(host: str, device: str, stream: str, windows, values: dict, shift_ps: int) -> dict:
    """Columns (arrays) of one device's or stream's rows, one per window."""
    steps, w0, _ = windows
    n = len(steps)
    return {"host": np.full(n, host, dtype=object), "device": np.full(n, device, dtype=object),
            "stream": np.full(n, stream, dtype=object), "step": steps,
            "start_us": (w0 + shift_ps) / 1e6, **values}


def _stack(rows: list[dict]) -> pd.DataFrame:
    """One DataFrame from column dicts with the same keys."""
    return pd.DataFrame({k: np.concatenate([r[k] for r in rows]) for k in rows[0]})


def _device_tables(hd, act, waits, windows, shift_ps, plane: int, module: tuple | None):
    """Utilization rows (the device, then each stream) and overlap rows of one device, as
    column dicts (``module``: a TPU's XLA modules' span, part of its active span)."""
    dev = act.of_device(plane)
    name = hd.plane_names[plane]
    copies = dev.intervals(dev.kind == COPY)
    kernels = dev.take(dev.kind != COPY)
    launched = not name.startswith(TPU_PLANE_PREFIX)
    parts = _with_outside(windows, _outside(dev, windows, module))  # steps, then outside
    shown = (parts[0][:len(windows[0]) + 1], parts[1][:len(windows[0]) + 1], None)
    steps = (windows[1], windows[2])
    whole = _one_outside_row(_account(kernels, copies, waits, parts, launched, steps),
                             len(windows[0]))
    rows = [_rows(hd.name, name, ALL_STREAMS, shown, whole, shift_ps)]
    names = stream_names(hd)
    for stream in np.unique(dev.stream).tolist():
        mine = kernels.take(kernels.stream == stream)
        # (a stream running every kernel of its device accounts as the device does)
        values = whole if mine is kernels else _one_outside_row(
            _account(mine, copies, waits, parts, launched, steps), len(windows[0]))
        rows.append(_rows(hd.name, name, names[stream], shown, values, shift_ps))
    overlap = _rows(hd.name, name, ALL_STREAMS, windows, _overlap(dev, windows), shift_ps)
    del overlap["stream"]
    return rows, overlap


def step_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a utilization table over steps (or the profile window), without the rows
    of time outside every step."""
    return table[table.step != OUTSIDE_STEPS] if len(table) else table


def has_steps(table: pd.DataFrame) -> bool:
    """Whether a utilization table's rows are over steps (else over each device's active
    span: the profile has no steps)."""
    return bool(len(table)) and bool((table.step >= 0).any())


def the_steps(table: pd.DataFrame) -> str:
    """A utilization table's steps in words: "the step" where it has one, else "the
    steps"."""
    return "the step" if table.step[table.step >= 0].nunique() == 1 else "the steps"


def empty_utilization() -> pd.DataFrame:
    """The utilization table without rows."""
    text = ("host", "device", "stream")
    return pd.DataFrame({c: np.empty(0, object if c in text else
                                     "int64" if c in ("step", "kernels") else "float64")
                         for c in UTILIZATION_COLUMNS})  # (numpy arrays: 8x faster than Series)


def empty_overlap() -> pd.DataFrame:
    """The overlap table without rows."""
    return pd.DataFrame({c: np.empty(0, object if c in ("host", "device") else
                                     "int64" if c == "step" else "float64")
                         for c in OVERLAP_COLUMNS})


def _finish(table: pd.DataFrame, shift_ps: int) -> pd.DataFrame:
    """Times in us on the profile axis, idle and busy share; columns in order."""
    for col, src in (("first_start_us", "first_ps"), ("last_end_us", "last_ps")):
        table[col] = (table.pop(src).to_numpy(float) + shift_ps) / 1e6
    table["idle_us"] = table[CAUSE_COLUMNS].sum(axis=1)
    table["busy_pct"] = np.divide(100 * table.busy_us, table.wall_us,
                                  out=np.zeros(len(table)), where=table.wall_us > 0)
    return table[UTILIZATION_COLUMNS]


def _device_summary(hd: HostData, act: DeviceActivity, shift_ps: int,
                    modules: dict) -> pd.DataFrame:
    """Per device: kernels, kernels under 10 us, copies, busy and collective time (each
    counted once) and span over the profile (``modules``: :func:`tpu_module_spans`' of the host)."""
    rows = []
    for plane in np.unique(act.device).tolist():
        dev = act.of_device(plane)
        kern = dev.kind != COPY
        busy = dev.intervals(kern)
        lo, hi = _span(dev, modules.get(plane))
        dur = dev.end[kern] - dev.begin[kern]
        rows.append({"host": hd.name, "device": hd.plane_names[plane],
                     "kernels": int(kern.sum()),
                     "kernels_under_10us": int((dur < 10_000_000).sum()),
                     "copies": int((~kern).sum()),
                     "launches_linked": int((dev.launch != NO_LAUNCH).sum()),
                     "busy_us": float(_measure(busy)),
                     "collective_us": float(_measure(dev.intervals(dev.kind == COLLECTIVE))),
                     "span_us": (hi - lo) / 1e6, "first_us": (lo + shift_ps) / 1e6})
    return pd.DataFrame(rows, columns=["host", "device", "kernels", "kernels_under_10us",
                                       "copies", "launches_linked", "busy_us", "collective_us",
                                       "span_us", "first_us"])


def _measure(intervals: tuple) -> float:
    """Microseconds covered by merged ``intervals`` (begins, ends) in ps."""
    return (intervals[1] - intervals[0]).sum() / 1e6


def concat_parts(frames: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    """The hosts' non-empty tables one after the other, else ``empty``."""
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else empty


def host_gpu_time(hd: HostData, shift_ps: int = 0, steps: pd.DataFrame | None = None,
                  launch_links: pd.DataFrame | None = None) -> GpuTimePart:
    """The GPU-time tables of one host (see the module doc); ``steps``: its step table;
    ``launch_links``: its launch-kernel pairs (found here when not given)."""
    links = None if launch_links is None else \
        (launch_links.launch_event.to_numpy(), launch_links.kernel_event.to_numpy())
    act = device_activity(hd, links)
    has_steps = steps is not None and len(steps) > 0
    reasons = [] if has_steps else [
        f"{hd.name}: no steps: one row per device for its active span (step -1)"]
    if launch_links is not None:
        reasons += launch_links.attrs.get("reasons", [])
    modules = tpu_module_spans(hd)  # (part of each TPU's active span: its duty cycle's)
    if not len(act):
        return GpuTimePart(empty_utilization(), empty_overlap(),
                           _device_summary(hd, act, 0, modules),
                           launch_tables(hd, act, shift_ps), [])
    step_windows = cut_step_windows(steps, shift_ps) if has_steps else None
    waits = host_waits(hd)
    util, overlap = [], []
    for plane in np.unique(act.device).tolist():
        windows = step_windows if has_steps else \
            _span_window(act.of_device(plane), modules.get(plane))
        rows, ov = _device_tables(hd, act, waits, windows, shift_ps, plane, modules.get(plane))
        ov["wall_us"] = (windows[2] - windows[1]) / 1e6
        util.extend(rows)
        overlap.append(ov)
    ov = _stack(overlap)
    ov["hidden_pct"] = np.divide(100 * ov.hidden_us, ov.collective_us,
                                 out=np.zeros(len(ov)), where=ov.collective_us > 0)
    return GpuTimePart(_finish(_stack(util), shift_ps),
                       ov[OVERLAP_COLUMNS], _device_summary(hd, act, shift_ps, modules),
                       launch_tables(hd, act, shift_ps), reasons)


ANALYSES = (Analysis("gpu_time", host=host_gpu_time, combine=parts_dict,
                     host_needs=("steps", "launch_links"), host_cost=2.0),)
