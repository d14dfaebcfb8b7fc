"""Steps and the step-time breakdown (the overview page's step-time graph).

Follows the reference converters: events are grouped into steps (``grouping``), each step
event gets a type, and within each step every instant counts for the highest-priority type
active then; the untraced rest is "other".  CPU-only hosts use host events; hosts with GPUs
use device events.  Deliberate differences, each visible in the result:

* profiles without step markers (Keras 3 ``fit``, plain loops, JAX loops, a window opened
  inside a Keras 2 batch) get steps inferred from the repeated top-level call of a compiled
  function: a ``tf.function`` (``EagerLocalExecute: __inference_...``, else the call around a
  ``FunctionRun`` that starts a group) or a jitted JAX function (``PjitFunction(f)``), each
  step lasting until the next call; a window holding a single call makes one step; ``source``
  says so.  XProf finds no step there: a ``FunctionRun`` is a root that groups the function's
  work, but only a named root or a ``train``/``test``/``TraceContext`` event in a group marks a
  step (Keras 2's ``train`` with ``_r``, tf.keras's ``TraceContext`` before TF 2.4: the same
  steps here);
* where a ``tf.function`` loops (a ``tf.while_loop``, Keras 2's ``steps_per_execution``), the
  reference makes each iteration a root (the first ``ExecutorState::Process`` of each
  ``iter_num``) and then takes no other root, so step markers lose their groups and it finds
  no step (and where TensorFlow's loop ops run unlowered, ``WhileOp-EvalCond``, ``ForOp``,
  it groups nothing); the roots here are always the marked ones (``_r``, ``TraceContext``);
* hosts with TPU TensorCores take their steps from the TPU (:mod:`.xla_steps`);
* GPU copies named ``MemcpyH2D``/``MemcpyD2H``/``MemcpyD2D`` (CUPTI's names) count as input,
  output and device-to-device (the reference only matches ``MemcpyHToD``-style names and counts
  them as compute);
* in JAX profiles, the thread-pool region in which XLA:CPU runs a step's program counts as
  that step's host compute, as it does in TensorFlow profiles (the reference leaves it out of
  JAX steps, yet turns host compute on from a region's start in an idle moment until the
  calling thread's next events end);
* a file is taken for grouped already when its events carry group ids; the reference
  takes it so when a plane merely declares the ``group_id`` stat, and then groups nothing
  (a file declaring it with no event carrying it has no step there; here it is grouped);
* a step is dropped only when the profile window cuts it (it starts before the window or
  ends after it) and the profile has more than five steps, so a capture of N marked steps
  shows N steps; the reference drops the first and the last step of any profile with more
  than five, cut or not.  Up to five, both keep every step, cut ones too (a Keras 2.x
  capture of a single ``train_function`` that the window cuts has that one step).

The per-host step (:func:`host_steps`) returns the host's rows with times relative to the
host's origin plus ``shift_us``; :func:`combine_steps` concatenates hosts.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..._native.kernels import N_TYPES, argsort, host_step_rows, nonzero, step_breakdown
from ...constants import GPU_PLANE_PREFIX
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..trace.grouping import HOST_PLANE, Grouping, group_events, grouping_graph
from .xla_steps import tpu_steps
from .xprof_counted import CUT_ENDS, FILE_TIME_NS, HOST_DEVICES, KEEP_CUT_STEPS, \
    file_time_ns

__all__ = ["ANALYSES", "NO_STEPS_WHY", "STEP_COLUMNS", "host_steps", "combine_steps",
           "empty_steps"]

# why a profile has no steps, as every page says it
NO_STEPS_WHY = ("no step markers, no repeated XLA program on a device and no tf.function, "
                "Session.run or jitted call to infer them from")

# Event types by priority (higher wins when events overlap).
(UNKNOWN, HOST_COMPUTE, HOST_COMPILE, HOST_TO_HOST, HOST_TO_DEVICE, HOST_PREPARE,
 DEVICE_COLLECTIVES, HOST_WAIT_INPUT, DEVICE_TO_DEVICE, DEVICE_TO_HOST, DEVICE_COMPUTE_32,
 DEVICE_COMPUTE_16, DEVICE_WAIT_DEVICE, DEVICE_WAIT_HOST) = range(14)
assert N_TYPES >= 14

STEP_COLUMNS = ["host", "step_name", "group_id", "source", "start_us", "duration_ms",
                "device_compute_ms", "device_compute_16_ms", "device_compute_32_ms",
                "device_to_device_ms", "device_collectives_ms", "host_compute_ms",
                "kernel_launch_ms", "input_ms", "output_ms", "compilation_ms", "other_ms",
                "device_idle_ms", "host_to_host_ms", "host_to_device_ms"]
_NOT_COMPUTE = ("EagerExecute", "EagerLocalExecute", "EagerKernelExecute", "FunctionRun")
# Calls of a compiled function on the host: a tf.function, a jitted or pmapped JAX function.
_FUNCTION_CALL = re.compile(r"^(?:EagerLocalExecute: __inference_|PjitFunction\(|PmapFunction\()")
# TensorFlow's run of a function or of a TF1 graph (``Session.run``): a root (``_r``) of its own
_RUNS = ("FunctionRun", "SessionRun")


def _each(names, test) -> np.ndarray:
    """``test(name)`` of each name, a bool array: Python's string methods, as pandas' ``.str``
    applies them to an object Series, without its cost per call (a host's distinct names:
    a few hundred); a name that is not a string (none is) gives False."""
    return np.fromiter((isinstance(n, str) and bool(test(n)) for n in names), dtype=bool,
                       count=len(names))


def _explicit_marker(names: pd.Series) -> np.ndarray:
    return _each(names, lambda n: n.startswith(("train", "test", "TraceContext"))
                 and "/" not in n)


def _host_kind(name: str) -> int:
    lower = name.lower()
    if ":" in name:
        if name.partition(":")[2].startswith("InfeedEnqueue"):
            return HOST_TO_DEVICE
    elif lower.startswith("memcpyhtod"):
        return HOST_TO_DEVICE
    elif lower.startswith("memcpyhtoh"):
        return HOST_TO_HOST
    return HOST_WAIT_INPUT if lower.startswith("iteratorgetnext") else HOST_COMPUTE


def classify_host(names: pd.Series) -> np.ndarray:
    """Step-time type (HOST_COMPUTE, HOST_WAIT_INPUT, ...) of each host event name (a name
    that is not a string, none is: HOST_COMPUTE)."""
    return np.fromiter((_host_kind(n) if isinstance(n, str) else HOST_COMPUTE for n in names),
                       dtype=np.int8, count=len(names))


def _classify_device(names: pd.Series, shapes: pd.Series) -> np.ndarray:
    lower = names.str.lower()
    no_colon = ~names.str.contains(":", regex=False)
    kind = np.full(len(names), DEVICE_COMPUTE_32, dtype=np.int8)
    shape = shapes.fillna("").astype(str)
    half = np.where(shape != "", shape.str.contains("half"),
                    lower.str.contains("half") | lower.str.contains("fp16"))
    kind[np.asarray(half, dtype=bool)] = DEVICE_COMPUTE_16
    kind[lower.str.startswith("nccl").to_numpy()] = DEVICE_COLLECTIVES
    # the reference's names only: CUPTI's newer "MemcpyH2D" / "MemcpyD2H" / "MemcpyP2P" stay
    # device compute there (XProf 2.24 counts JAX's host-to-device copies as compute)
    memcpy = no_colon & lower.str.startswith("memcpy")
    for prefix, k in (("memcpyhtod", HOST_TO_DEVICE), ("memcpydtoh", DEVICE_TO_HOST),
                      ("memcpydtod", DEVICE_TO_DEVICE)):
        kind[(memcpy & lower.str.startswith(prefix)).to_numpy()] = k
    return kind


def _function_calls(hd: HostData, grouping: Grouping) -> np.ndarray:
    """Rows of the host's calls of compiled functions: tf.function and jitted JAX calls by
    their names, else (a TensorFlow that names its eager calls otherwise) the function runs
    and ``Session.run`` calls that start a group of their own, as the reference groups them
    (``FunctionRun`` and ``SessionRun`` roots, tf.data's left out)."""
    on_host = hd.plane_is(HOST_PLANE)
    calls = np.flatnonzero(
        hd.name_mask(lambda s: s.str.match(_FUNCTION_CALL).fillna(False).to_numpy()) & on_host)
    if len(calls):
        return calls
    groups = grouping.groups
    runs = groups.root[groups.implicit].to_numpy()
    runs = runs[runs < len(hd)]
    runs = runs[np.isin(hd.name_of(runs), _RUNS)]
    return np.sort(runs[on_host[runs]])


def _infer_step_roots(hd: HostData, grouping: Grouping) -> tuple[np.ndarray, str]:
    """Rows and name of the events taken for steps when a profile has no step markers: the
    repeated top-level events (on their thread) that call a compiled function, or, when no
    top-level event repeats (one long Python call around the loop), the repeated outermost
    calls themselves (a jitted call nested in another counts once)."""
    calls, parent = _function_calls(hd, grouping), grouping.parent
    if not len(calls):
        return np.empty(0, np.int32), ""
    is_call = np.zeros(len(parent), dtype=bool)
    is_call[calls] = True
    top = calls.astype(np.int64)
    nested = np.zeros(len(calls), dtype=bool)  # a call inside another call
    for _ in range(64):  # climb to the top-level event on the same line
        up = parent[top]
        moved = up >= 0
        if not moved.any():
            break
        top = np.where(moved, up, top)
        nested |= moved & is_call[np.maximum(up, 0)]
    rows, name = _most_repeated(hd, np.unique(top))
    if not len(rows):
        rows, name = _most_repeated(hd, calls[~nested])
    if not len(rows):  # one call in the window (e.g. one Keras train_function): one step
        rows, name = _most_repeated(hd, np.unique(top), min_count=1)
        rows = rows[:1]
    return rows, name


_KERAS_CALLS = ("multi_step_on_iterator", "train_function", "test_function")


def _batches_per_call(hd: HostData, table: pd.DataFrame) -> np.ndarray | None:
    """The tf.data batches each inferred step took of the pipeline it reads most (calls of
    one root iterator, by its ``id``, starting inside the step: an epoch's new iterator is
    another pipeline); None unless every step took at least two."""
    roots = hd.name_rows(lambda s: (s.str.startswith("Iterator::") &
                                    (s.str.count("::") == 1)).to_numpy())
    if not len(roots) or table.empty:
        return None
    ids, has = hd.int_stat("id").lookup(roots)
    roots, ids = roots[has], ids[has]
    lo = table.begin_ps.to_numpy(np.int64)
    hi = lo + np.rint(table.duration_ms.to_numpy(float) * 1e9).astype(np.int64)
    most = np.zeros(len(table), np.int64)
    for pipeline in np.unique(ids).tolist():
        begin = np.sort(hd.begin[roots[ids == pipeline]])
        counts = np.searchsorted(begin, hi, side="left") - np.searchsorted(begin, lo)
        np.maximum(most, counts, out=most)
    return most if most.min() >= 2 else None


def _batches_words(hd: HostData, table: pd.DataFrame, name: str) -> str:
    """Where each inferred step (a call of ``name``) took several batches of one tf.data
    pipeline, what one step here is: "; each call took 4 tf.data batches, ..." (Keras's
    ``steps_per_execution`` runs several training steps in one call); "" otherwise."""
    counts = _batches_per_call(hd, table)
    if counts is None:
        return ""
    k, most = int(counts.min()), int(counts.max())
    took = f"{k}" if k == most else f"{k} to {most}"
    each = "each call" if len(table) > 1 else "the call"
    if not any(call in name for call in _KERAS_CALLS):
        return f"; {each} took {took} batches of one tf.data pipeline"
    one = "one step here is" if len(table) > 1 else "this step is"
    return (f"; {each} took {took} tf.data batches, so {one} {took} training steps, as "
            "Keras's steps_per_execution runs them")


def _most_repeated(hd: HostData, rows: np.ndarray,
                   min_count: int = 2) -> tuple[np.ndarray, str]:
    """The rows of the name among ``rows`` that occurs at least ``min_count`` times with the
    largest total time, and that name (none: empty rows)."""
    stats = pd.DataFrame({"row": rows, "name": hd.name_of(rows), "dur": hd.duration[rows]})
    per_name = stats.groupby("name").agg(n=("row", "size"), total=("dur", "sum"))
    per_name = per_name[per_name.n >= min_count]
    if per_name.empty:
        return np.empty(0, np.int32), ""
    best = per_name.total.idxmax()
    return stats.loc[stats.name == best, "row"].to_numpy(np.int32), str(best)


def _device_planes(hd: HostData) -> np.ndarray:
    return hd.plane_mask(lambda s: s.str.startswith(GPU_PLANE_PREFIX).to_numpy())


def window_ps(hd: HostData) -> tuple[int, int]:
    """The profile window of a host in ps relative to its origin: the Task Environment's
    start and stop when known, else the span of its events; within the window a part of
    the host was loaded with (``tp.load(window=)``)."""
    sp = hd.space
    start, stop = sp.profile_start_ns, sp.profile_stop_ns
    if start is not None and stop is not None and stop > start:
        w0 = (start - sp.origin_ns()) * 1000
        w0, w1 = w0, w0 + (stop - start) * 1000
    else:
        w0, w1 = hd.span()
    loaded = _loaded_window(hd)
    return (w0, w1) if loaded is None else (max(w0, loaded[0]), min(w1, loaded[1]))


def _loaded_window(hd: HostData) -> tuple[int, int] | None:
    """The window (ps, host axis) a part of the host was loaded with (None: the whole)."""
    selection = hd.space.selection
    return None if selection is None else selection.window_ps


def host_steps(hd: HostData, shift_ps: int = 0, tpu: dict | None = None) -> pd.DataFrame:
    """The step table of one host (see :func:`combine_steps`); start times are relative to
    the host's origin plus ``shift_ps``.  ``tpu`` is the host's TPU partial: a host with
    TensorCores takes its steps from them (:mod:`.xla_steps`)."""
    if not len(hd):
        return empty_steps()
    if tpu is not None and tpu.get("cores"):
        table, source = tpu_steps(hd, tpu.get("modules"))
        return _finished(hd, _with_columns(table), source, shift_ps, device=True)
    on_device = _device_planes(hd)
    has_device = bool(on_device.any())
    gid = hd.int_stat("group_id")
    grouping = graph = named = None
    if len(gid):  # an already-processed file: keep its groups
        group = gid.dense(len(hd), fill=-1).astype(np.int32)
        source = "group_id"
        named = _file_groups(hd, group)
    else:
        graph = grouping_graph(hd)
        grouping = group_events(hd, graph=graph)
        group = grouping.group
        source = "markers"
        if has_device or _has_markers(hd, grouping):
            graph = None  # steps will not be inferred: free the graph (rebuilt if need be)
    if has_device:
        table = _device_steps(hd, group, on_device, fill=source != "group_id")
        source = "device" if source != "group_id" else "group_id (device)"
    else:
        table = _host_steps(hd, group, grouping if named is None else named)
        if table.empty and grouping is not None:
            roots, name = _infer_step_roots(hd, grouping)
            if len(roots):
                graph = grouping_graph(hd) if graph is None else graph
                grouping = group_events(hd, extra_roots=roots, graph=graph)
                table = _host_steps(hd, grouping.group, grouping, inferred=roots)
                source = (f"inferred: repeated '{name}'" if len(roots) > 1 else
                          f"inferred: the one call of '{name}' in the window") + \
                    _batches_words(hd, table, name)
    out = _finished(hd, table, source, shift_ps, device=has_device)
    if grouping is not None:  # groups made here: the memory step reads its events' groups
        rows = np.flatnonzero(hd.name_is(*MEMORY_EVENTS))
        out.attrs[MEMORY_GROUPS] = EventGroups(rows, grouping.group[rows])
    return out


def _file_groups(hd: HostData, group: np.ndarray) -> Grouping:
    """The named groups of a file grouped already, as the reference reads them: its grouping
    gave every root but the implicit ones (``FunctionRun``, ``SessionRun``, ...) a
    ``step_name`` stat, so a grouped host event with one marks its group's step (an implicit
    host step marker, whatever its name: ``train_function`` with ``_r``, a ``my_step`` root)
    and names it (the first such event of a group, by row); the step number is the name's
    last word when it is an integer (the reference's names end in the step number), else
    the group id."""
    stat = hd.str_stat("step_name")
    host_lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy())
    on_host = host_lines[hd.space.events.line[stat.rows]] if len(host_lines) else False
    rows = stat.rows[(group[stat.rows] >= 0) & on_host]
    found = pd.DataFrame({"group": group[rows].astype(np.int64), "root": rows.astype(np.int64),
                          "name": stat.text(stat.lookup(rows)[0].astype(np.int64))})
    found = found.drop_duplicates("group").set_index("group").sort_index()
    last_word = [str(name).rsplit(" ", 1)[-1] for name in found["name"]]
    number = pd.to_numeric(pd.Series(last_word, index=found.index, dtype=object),
                           errors="coerce")
    found["step_num"] = number.where(number.notna(), found.index.to_series()).astype(np.int64)
    found["implicit"] = False
    return Grouping(group, np.empty(0, np.int32), found, 0)  # (no nesting: not inferred)


