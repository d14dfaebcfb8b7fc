"""tf.data bottleneck analysis: pipelines, per-call iterator graphs, bottleneck, suggestion.

Iterator calls (``Iterator::Root::Prefetch::Map::...``) nest on their thread; calls made on
background threads to produce elements are linked to the iterator that consumed them by
``element_id`` (a ``*Produce`` event's first iterator child and the iterator around the
matching ``*Consume`` event).  For each call of a pipeline's root iterator the tree of
iterator calls gives each iterator's total and self time; iterators whose calls overlap their
parent's form the critical (blocking) path, and the one with the most self time on it is the
bottleneck.  The slowest call of each pipeline names the pipeline's bottleneck.

The reference tool (no longer shipped by xprof) reads iterator ids stored as uint64 as 0,
which merges unrelated iterators; ids here keep all 64 bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..._native.kernels import csr, join_on_keys
from ..._words import counted
from ..runtime.hostdata.host import HOST_PLANE, HostData
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "TfDataAnalysis", "combine_tf_data", "host_tf_data", "suggestion_for",
           "SLOW_CALL_US"]

SLOW_CALL_US = 50.0  # a root call slower than this is slow (tf.data performance guide)
_MAX_FANOUT = 64  # (flow_links.MAX_FANOUT: keys both sides repeat this often are left out)
_ASYNC = {"Prefetch", "ParallelInterleave", "ParallelMap", "ParseExample", "MapAndBatch",
          "DataService", "LegacyParallelInterleave", "ParallelBatch"}
_PRODUCE = {"PrefetchProduce", "ParallelInterleaveProduce", "ParallelMapProduce",
            "MapAndBatchProduce", "ParseExampleProduce", "ParallelBatchProduce"}
_CONSUME = {n.replace("Produce", "Consume") for n in _PRODUCE}
_DEVICE_SECOND = "Iterator::Prefetch::Generator"
_MAX_EXECUTIONS = 20
_SOURCES = {"TFRecord", "SSTable", "RecordIO", "TextLine", "FixedLengthRecord",
            "FixedLengthRecordV2", "FromTensor", "TensorSlice", "Generator", "LMDB",
            "ArrayRecord", "SyntheticDatasetOp"}
_GUIDE = "https://www.tensorflow.org/guide/data_performance"


def _waiting(name: str, upstream: tuple | None) -> str:
    """What to say of a stage whose own time is waiting on the stages before it (a prefetch
    whose buffer ran empty, a root, ...); ``upstream``: (whether a stage before it is in this
    call's graph, the names of the stages before it the profile has), None: not known."""
    text = ("The prefetch buffer ran empty: the stages before it produce elements more slowly "
            "than the steps take them." if name == "Prefetch" else
            "The stage itself does little: its time is spent waiting on the stages before it.")
    if upstream is None:
        return text + " Look upstream of it and see the tf.data guide."
    drawn, names = upstream
    if drawn:
        return text + " Look at the slowest of them in the graph and see the tf.data guide."
    if names:
        return (text + f" They ({', '.join(names)}) ran on background threads that this "
                "profile does not link to this call, so the graph does not show them; the "
                "trace viewer does (the tf.data threads).")
    return (text + " No stage before it is in this profile: capture with a higher host "
            "tracer level to see them.")


_SEQUENTIAL_MAP = ("This map runs sequentially: pass num_parallel_calls=tf.data.AUTOTUNE to "
                   ".map(), and .cache() after it if the data fits in memory and the map has "
                   "no randomness.")
_PARALLEL_MAP = ("This parallel map is still the slowest stage: make sure num_parallel_calls is "
                 "tf.data.AUTOTUNE, vectorise the function (batch before map), or .cache() its "
                 "output.")


def _map_and_batch(dataset: str) -> str:
    """What to say of a MapAndBatch stage by the datasets tf.data fused into it (its
    ``name`` stat, e.g. ``fused(MapDataset:1,BatchDatasetV2:2)``): a plain ``.map()`` runs
    sequentially there too."""
    fused = "tf.data fused the .map() with the .batch() after it into this stage. "
    if dataset.startswith("fused(MapDataset"):
        return fused + _SEQUENTIAL_MAP
    if dataset.startswith("fused(ParallelMapDataset"):
        return fused + _PARALLEL_MAP
    return ("This map-and-batch stage is the slowest: pass num_parallel_calls=tf.data.AUTOTUNE "
            "to its .map() if it has none, vectorise the function, or .cache() its output.")


def suggestion_for(iterator_name: str, pipeline_has_prefetch: bool = True,
                   upstream: tuple | None = None, dataset: str = "") -> str:
    """What to try when ``iterator_name`` (e.g. "Map", "TFRecord") is the bottleneck;
    ``upstream`` (see :func:`_waiting`) says whether the stages before it are drawn;
    ``dataset``: the stage's dataset name (its iterator's ``name`` stat), "" when unknown."""
    name = iterator_name
    if name in ("Map",):
        text = _SEQUENTIAL_MAP
    elif name in ("ParallelMap", "ParallelMapV2"):
        text = _PARALLEL_MAP
    elif name == "MapAndBatch":
        text = _map_and_batch(dataset)
    elif name in ("Interleave",):
        text = ("Interleave runs sequentially: pass num_parallel_calls=tf.data.AUTOTUNE (and "
                "deterministic=False if order does not matter).")
    elif name in _SOURCES:
        text = ("Reading the source is slow: read several files at once with "
                ".interleave(..., num_parallel_calls=tf.data.AUTOTUNE), .cache() the data if it "
                "fits, and keep the data close to the host.")
    elif name in ("Filter", "Batch", "BatchV2", "Unbatch", "Shuffle", "Padded", "PaddedBatch",
                  "PaddedBatchV2"):
        text = ("This stage is sequential: shard the input and run several pipelines (outer "
                "parallelism), or .cache() after it if the data fits and nothing random is "
                "upstream.")
    elif name == "DataService":
        text = "Fetching from the tf.data service is slow: profile the service workers."
    else:
        text = _waiting(name, upstream)
    if not pipeline_has_prefetch:
        text += " The pipeline has no prefetch: end it with .prefetch(tf.data.AUTOTUNE)."
    return f"{text} ({_GUIDE})"


@dataclass
class TfDataAnalysis:
    """tf.data pipelines of a profile.

    ``pipelines``: one row per pipeline (calls, slow calls, latencies); ``graph``: iterator
    nodes of each pipeline's slowest calls (``rank`` 0 = slowest) with start, total and self
    time, calls, ``critical`` (blocking) and ``bottleneck`` flags; ``bottlenecks``: per host
    pipeline, slowest first, with a suggestion; ``summary``: verdict and message.
    """

    pipelines: pd.DataFrame = field(default_factory=pd.DataFrame)
    graph: pd.DataFrame = field(default_factory=pd.DataFrame)
    bottlenecks: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<TfDataAnalysis {counted(len(self.pipelines), 'pipeline')}: " \
               f"{self.summary.get('message', '')}>"


@dataclass
class _IteratorGraph:
    """Iterator calls of one host (``rows``: event rows, increasing) and the calls each one
    made (CSR over positions in ``rows``): nested calls on the same thread and, across
    threads, the producer call behind each consumed element; each call's ``id`` and
    ``parent_id`` stats."""

    rows: np.ndarray
    off: np.ndarray
    tgt: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    ids: np.ndarray
    has_id: np.ndarray
    pids: np.ndarray
    has_pid: np.ndarray


def _positions(rows: np.ndarray, x: np.ndarray) -> np.ndarray:
    """int32 position of each event row ``x`` in the sorted ``rows`` (-1: not there)."""
    if not len(rows):
        return np.full(len(x), -1, np.int32)
    at = np.minimum(np.searchsorted(rows, x), len(rows) - 1)
    return np.where(rows[at] == x, at, -1).astype(np.int32)


def _graph(hd: HostData) -> _IteratorGraph:
    host_lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy())
    rows = hd.rows_on_lines(host_lines, hd.name_table(lambda s: s.str.startswith("Iterator::")))
    cons = hd.name_rows(lambda s: s.isin(_CONSUME).to_numpy())
    # the nesting parents of the iterators and the consumers only, in one walk
    asked = np.sort(np.concatenate([rows, cons]), kind="stable")  # (repeats are fine)
    parents = hd.nesting_parent_at(asked)[0]
    up = parents[np.searchsorted(asked, rows)]
    around = parents[np.searchsorted(asked, cons)]
    del asked, parents
    pos_up = _positions(rows, up)
    nested = pos_up >= 0  # an iterator inside an iterator
    src = [pos_up[nested]]
    dst = [np.flatnonzero(nested).astype(np.int32)]
    # a Produce event's first iterator child (by start time) produced that element
    is_produce = hd.name_table(lambda s: s.isin(_PRODUCE).to_numpy())
    has_up = up >= 0
    produced = is_produce[hd.name_code[up[has_up]]]
    child = rows[has_up][produced]
    p_of = up[has_up][produced]
    cons, around = cons[around >= 0], around[around >= 0]
    at = hd.stats_at({"p_elem": ("element_id", p_of), "c_pid": ("parent_id", child),
                      "c_elem": ("element_id", cons), "a_id": ("id", around),
                      "id": ("id", rows), "pid": ("parent_id", rows)})
    if len(child):
        elem, has_elem = at.pop("p_elem")
        c_pid, c_has_pid = at.pop("c_pid")
        child, p_of, elem = child[has_elem], p_of[has_elem], elem[has_elem]
        c_pid, c_has_pid = c_pid[has_elem], c_has_pid[has_elem]
        order = np.lexsort((hd.begin[child], p_of))  # by producer, then start
        child, p_of, elem = child[order], p_of[order], elem[order]
        c_pid, c_has_pid = c_pid[order], c_has_pid[order]
        first = np.ones(len(child), dtype=bool)
        first[1:] = p_of[1:] != p_of[:-1]
        child, elem, pid, has_pid = child[first], elem[first], c_pid[first], c_has_pid[first]
        producer = _positions(rows, child[has_pid])
        p_keys = (pid[has_pid], elem[has_pid])
        del child, elem, pid, has_pid
        c_elem, c_has = at.pop("c_elem")
        a_id, a_has = at.pop("a_id")
        cons, c_elem, around, a_id, a_has = (x[c_has] for x in (cons, c_elem, around, a_id,
                                                                 a_has))
        pos_around = _positions(rows, around)
        ok = (pos_around >= 0) & a_has
        # each consumer's producers of its (id, element), in consumer then producer order; a
        # key both sides repeat _MAX_FANOUT times or more is left out (as flows do: the pairs
        # stay linear in the events whatever the ids)
        links_dst, links_src = join_on_keys(producer, p_keys, pos_around[ok],
                                            (a_id[ok], c_elem[ok]), limit=_MAX_FANOUT)
        src.append(links_src)
        dst.append(links_dst)
    off, tgt = csr(np.concatenate(src), np.concatenate(dst), len(rows))
    (id_values, has_id), (pids, has_pid) = at["id"], at["pid"]
    return _IteratorGraph(rows, off, tgt, hd.begin[rows], hd.end_of(rows), id_values, has_id,
                          pids, has_pid)


