"""Reading exported traces back, independently of the writers: Chrome JSON with ``json``,
Perfetto traces with the ``perfetto`` package's own protobuf classes, replayed the way
trace_processor reads them (interning in file order, slices by a stack per track after a
stable sort by timestamp)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from tfprof_nb.xspace.model import stat_value


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"repeated keys in a JSON object: {keys}"
    return dict(pairs)


def read_chrome(path: Path) -> dict:
    """The JSON of a Chrome trace (gzip or not); asserts that no object repeats a key."""
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, object_pairs_hook=_unique_keys)


def chrome_tables(trace: dict) -> tuple[pd.DataFrame, dict, dict]:
    """(X events in file order, {pid: process name}, {(pid, tid): thread name})."""
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    x = [e for e in events if e["ph"] == "X"]
    table = pd.DataFrame({"pid": [e["pid"] for e in x], "tid": [e["tid"] for e in x],
                          "name": [e["name"] for e in x], "ts": [e["ts"] for e in x],
                          "dur": [e["dur"] for e in x],
                          "args": [e.get("args", {}) for e in x]})
    return table, processes, threads


def perfetto_pb2():
    import pytest

    return pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")


def _annotation_value(a):
    which = a.WhichOneof("value")
    return which, getattr(a, which) if which else None


def read_perfetto(path: Path) -> tuple[pd.DataFrame, dict, dict]:
    """(slices, {uuid: (process name, pid)}, {uuid: (thread name, pid, tid)}).

    Slices: uuid, name, ts, dur (ns), args ({name: value}, string values resolved), flows
    and ends (the flow ids a slice starts and ends).
    Asserts the sequence rules: one sequence, its first packet clears the incremental
    state, every packet using interned data says it needs it and uses only iids interned
    earlier in the file, every end closes a slice.
    """
    pb = perfetto_pb2()
    trace = pb.Trace.FromString(Path(path).read_bytes())
    names, keys, strings = {}, {}, {}
    processes, threads = {}, {}
    te_packets = []
    cleared = False
    cleared_flag = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    needs_flag = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
    for i, pk in enumerate(trace.packet):
        assert pk.trusted_packet_sequence_id == 1
        if i == 0:
            assert pk.sequence_flags & cleared_flag and pk.first_packet_on_sequence
            cleared = True
        if pk.HasField("interned_data"):
            assert cleared
            for e in pk.interned_data.event_names:
                names[e.iid] = e.name
            for e in pk.interned_data.debug_annotation_names:
                keys[e.iid] = e.name
            for e in pk.interned_data.debug_annotation_string_values:
                strings[e.iid] = e.str.decode("utf-8")
        if pk.HasField("track_descriptor"):
            td = pk.track_descriptor
            assert td.uuid not in processes and td.uuid not in threads, "uuid used twice"
            if td.HasField("process"):
                processes[td.uuid] = (td.process.process_name, td.process.pid)
            else:
                assert td.HasField("thread")
                threads[td.uuid] = (td.thread.thread_name, td.thread.pid, td.thread.tid)
        if pk.HasField("track_event"):
            te = pk.track_event
            assert te.track_uuid in threads, "event before its track's descriptor"
            record = {"ts": pk.timestamp, "uuid": te.track_uuid, "type": te.type}
            if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                assert pk.sequence_flags & needs_flag
                record["name"] = names[te.name_iid]
                args = {}
                for a in te.debug_annotations:
                    which, value = _annotation_value(a)
                    if which == "string_value_iid":
                        value = strings[value]
                    args[keys[a.name_iid]] = value
                record["args"] = args
                record["flows"] = list(te.flow_ids)
                record["ends"] = list(te.terminating_flow_ids)
            else:
                assert te.type == pb.TrackEvent.TYPE_SLICE_END
            te_packets.append(record)
    # trace_processor sorts by timestamp, keeping file order among equal ones
    order = sorted(range(len(te_packets)), key=lambda k: te_packets[k]["ts"])
    stacks = defaultdict(list)
    slices = []
    for k in order:
        r = te_packets[k]
        if r["type"] == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stacks[r["uuid"]].append(r)
        else:
            begin = stacks[r["uuid"]].pop()
            slices.append({"uuid": r["uuid"], "name": begin["name"], "ts": begin["ts"],
                           "dur": r["ts"] - begin["ts"], "args": begin["args"],
                           "flows": begin["flows"], "ends": begin["ends"]})
    assert not any(stacks.values()), "slices left open"
    return pd.DataFrame(slices, columns=["uuid", "name", "ts", "dur", "args", "flows",
                                         "ends"]), processes, threads


def expected_args(prof, event_ids) -> dict:
    """{event id: {key: value}} of the events ``event_ids``: their own stats from ``prof.stat``
    (a stat the event carries again keyed ``name #2``...), then their event metadata's
    (``metadata.name``), read from the metadata's stat rows."""
    names = set()
    for host in prof.hosts:
        st = prof.spaces[host].stats
        names.update(st.names[c] for c in np.unique(st.name_code[st.owner_kind == 0]).tolist())
    out = {int(e): {} for e in event_ids}
    wanted = pd.Index(list(out))
    for name in sorted(names):
        values = prof.stat(name)
        values = values[values.index.isin(wanted)]
        nth = values.groupby(level=0).cumcount().to_numpy() + 1
        for (event, value), k in zip(values.items(), nth.tolist()):
            key = name if k == 1 else f"{name} #{k}"
            out[int(event)][key] = value.item() if hasattr(value, "item") else value
    for event in out:
        out[event].update(_metadata_args(prof, event))
    return out


def _metadata_args(prof, event: int) -> dict:
    """{metadata.name: value} of the stats of event ``event``'s event metadata."""
    host = prof.events.host.iloc[event]
    space = prof.spaces[host]
    md = int(space.events.metadata_row[event - prof.event_offsets[host]])
    st = space.stats
    rows = np.flatnonzero((st.owner_kind == 1) & (st.owner == md)) if md >= 0 else []
    return {f"metadata.{st.names[st.name_code[r]]}": stat_value(st, r) for r in rows}


def ns(ps) -> np.ndarray:
    """Picoseconds to the nearest nanosecond (halves up), as the Perfetto export rounds."""
    return (np.asarray(ps, np.int64) + 500) // 1000