class EventGroups:
    """The groups our grouping gave some event rows (the memory events), handed from the steps
    step to the memory step in the step table's ``attrs`` (compared by identity, so a
    concatenation of hosts drops it)."""

    def __init__(self, rows: np.ndarray, groups: np.ndarray):
        self.rows, self.groups = rows, groups


MEMORY_GROUPS = "memory_groups"
MEMORY_EVENTS = ("MemoryAllocation", "MemoryDeallocation")


def memory_groups(steps: pd.DataFrame | None) -> EventGroups | None:
    """The groups of a host's memory events made by its steps step (None: none made)."""
    return None if steps is None else steps.attrs.get(MEMORY_GROUPS)


def _with_columns(table: pd.DataFrame) -> pd.DataFrame:
    """A TPU step table with every column of a step table (the host side's are zero)."""
    if table.empty:
        return table
    out = table.reindex(columns=[c for c in STEP_COLUMNS if c not in ("host", "source")]
                        + ["begin_ps"]).fillna(0.0)
    out["group_id"] = table.index.to_numpy(np.int64)
    out["start_us"] = table.begin_ps.to_numpy() / 1e6
    out["step_name"] = table.step_name.to_numpy(dtype=object)
    return out


def _finished(hd: HostData, table: pd.DataFrame, source: str, shift_ps: int,
              device: bool) -> pd.DataFrame:
    """The steps the profile window holds whole (every step of a profile of at most five, as
    the reference keeps them; of a windowed load only those whole inside its window), times
    shifted, host and source added; ``device``: whether the host has a device (a pod's steps
    are aligned across the hosts with one: :mod:`.xprof_counted`)."""
    if table.empty:
        out = empty_steps()
        out.attrs[HOST_DEVICES] = {hd.name: device}
        return out
    w0, w1 = window_ps(hd)
    begin_ps = table.pop("begin_ps").to_numpy()
    end_ps = begin_ps + np.rint(table.duration_ms.to_numpy() * 1e9).astype(np.int64)
    whole = (begin_ps >= w0) & (end_ps <= w1)
    cut_kept = len(table) <= KEEP_CUT_STEPS and _loaded_window(hd) is None
    ends = (len(table), not (cut_kept or whole[int(np.argmin(begin_ps))]),
            not (cut_kept or whole[int(np.argmax(begin_ps))]))
    table = (table if cut_kept else table[whole]).copy()
    table["start_us"] = table.start_us + shift_ps / 1e6
    table.insert(0, "host", hd.name)
    table["source"] = source
    out = table[STEP_COLUMNS]
    out.attrs[CUT_ENDS] = {hd.name: ends}
    out.attrs[HOST_DEVICES] = {hd.name: device}
    out.attrs[FILE_TIME_NS] = {hd.name: file_time_ns(hd.space, shift_ps)}
    return out