def _execution(root: int, g: _IteratorGraph):
    """Per-iterator totals of one root call (a position in ``g``): {iterator id: [start,
    total, self, blocking, calls, its first call's position]}, walking the call tree depth
    first (at most 100 levels)."""
    stats: dict = {}
    stack = [(root, True, 0)]
    begin, end = g.begin, g.end
    while stack:
        ev, blocking, level = stack.pop()
        if level > 100 or not g.has_id[ev]:
            continue
        iid = int(g.ids[ev])
        s = stats.setdefault(iid, [int(begin[ev]), 0, 0, False, 0, ev])
        dur = int(end[ev] - begin[ev])
        s[1] += dur
        own = dur
        kids = []
        for c in g.tgt[g.off[ev]:g.off[ev + 1]].tolist():
            overlap = max(0, min(end[ev], end[c]) - max(begin[ev], begin[c]))
            own -= overlap
            kids.append((c, blocking and overlap > 0, level + 1))
        s[2] += own
        s[3] = s[3] or blocking
        s[4] += 1
        stack.extend(reversed(kids))
    return stats


def _datasets(hd: HostData, rows: np.ndarray) -> list[str]:
    """The dataset name of each iterator call at ``rows`` (its ``name`` stat: "PrefetchDataset:3",
    "fused(MapDataset:1,BatchDatasetV2:2)"), "" where it has none."""
    stat = hd.str_stat("name")
    codes, hit = stat.lookup(rows)
    return ["" if t is None else str(t) for t in stat.text(np.where(hit, codes, -1))]


