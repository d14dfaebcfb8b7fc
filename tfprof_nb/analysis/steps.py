"""Steps and the step-time breakdown (the overview page's step-time graph).

Follows the reference converters: events are grouped into steps (``grouping``), each step
event gets a type, and within each step every instant counts for the highest-priority type
active then; the untraced rest is "other".  CPU-only hosts use host events; hosts with GPUs
use device events.  Deliberate differences, each visible in the result:

* profiles without step markers (Keras 3 ``fit``, plain loops) get steps inferred from the
  repeated top-level ``tf.function`` call; ``source`` says so (the reference finds none);
* GPU copies named ``MemcpyH2D``/``MemcpyD2H``/``MemcpyD2D`` (CUPTI's names) count as input,
  output and device-to-device (the reference only matches ``MemcpyHToD``-style names and counts
  them as compute).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ._sweep import N_TYPES, breakdown
from .grouping import HOST_PLANE, Grouping, group_events
from .host_events import HostEvents, host_events

__all__ = ["STEP_COLUMNS", "host_steps", "steps_table"]

# Event types by priority (higher wins when events overlap).
(UNKNOWN, HOST_COMPUTE, HOST_COMPILE, HOST_TO_HOST, HOST_TO_DEVICE, HOST_PREPARE,
 DEVICE_COLLECTIVES, HOST_WAIT_INPUT, DEVICE_TO_DEVICE, DEVICE_TO_HOST, DEVICE_COMPUTE_32,
 DEVICE_COMPUTE_16, DEVICE_WAIT_DEVICE, DEVICE_WAIT_HOST) = range(14)
assert N_TYPES >= 14

STEP_COLUMNS = ["host", "step_name", "group_id", "source", "start_us", "duration_ms",
                "device_compute_ms", "device_compute_16_ms", "device_compute_32_ms",
                "device_to_device_ms", "device_collectives_ms", "host_compute_ms",
                "kernel_launch_ms", "input_ms", "output_ms", "compilation_ms", "other_ms",
                "host_to_host_ms", "host_to_device_ms"]
_DROP_EDGE_STEPS_ABOVE = 5
_NOT_COMPUTE = ("EagerExecute", "EagerLocalExecute", "EagerKernelExecute", "FunctionRun")
_FUNCTION_CALL = re.compile(r"^EagerLocalExecute: __inference_")
_STEPS_LINE_ID = 0xDEADBEEF


def _explicit_marker(names: pd.Series) -> np.ndarray:
    return (names.str.startswith(("train", "test", "TraceContext"))
            & ~names.str.contains("/", regex=False)).to_numpy()


def _classify_host(names: pd.Series) -> np.ndarray:
    lower = names.str.lower()
    no_colon = ~names.str.contains(":", regex=False)
    op_type = names.str.partition(":")[2] if len(names) else names
    kind = np.full(len(names), HOST_COMPUTE, dtype=np.int64)
    wait_input = lower.str.startswith("iteratorgetnext").to_numpy()
    h2h = (no_colon & lower.str.startswith("memcpyhtoh")).to_numpy()
    h2d = ((no_colon & lower.str.startswith("memcpyhtod"))
           | (~no_colon & op_type.str.startswith("InfeedEnqueue"))).to_numpy()
    kind[wait_input] = HOST_WAIT_INPUT
    kind[h2h] = HOST_TO_HOST
    kind[h2d] = HOST_TO_DEVICE
    return kind


def _classify_device(names: pd.Series, shapes: np.ndarray) -> np.ndarray:
    lower = names.str.lower()
    no_colon = ~names.str.contains(":", regex=False)
    kind = np.full(len(names), DEVICE_COMPUTE_32, dtype=np.int64)
    shape = pd.Series(shapes, dtype=object).fillna("").astype(str)
    half = np.where(shape != "", shape.str.contains("half"),
                    lower.str.contains("half") | lower.str.contains("fp16"))
    kind[np.asarray(half, dtype=bool)] = DEVICE_COMPUTE_16
    kind[lower.str.startswith("nccl").to_numpy()] = DEVICE_COLLECTIVES
    memcpy = no_colon & lower.str.startswith("memcpy")
    for prefixes, k in ((("memcpyhtod", "memcpyh2d"), HOST_TO_DEVICE),
                        (("memcpydtoh", "memcpyd2h"), DEVICE_TO_HOST),
                        (("memcpydtod", "memcpyd2d", "memcpyp2p"), DEVICE_TO_DEVICE)):
        kind[(memcpy & lower.str.startswith(prefixes)).to_numpy()] = k
    return kind


def _infer_step_roots(hev: HostEvents, parent: np.ndarray) -> tuple[np.ndarray, str]:
    """Rows of the repeated top-level events that run a tf.function (the training step when a
    profile has no step markers), and their name."""
    calls = np.flatnonzero(
        hev.name_mask(lambda s: s.str.match(_FUNCTION_CALL).fillna(False).to_numpy())
        & hev.plane_is(HOST_PLANE))
    if not len(calls):
        return np.empty(0, np.int64), ""
    top = calls.copy()
    for _ in range(64):  # climb to the top-level event on the same line
        up = parent[top]
        moved = up >= 0
        if not moved.any():
            break
        top = np.where(moved, up, top)
    top = np.unique(top)
    stats = pd.DataFrame({"row": top, "name": hev.name_of(top),
                          "dur": hev.end[top] - hev.begin[top]})
    per_name = stats.groupby("name").agg(n=("row", "size"), total=("dur", "sum"))
    per_name = per_name[per_name.n >= 2]
    if per_name.empty:
        return np.empty(0, np.int64), ""
    best = per_name.total.idxmax()
    return stats.loc[stats.name == best, "row"].to_numpy(np.int64), str(best)


def _device_planes(hev: HostEvents) -> np.ndarray:
    return hev.plane_mask(lambda s: s.str.startswith("/device:GPU").to_numpy())


def host_steps(prof, host: str) -> pd.DataFrame:
    """The step table of one host (see :func:`steps_table`)."""
    hev = host_events(prof, host)
    if not len(hev):
        return _empty()
    on_device = _device_planes(hev)
    has_device = bool(on_device.any())
    gid, has_gid = hev.int_stat("group_id")
    if has_gid.any():  # an already-processed file: keep its groups
        group = np.where(has_gid, gid, -1)
        grouping = None
        source = "group_id"
    else:
        grouping = group_events(hev)
        group = grouping.group
        source = "markers"
    if has_device:
        table = _device_steps(hev, group, on_device)
        source = "device" if source != "group_id" else "group_id (device)"
    else:
        table = _host_steps(hev, group, grouping)
        if table.empty and grouping is not None:
            roots, name = _infer_step_roots(hev, grouping.parent)
            if len(roots) >= 2:
                grouping = group_events(hev, extra_roots=roots)
                table = _host_steps(hev, grouping.group, grouping, inferred=set(roots.tolist()))
                source = f"inferred: repeated '{name}'"
    if table.empty:
        return _empty()
    table.insert(0, "host", host)
    table["source"] = source
    return table[STEP_COLUMNS]


def _host_steps(hev: HostEvents, group: np.ndarray, grouping: Grouping | None,
                inferred: set | None = None) -> pd.DataFrame:
    host = hev.plane_is(HOST_PLANE) & (group >= 0)
    rows = np.flatnonzero(host)
    # classify each distinct name once, then look events up by name code
    names = pd.Series(hev.names, dtype=object)
    explicit = _explicit_marker(names)
    not_compute = names.str.startswith(_NOT_COMPUTE).to_numpy()
    kind_of_name = _classify_host(names)
    code = hev.name_code[rows]
    marker = explicit[code].copy()
    if grouping is not None:
        roots = grouping.groups
        named_roots = set(roots.root[~roots.implicit].tolist())
        if inferred:
            named_roots |= inferred
        is_named_root = np.zeros(len(hev), dtype=bool)
        is_named_root[list(named_roots)] = True
        marker |= is_named_root[rows]
    compute = ~not_compute[code] & ~marker
    kinds = kind_of_name[code[compute]]
    return _step_rows(hev, group, rows[marker], rows[compute], kinds, grouping,
                      well_formed=HOST_COMPUTE)


def _device_steps(hev: HostEvents, group: np.ndarray, on_device: np.ndarray) -> pd.DataFrame:
    corr_has = hev.has["correlation_id"]
    stream = on_device & corr_has & (group >= 0)
    markers = _device_step_markers(hev, group, on_device)
    rows = np.flatnonzero(stream)
    names = pd.Series(hev.name_of(rows), dtype=object)
    shapes = hev.strs.get("shape", np.full(len(hev), None, dtype=object))[rows] \
        if "shape" in hev.strs else np.full(len(rows), None, dtype=object)
    kinds = _classify_device(names, shapes)
    return _step_rows(hev, group, markers, rows, kinds, None,
                      well_formed=(DEVICE_COMPUTE_16, DEVICE_COMPUTE_32))


def _device_step_markers(hev: HostEvents, group: np.ndarray, on_device: np.ndarray):
    """Spans (group, begin, end) of consecutive same-group device events per GPU plane (the
    derived "Steps" line); ungrouped events belong to the group before them."""
    rows = np.flatnonzero(on_device)
    df = pd.DataFrame({"plane": hev.plane_code[rows], "begin": hev.begin[rows],
                       "end": hev.end[rows], "group": group[rows]}) \
        .sort_values(["plane", "begin"], kind="stable")
    df["group"] = df["group"].where(df["group"] >= 0).groupby(df["plane"]).ffill()
    df = df[df["group"].notna()]
    run = ((df["group"] != df["group"].shift()) | (df["plane"] != df["plane"].shift())).cumsum()
    spans = df.groupby(run).agg(group=("group", "first"), begin=("begin", "min"),
                                end=("end", "max"))
    return spans.astype(np.int64).reset_index(drop=True)


def _step_rows(hev, group, markers, event_rows, kinds, grouping, well_formed) -> pd.DataFrame:
    # step spans: the longest marker per group
    if isinstance(markers, pd.DataFrame):  # device runs, already spans
        spans = markers.copy()
    else:
        markers = np.asarray(markers, dtype=np.int64)
        spans = pd.DataFrame({"group": group[markers], "begin": hev.begin[markers],
                              "end": hev.end[markers]})
    if spans.empty:
        return _empty()
    spans["dur"] = spans.end - spans.begin
    spans = spans.sort_values(["group", "dur"], ascending=[True, False], kind="stable") \
        .drop_duplicates("group")
    spans = spans[spans.dur > 0].set_index("group").sort_index()
    if spans.empty:
        return _empty()
    ev = pd.DataFrame({"group": group[event_rows], "begin": hev.begin[event_rows],
                       "end": hev.end[event_rows], "kind": kinds})
    ev = ev[ev.group.isin(spans.index)]
    step_index = pd.Index(spans.index)
    ev["step"] = step_index.get_indexer(ev.group)
    ev = ev.sort_values("step", kind="stable")
    out = np.zeros((len(spans), N_TYPES), dtype=np.int64)
    breakdown(ev.step.to_numpy(np.int64), ev.begin.to_numpy(np.int64),
              ev.end.to_numpy(np.int64), ev.kind.to_numpy(np.int64),
              spans.begin.to_numpy(np.int64), spans.end.to_numpy(np.int64), out)
    present = np.zeros((len(spans), N_TYPES), dtype=bool)
    np.logical_or.at(present, (ev.step.to_numpy(), ev.kind.to_numpy()), True)
    wf = np.atleast_1d(well_formed)
    keep = present[:, wf].any(axis=1)
    dur = spans.dur.to_numpy()
    other = np.maximum(dur - out.sum(axis=1), 0)
    ms = out / 1e9
    table = pd.DataFrame({
        "group_id": spans.index.to_numpy(),
        "start_us": spans.begin.to_numpy() / 1e6,
        "duration_ms": dur / 1e9,
        "device_compute_ms": ms[:, DEVICE_COMPUTE_16] + ms[:, DEVICE_COMPUTE_32],
        "device_compute_16_ms": ms[:, DEVICE_COMPUTE_16],
        "device_compute_32_ms": ms[:, DEVICE_COMPUTE_32],
        "device_to_device_ms": ms[:, DEVICE_TO_DEVICE] + ms[:, DEVICE_WAIT_DEVICE],
        "device_collectives_ms": ms[:, DEVICE_COLLECTIVES],
        "host_compute_ms": ms[:, HOST_COMPUTE],
        "kernel_launch_ms": ms[:, HOST_PREPARE],
        "input_ms": ms[:, HOST_WAIT_INPUT] + ms[:, HOST_TO_DEVICE] + ms[:, DEVICE_WAIT_HOST],
        "output_ms": ms[:, DEVICE_TO_HOST],
        "compilation_ms": ms[:, HOST_COMPILE],
        "other_ms": (out[:, UNKNOWN] + other) / 1e9,
        "host_to_host_ms": ms[:, HOST_TO_HOST],
        "host_to_device_ms": ms[:, HOST_TO_DEVICE],
    })[keep]
    gid = table.group_id
    if grouping is not None:
        info = grouping.groups.reindex(gid.to_numpy())
        names = info["name"].where(info["name"].notna(), gid.astype(str).to_numpy()).to_numpy()
        steps = info["step_num"].where(info["step_num"].notna(), gid.to_numpy()).to_numpy()
    else:
        names, steps = gid.astype(str).to_numpy(), gid.to_numpy()
    table.insert(0, "step_name", names)
    table.index = pd.Index(np.asarray(steps, dtype=np.int64), name="step")
    if len(table) > _DROP_EDGE_STEPS_ABOVE:  # first and last steps are usually partial
        table = table.iloc[1:-1]
    return table


def _empty() -> pd.DataFrame:
    df = pd.DataFrame({c: pd.Series(dtype=object if c in ("host", "step_name", "source")
                                    else "float64") for c in STEP_COLUMNS})
    df["group_id"] = df["group_id"].astype("int64")
    df.index = pd.Index([], dtype="int64", name="step")
    return df


def steps_table(prof) -> pd.DataFrame:
    """One row per step and host: duration and step-time categories in ms.

    ``source`` says where the steps came from: ``markers`` (Trace/``_r`` step markers),
    ``device`` (device activity grouped by step), ``group_id`` (groups already in the file)
    or ``inferred: repeated '<name>'`` (no markers: the repeated top-level tf.function call).
    """
    parts = [host_steps(prof, h) for h in prof.hosts]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return _empty()
    return pd.concat(parts)