def _has_markers(hd: HostData, grouping: Grouping) -> bool:
    """Whether a host has step markers (named roots or marker names) to make steps of."""
    if (~grouping.groups.implicit).any():
        return True
    names = pd.Series(hd.names, dtype=object)
    return bool(_explicit_marker(names).any()) if len(names) else False


def _host_steps(hd: HostData, group: np.ndarray, grouping: Grouping | None,
                inferred: np.ndarray | None = None) -> pd.DataFrame:
    n = len(hd)
    host_lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy())
    # classify each distinct name once; one pass over the events picks markers and work
    names = pd.Series(hd.names, dtype=object)
    flags = np.zeros(0, np.uint8)
    flag_rows = np.zeros(0, np.int32)
    if grouping is not None:
        roots = grouping.groups
        named = roots.root[~roots.implicit].to_numpy()
        named = named[named < n].astype(np.int32)
        inferred = np.empty(0, np.int32) if inferred is None else inferred.astype(np.int32)
        # bit 1: a named root (a marker); bit 2: an inferred step's call (a marker that works)
        flag_rows, first = np.unique(np.concatenate([named, inferred]), return_inverse=True)
        flags = np.zeros(len(flag_rows), np.uint8)
        np.bitwise_or.at(flags, first[:len(named)], 1)
        np.bitwise_or.at(flags, first[len(named):], 3)
    cap = int(hd.line_counts[host_lines].sum())
    rows, kinds, markers = host_step_rows(
        hd.space.events.line, hd.name_code, host_lines, group[:n], _explicit_marker(names),
        _each(names, lambda n: n.startswith(_NOT_COMPUTE)), classify_host(names),
        flag_rows,
        flags, cap)
    spans = pd.DataFrame({"group": group[markers], "begin": hd.begin[markers],
                          "end": hd.end_of(markers)})
    # (only real events: thread-pool regions are never grouped, as in the reference)
    if inferred is not None and len(inferred):
        spans = _inferred_spans(hd, spans, group, rows)
    return _step_rows(hd, group, spans, (rows, kinds), grouping, well_formed=HOST_COMPUTE)