def _iterator_meta(hd: HostData, g: _IteratorGraph) -> dict:
    """{iterator id: parent id, short and long name} from each iterator's first call."""
    ids = g.ids[g.has_id]
    _, first = np.unique(ids, return_index=True)
    first_pos = np.flatnonzero(g.has_id)[first]
    first_rows = g.rows[first_pos]
    pid, has_pid = g.pids[first_pos], g.has_pid[first_pos]
    long_names = hd.name_of(first_rows)
    return {int(i): {"parent_id": int(p) if h else 0, "name": n.split("::")[-1],
                     "long_name": n}
            for i, p, h, n in zip(ids[first].tolist(), pid.tolist(), has_pid.tolist(),
                                  long_names)}


def host_tf_data(hd: HostData, shift_ps: int = 0):
    """(pipelines, graph, bottlenecks) row lists of one host's tf.data pipelines."""
    if not len(hd):
        return [], [], []
    g = _graph(hd)
    meta = _iterator_meta(hd, g)
    pid, has_pid = g.pids, g.has_pid
    code = hd.name_code[g.rows]  # name tests once per distinct name
    device_second = hd.name_table(lambda s: (s == _DEVICE_SECOND).to_numpy())[code] & \
        has_pid & g.has_id
    device_roots = set(pid[device_second].tolist())
    is_root = hd.name_table(lambda s: (s.str.count("::") == 1).to_numpy())[code] & \
        g.has_id & ~device_second
    root_pos = np.flatnonzero(is_root)
    # a pipeline: the calls of one root iterator, told apart by its id and its dataset (an
    # iterator made after another was freed can get its id: Keras 2's validation iterator
    # and the next epoch's training one)
    calls = pd.DataFrame({"root_id": g.ids[root_pos], "pos": root_pos,
                          "dur": g.end[root_pos] - g.begin[root_pos],
                          "dataset": _datasets(hd, g.rows[root_pos])})
    pipelines, graph, bottlenecks = [], [], []
    counters = {"host": 0, "device": 0}
    host = hd.name
    for (root_id, dataset), group in calls.groupby(["root_id", "dataset"], sort=True):
        group = group.sort_values("dur", ascending=False, kind="stable")
        root_id = int(root_id)
        kind = "device" if root_id in device_roots else "host"
        name = f"{kind.capitalize()}:{counters[kind]}"
        counters[kind] += 1
        lat = group.dur.to_numpy() / 1e6
        pipelines.append({"host": host, "pipeline": name, "root_id": root_id,
                          "dataset": dataset, "kind": kind, "calls": len(group),
                          "slow_calls": int((lat > SLOW_CALL_US).sum()),
                          "min_latency_us": float(lat.min()),
                          "avg_latency_us": float(lat.mean()),
                          "max_latency_us": float(lat.max())})
        has_prefetch = any(m["name"] == "Prefetch" for m in meta.values()
                           if _in_pipeline(m, root_id, meta))
        for rank, pos in enumerate(group.pos.to_numpy()[:_MAX_EXECUTIONS].tolist()):
            stats = _execution(pos, g)
            blocking = {i: s for i, s in stats.items() if s[3]}
            bottleneck = max(blocking, key=lambda i: blocking[i][2]) if blocking else None
            for iid, (start, total, own, block, n_calls, _) in sorted(stats.items()):
                m = meta.get(iid, {"parent_id": 0, "name": "", "long_name": ""})
                graph.append({"host": host, "pipeline": name, "root_id": root_id, "rank": rank,
                              "iterator_id": iid, "parent_id": m["parent_id"],
                              "name": m["name"], "long_name": m["long_name"],
                              "start_us": (start + shift_ps) / 1e6, "total_us": total / 1e6,
                              "self_us": own / 1e6, "calls": n_calls, "critical": block,
                              "bottleneck": iid == bottleneck})
            if rank == 0 and kind == "host" and bottleneck is not None:
                bottlenecks.append({"host": host, "pipeline": name, "root_id": root_id,
                                    "max_latency_us": float(lat.max()),
                                    **_bottleneck(hd, g, (stats, bottleneck), meta,
                                                  has_prefetch)})
    return pipelines, graph, bottlenecks


