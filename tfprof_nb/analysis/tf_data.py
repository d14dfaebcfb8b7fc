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

from ._group_kernels import csr
from .grouping import HOST_PLANE
from .host_events import HostEvents, host_events

__all__ = ["TfDataAnalysis", "tf_data_analysis", "suggestion_for", "SLOW_CALL_US"]

SLOW_CALL_US = 50.0  # a root call slower than this is slow (tf.data performance guide)
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


def suggestion_for(iterator_name: str, pipeline_has_prefetch: bool = True) -> str:
    """What to try when ``iterator_name`` (e.g. "Map", "TFRecord") is the bottleneck."""
    name = iterator_name
    if name in ("Map",):
        text = ("This map runs sequentially: pass num_parallel_calls=tf.data.AUTOTUNE to "
                ".map(), and .cache() after it if the data fits in memory and the map has no "
                "randomness.")
    elif name in ("ParallelMap", "ParallelMapV2", "MapAndBatch"):
        text = ("This parallel map is still the slowest stage: make sure num_parallel_calls is "
                "tf.data.AUTOTUNE, vectorise the function (batch before map), or .cache() its "
                "output.")
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
        text = "The stage itself is light; look upstream of it and see the tf.data guide."
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
        return f"<TfDataAnalysis {len(self.pipelines)} pipeline(s): " \
               f"{self.summary.get('message', '')}>"


def _graph(hev: HostEvents):
    """Children lists (CSR) of iterator calls: same-thread nesting plus produce links."""
    n = len(hev)
    is_iter = hev.name_mask(lambda s: s.str.startswith("Iterator::")) & \
        hev.plane_is(HOST_PLANE)
    is_produce = hev.name_is(*_PRODUCE)
    is_consume = hev.name_is(*_CONSUME)
    parent = hev.nesting_parent()
    src = [parent[parent >= 0]]
    dst = [np.flatnonzero(parent >= 0)]
    ids, has_id = hev.int_stat("id")
    pid, has_pid = hev.int_stat("parent_id")
    elem, has_elem = hev.int_stat("element_id")
    # a Produce event's first iterator child (by start time) produced that element
    child = np.flatnonzero((parent >= 0) & is_iter)
    child = child[is_produce[parent[child]] & has_elem[parent[child]]]
    if len(child):
        first = pd.DataFrame({"p": parent[child], "c": child, "t": hev.begin[child]}) \
            .sort_values(["p", "t"], kind="stable").drop_duplicates("p")
        first = first[has_pid[first.c.to_numpy()]]
        producers = pd.DataFrame({"k0": pid[first.c.to_numpy()], "k1": elem[first.p.to_numpy()],
                                  "producer": first.c.to_numpy()})
        cons = np.flatnonzero(is_consume & has_elem & (parent >= 0))
        around = parent[cons]
        ok = is_iter[around] & has_id[around]
        consumers = pd.DataFrame({"k0": ids[around[ok]], "k1": elem[cons[ok]],
                                  "consumer": around[ok]})
        links = consumers.merge(producers, on=["k0", "k1"])
        src.append(links.consumer.to_numpy(np.int64))
        dst.append(links.producer.to_numpy(np.int64))
    off, tgt = csr(np.concatenate(src), np.concatenate(dst), n)
    return is_iter, off, tgt


def _execution(root: int, hev: HostEvents, is_iter, off, tgt, ids, has_id):
    """Per-iterator totals of one root call: {iterator id: [start, total, self, blocking,
    calls]}, walking the call tree depth first (at most 100 levels)."""
    stats: dict = {}
    stack = [(root, True, 0)]
    while stack:
        ev, blocking, level = stack.pop()
        if level > 100 or not has_id[ev]:
            continue
        iid = int(ids[ev])
        s = stats.setdefault(iid, [int(hev.begin[ev]), 0, 0, False, 0])
        dur = int(hev.end[ev] - hev.begin[ev])
        s[1] += dur
        own = dur
        kids = []
        for c in tgt[off[ev]:off[ev + 1]]:
            if is_iter[c]:
                overlap = max(0, min(hev.end[ev], hev.end[c]) - max(hev.begin[ev], hev.begin[c]))
                own -= overlap
                kids.append((int(c), blocking and overlap > 0, level + 1))
        s[2] += own
        s[3] = s[3] or blocking
        s[4] += 1
        stack.extend(reversed(kids))
    return stats