def _inferred_spans(hd: HostData, spans: pd.DataFrame, group: np.ndarray,
                    rows: np.ndarray) -> pd.DataFrame:
    """Inferred steps last from one call to the next (a loop's period: what runs between two
    calls belongs to the step before), the last one until its group's last event ends (a
    jitted call returns before the computation it dispatched is done)."""
    extent = pd.Series(hd.end_of(rows)).groupby(group[rows]).max()
    spans = spans.sort_values("begin", kind="stable").reset_index(drop=True)
    next_begin = spans.begin.shift(-1)
    last_end = extent.reindex(spans.group).to_numpy()
    end = np.where(next_begin.notna(), next_begin, last_end)
    spans["end"] = np.maximum(spans.end.to_numpy(), np.nan_to_num(end).astype(np.int64))
    return spans


def _device_steps(hd: HostData, group: np.ndarray, on_device: np.ndarray,
                  fill: bool = True) -> pd.DataFrame:
    if fill:
        group = _device_groups(hd, group, on_device)
    # the grouped device events that carry a correlation_id (sought at them, or read from the
    # cached stat: no pass over the stat table)
    rows = nonzero(on_device & (group[:len(hd)] >= 0))
    rows = rows[hd.stats_at({"c": ("correlation_id", rows)})["c"][1]]
    shape = hd.str_stat("shape")
    codes, present = shape.lookup(rows)
    # classify each distinct (name, shape) once
    pair = hd.name_code[rows].astype(np.int64) * (len(shape.table) + 1) + \
        np.where(present, codes + 1, 0)
    distinct, inverse = np.unique(pair, return_inverse=True)
    name_codes, shape_codes = np.divmod(distinct, len(shape.table) + 1)
    kinds = _classify_device(pd.Series(hd.names[name_codes], dtype=object),
                             pd.Series(shape.text(shape_codes - 1), dtype=object))
    events = (rows, kinds[inverse.reshape(-1)])
    return _step_rows(hd, group, _device_step_spans(hd, group, on_device), events, None,
                      well_formed=(DEVICE_COMPUTE_16, DEVICE_COMPUTE_32))