def _bottleneck(hd: HostData, g: _IteratorGraph, found: tuple, meta: dict,
                has_prefetch: bool) -> dict:
    """The bottleneck row's iterator columns and suggestion (``found``: the slowest call's
    per-iterator totals and its bottleneck's id)."""
    stats, bottleneck = found
    m = meta.get(bottleneck, {"name": "", "long_name": ""})
    # (the dataset of this call's iterator: a later iterator may have taken the id)
    dataset = _datasets(hd, g.rows[[stats[bottleneck][5]]])[0]
    return {"iterator_name": m["name"], "iterator_long_name": m["long_name"],
            "iterator_self_us": stats[bottleneck][2] / 1e6,
            "suggestion_text": suggestion_for(m["name"], has_prefetch,
                                              _upstream(bottleneck, stats, meta), dataset)}


def _upstream(iterator: int, stats: dict, meta: dict) -> tuple[bool, list]:
    """(whether a stage feeding ``iterator`` is in this call's graph, the long names of the
    stages feeding it that the profile has)."""
    names = sorted(m["long_name"] for m in meta.values() if m["parent_id"] == iterator)
    drawn = any(meta.get(i, {}).get("parent_id") == iterator for i in stats)
    return drawn, names


def _in_pipeline(m: dict, root_id: int, meta: dict) -> bool:
    seen = set()
    while m is not None and id(m) not in seen:
        seen.add(id(m))
        if m["parent_id"] == root_id:
            return True
        m = meta.get(m["parent_id"])
    return False