def _host_tf_data(prof, host: str):
    hev = host_events(prof, host)
    if not len(hev):
        return [], [], []
    is_iter, off, tgt = _graph(hev)
    ids, has_id = hev.int_stat("id")
    pid, has_pid = hev.int_stat("parent_id")
    meta: dict = {}
    roots: dict = {}
    device_roots = set()
    for ev in np.flatnonzero(is_iter & has_id).tolist():
        iid = int(ids[ev])
        long_name = hev.names[hev.name_code[ev]]
        if iid not in meta:
            meta[iid] = {"parent_id": int(pid[ev]) if has_pid[ev] else 0,
                         "name": long_name.split("::")[-1], "long_name": long_name}
        if long_name == _DEVICE_SECOND and has_pid[ev]:
            device_roots.add(int(pid[ev]))
        elif len(long_name.split("::")) == 2:
            roots.setdefault(iid, []).append(ev)
    pipelines, graph, bottlenecks = [], [], []
    counters = {"host": 0, "device": 0}
    for root_id in sorted(roots):
        events = sorted(roots[root_id], key=lambda e: -(hev.end[e] - hev.begin[e]))
        kind = "device" if root_id in device_roots else "host"
        name = f"{kind.capitalize()}:{counters[kind]}"
        counters[kind] += 1
        lat = np.array([hev.end[e] - hev.begin[e] for e in events], dtype=np.int64) / 1e6
        pipelines.append({"host": host, "pipeline": name, "root_id": root_id, "kind": kind,
                          "calls": len(events), "slow_calls": int((lat > SLOW_CALL_US).sum()),
                          "min_latency_us": float(lat.min()),
                          "avg_latency_us": float(lat.mean()),
                          "max_latency_us": float(lat.max())})
        has_prefetch = any(m["name"] == "Prefetch" for m in meta.values()
                           if _in_pipeline(m, root_id, meta))
        for rank, ev in enumerate(events[:_MAX_EXECUTIONS]):
            stats = _execution(ev, hev, is_iter, off, tgt, ids, has_id)
            blocking = {i: s for i, s in stats.items() if s[3]}
            bottleneck = max(blocking, key=lambda i: blocking[i][2]) if blocking else None
            for iid, (start, total, own, block, calls) in sorted(stats.items()):
                m = meta.get(iid, {"parent_id": 0, "name": "", "long_name": ""})
                graph.append({"host": host, "pipeline": name, "root_id": root_id, "rank": rank,
                              "iterator_id": iid, "parent_id": m["parent_id"],
                              "name": m["name"], "long_name": m["long_name"],
                              "start_us": start / 1e6, "total_us": total / 1e6,
                              "self_us": own / 1e6, "calls": calls, "critical": block,
                              "bottleneck": iid == bottleneck})
            if rank == 0 and kind == "host" and bottleneck is not None:
                m = meta.get(bottleneck, {"name": "", "long_name": ""})
                bottlenecks.append({
                    "host": host, "pipeline": name, "root_id": root_id,
                    "max_latency_us": float(lat.max()), "iterator_name": m["name"],
                    "iterator_long_name": m["long_name"],
                    "iterator_self_us": stats[bottleneck][2] / 1e6,
                    "suggestion_text": suggestion_for(m["name"], has_prefetch)})
    return pipelines, graph, bottlenecks


def _in_pipeline(m: dict, root_id: int, meta: dict) -> bool:
    seen = set()
    while m is not None and id(m) not in seen:
        seen.add(id(m))
        if m["parent_id"] == root_id:
            return True
        m = meta.get(m["parent_id"])
    return False


def tf_data_analysis(prof) -> TfDataAnalysis:
    """The tf.data analysis of every host."""
    pipelines, graph, bottlenecks = [], [], []
    for host in prof.hosts:
        p, g, b = _host_tf_data(prof, host)
        pipelines += p
        graph += g
        bottlenecks += b
    pipelines = pd.DataFrame(pipelines, columns=[
        "host", "pipeline", "root_id", "kind", "calls", "slow_calls", "min_latency_us",
        "avg_latency_us", "max_latency_us"])
    graph = pd.DataFrame(graph, columns=[
        "host", "pipeline", "root_id", "rank", "iterator_id", "parent_id", "name", "long_name",
        "start_us", "total_us", "self_us", "calls", "critical", "bottleneck"])
    bottlenecks = pd.DataFrame(bottlenecks, columns=[
        "host", "pipeline", "root_id", "max_latency_us", "iterator_name",
        "iterator_long_name", "iterator_self_us", "suggestion_text"]) \
        .sort_values("max_latency_us", ascending=False, kind="stable").reset_index(drop=True)
    worst = float(bottlenecks.max_latency_us.max()) if len(bottlenecks) else 0.0
    if worst > SLOW_CALL_US:
        summary = {"is_input_bound": True, "message": (
            f"A tf.data pipeline is slower than {SLOW_CALL_US:.0f} us per call: each slow "
            "pipeline's bottleneck and a suggestion are listed.")}
    elif worst > 0:
        summary = {"is_input_bound": False, "message": (
            f"No tf.data pipeline is slower than {SLOW_CALL_US:.0f} us per call (the job can "
            "still be input-bound if this profile missed some workers).")}
    else:
        summary = {"is_input_bound": False, "message": (
            "No tf.data activity in this profile: if the job uses tf.data, capture a longer "
            "profile or a higher host tracer level.")}
    return TfDataAnalysis(pipelines, graph, bottlenecks, summary)