def _device_groups(hd: HostData, group: np.ndarray, on_device: np.ndarray) -> np.ndarray:
    """``group`` with every ungrouped device event given the group of the last grouped event
    before it on its plane (none before the first), as the reference's grouping does: a
    transfer whose host side no step reaches (e.g. JAX's ``device_put`` on a PjRt worker
    thread) counts in the step whose work it follows.  Only for groups made here: a file
    grouped already keeps its groups as they are, there as here."""
    rows = np.flatnonzero(on_device)
    if not len(rows) or (group[rows] >= 0).all():
        return group
    plane = hd.space.line_plane[hd.space.events.line[rows]]
    order = np.lexsort((hd.begin[rows], plane))
    rows, plane = rows[order], plane[order]
    own = group[rows]
    last = np.maximum.accumulate(np.where(own >= 0, np.arange(len(rows)), -1))
    at = np.maximum(last, 0)
    out = group.copy()
    out[rows] = np.where((last >= 0) & (plane[at] == plane), own[at], -1)
    return out


def _device_step_spans(hd: HostData, group: np.ndarray, on_device: np.ndarray):
    """Spans (group, begin, end) of consecutive same-group device events per GPU plane (the
    derived "Steps" line); ``group``: see :func:`_device_groups`."""
    rows = np.flatnonzero(on_device)
    rows = rows[group[rows] >= 0]
    plane = hd.space.line_plane[hd.space.events.line[rows]].astype(np.int32)
    order = argsort(plane, hd.begin[rows])  # by plane, then start (stable)
    rows, plane = rows[order], plane[order]
    del order
    own = group[rows]
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (own[1:] != own[:-1]) | (plane[1:] != plane[:-1])
    starts = np.flatnonzero(new)
    if not len(starts):
        return pd.DataFrame({c: np.empty(0, np.int64) for c in ("group", "begin", "end")})
    return pd.DataFrame({"group": own[starts].astype(np.int64),
                         "begin": np.minimum.reduceat(hd.begin[rows], starts),
                         "end": np.maximum.reduceat(hd.end_of(rows), starts)})