def combine_tf_data(parts: dict[str, tuple]) -> TfDataAnalysis:
    """The tf.data analysis of every host from the hosts' row lists."""
    pipelines, graph, bottlenecks = [], [], []
    for p, g, b in parts.values():
        pipelines += p
        graph += g
        bottlenecks += b
    pipelines = pd.DataFrame(pipelines, columns=[
        "host", "pipeline", "root_id", "dataset", "kind", "calls", "slow_calls",
        "min_latency_us", "avg_latency_us", "max_latency_us"])
    graph = pd.DataFrame(graph, columns=[
        "host", "pipeline", "root_id", "rank", "iterator_id", "parent_id", "name", "long_name",
        "start_us", "total_us", "self_us", "calls", "critical", "bottleneck"])
    bottlenecks = pd.DataFrame(bottlenecks, columns=[
        "host", "pipeline", "root_id", "max_latency_us", "iterator_name",
        "iterator_long_name", "iterator_self_us", "suggestion_text"]) \
        .sort_values("max_latency_us", ascending=False, kind="stable").reset_index(drop=True)
    return TfDataAnalysis(pipelines, graph, bottlenecks, _summary(pipelines, bottlenecks))


def _summary(pipelines: pd.DataFrame, bottlenecks: pd.DataFrame) -> dict:
    """The verdict and the message, true to what the graph draws: the pipelines there are."""
    worst = float(bottlenecks.max_latency_us.max()) if len(bottlenecks) else 0.0
    if worst > SLOW_CALL_US:
        slow = pipelines[pipelines.slow_calls > 0]
        n, of = max(len(slow), 1), len(pipelines)
        each = ", ".join(f"{int(r.slow_calls):,} of {int(r.calls):,}"
                         for r in slow.itertuples()) if len(slow) <= 4 else ""
        whose = "its graph draws" if n == 1 else "each one's graph draws"
        drawn = f"{whose} all of its calls" if len(slow) and \
            (slow.calls <= _MAX_EXECUTIONS).all() else \
            f"{whose} its {_MAX_EXECUTIONS} slowest calls"
        return {"is_input_bound": True, "message": (
            f"{'A' if n == 1 else n} tf.data pipeline{'s' * (n != 1)}"
            f"{f' (of {of})' if of > n else ''} {'has' if n == 1 else 'have'} calls slower "
            f"than {SLOW_CALL_US:.0f} us{f' ({each} calls)' if each else ''}: each slow "
            f"pipeline's bottleneck and a suggestion are listed; {drawn}.")}
    if worst > 0:
        return {"is_input_bound": False, "message": (
            f"No tf.data pipeline is slower than {SLOW_CALL_US:.0f} us per call (the job can "
            "still be input-bound if this profile missed some workers).")}
    if len(pipelines) and (pipelines.kind == "device").all():
        n = len(pipelines)
        return {"is_input_bound": False, "message": (
            f"Only device-side tf.data pipelines ({n} prefetching to the devices) in this "
            f"profile: {'their graphs are' if n > 1 else 'its graph is'} drawn; the "
            "bottleneck analysis covers host pipelines, and no call of a host pipeline is in "
            "this profile.")}
    if len(pipelines):
        return {"is_input_bound": False, "message": (
            "tf.data pipelines ran, but no call of them had a stage on its critical path to "
            "name as its bottleneck.")}
    return {"is_input_bound": False, "message": (
        "No tf.data activity in this profile: if the job uses tf.data, capture a longer "
        "profile or a higher host tracer level.")}


ANALYSES = (Analysis("tf_data", host=host_tf_data, combine=combine_tf_data),)