def _step_rows(hd, group, spans, events, grouping, well_formed) -> pd.DataFrame:
    """Step table from step spans (longest per group) and the steps' typed events: (event
    rows, their types)."""
    if spans.empty:
        return pd.DataFrame()
    gid, begin, end = (spans[c].to_numpy() for c in ("group", "begin", "end"))
    dur = end - begin
    order = np.lexsort((-dur, gid))  # by group, the longest span first (stable)
    first = np.ones(len(order), dtype=bool)
    first[1:] = gid[order][1:] != gid[order][:-1]
    order = order[first]
    order = order[dur[order] > 0]  # each group's longest span, groups in order
    if not len(order):
        return pd.DataFrame()
    gid, begin, end, dur = gid[order], begin[order], end[order], dur[order]
    step_of_group = np.full(int(max(gid.max(), group.max(initial=0))) + 1, -1, np.int32)
    step_of_group[gid] = np.arange(len(gid), dtype=np.int32)
    rows, kinds = events
    out, present = step_breakdown(rows, kinds, group, step_of_group, (hd.begin, hd.duration),
                                  begin, end)
    keep = present[:, np.atleast_1d(well_formed)].any(axis=1)
    other = np.maximum(dur - out.sum(axis=1), 0)
    ms = out / 1e9
    table = pd.DataFrame({
        "group_id": gid.astype(np.int64),  # (int64 whatever the groups: one step too)
        "start_us": begin / 1e6,
        "begin_ps": begin,
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
        "device_idle_ms": 0.0,
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
    steps = np.asarray(steps, dtype=np.int64)
    if len(np.unique(steps)) < len(steps):  # (markers that number several steps alike: each
        steps = gid.to_numpy(np.int64)      # epoch from 0) the group ids, XProf's numbers
    table.index = pd.Index(steps, name="step")
    return table


def empty_steps() -> pd.DataFrame:
    """A step table without rows, with every column."""
    df = pd.DataFrame({c: pd.Series(dtype=object if c in ("host", "step_name", "source")
                                    else "float64") for c in STEP_COLUMNS})
    df["group_id"] = df["group_id"].astype("int64")
    df.index = pd.Index([], dtype="int64", name="step")
    return df


def combine_steps(parts: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per step and host: duration and step-time categories in ms.

    ``source`` says where the steps came from: ``markers`` (step markers: TensorFlow's
    ``Trace(..., _r=1)``, JAX's ``StepTraceAnnotation``, any name), ``device`` (device activity
    grouped by step), ``group_id`` (groups already in the file, marked as there: a
    ``train``/``test``/``TraceContext`` name without ``/``, or the ``step_name`` the grouping
    gave a root, which names the step) or ``inferred: repeated
    '<name>'`` (no markers: the repeated top-level call of a tf.function or jitted function).
    A step's number (the index) is its marker's, or where a host's markers give one number to
    several steps (a loop that numbers each epoch from 0) its group id, XProf's own step
    number, so that each step keeps its own (``step_name`` keeps the marker's name).
    """
    tables = [p for p in parts.values() if not p.empty]
    if not tables:
        return empty_steps()
    out = pd.concat(tables)
    out.attrs.pop(MEMORY_GROUPS, None)
    out.attrs[CUT_ENDS] = {h: e for p in tables for h, e in p.attrs.get(CUT_ENDS, {}).items()}
    # (every host's, those without steps too, in the profile's order)
    out.attrs[HOST_DEVICES] = {h: d for p in parts.values()
                               for h, d in p.attrs.get(HOST_DEVICES, {}).items()}
    out.attrs[FILE_TIME_NS] = {h: t for p in tables
                               for h, t in p.attrs.get(FILE_TIME_NS, {}).items()}
    return out


ANALYSES = (Analysis("steps", host=host_steps, combine=combine_steps, host_needs=("tpu",),
                     host_cost=3.0),)
