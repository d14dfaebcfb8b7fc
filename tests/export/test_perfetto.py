"""Perfetto protobuf export, parsed with the perfetto package's own protobuf classes and
replayed as trace_processor reads it: every event back, on its track, with its stats."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.trace.event_arguments import value_text

from .readers import expected_args, ns, perfetto_pb2, read_perfetto
from .test_chrome import thread_names


@pytest.fixture(scope="module", params=["cpu", "gpu"])
def prof(request):
    name = "cpu_file" if request.param == "cpu" else "gpu_fixture_file"
    return tp.load(request.getfixturevalue(name))


@pytest.fixture(scope="module")
def exported(prof, tmp_path_factory):
    perfetto_pb2()  # skips without the perfetto package
    path = prof.to_perfetto(tmp_path_factory.mktemp("perfetto") / "t.perfetto-trace")
    slices, processes, threads = read_perfetto(path)
    slices["thread"] = [threads[u][0] for u in slices.uuid]
    slices["process"] = [processes_of(processes)[threads[u][1]] for u in slices.uuid]
    return path, slices, processes, threads


def processes_of(processes: dict) -> dict:
    return {pid: name for name, pid in processes.values()}


def expected_slices(prof) -> pd.DataFrame:
    """Every event and step as (process, thread, name, ts, dur) in ns."""
    ev = prof.events
    start, end = ns(ev.start_ps), ns(ev.start_ps + ev.duration_ps)
    events = pd.DataFrame({
        "process": ev.host.astype(str).to_numpy() + " " + ev.plane.astype(str).to_numpy(),
        "thread": thread_names(prof).to_numpy(), "name": ev.name.astype(str).to_numpy(),
        "ts": start, "dur": end - start})
    st = prof.steps
    s_start = ns(np.round(st.start_us.to_numpy() * 1e6))
    s_end = ns(np.round(st.start_us.to_numpy() * 1e6) + np.round(st.duration_ms * 1e9))
    steps = pd.DataFrame({"process": [f"{h} /host:CPU" for h in st.host], "thread": "Steps",
                          "name": [f"step {s}" for s in st.index], "ts": s_start,
                          "dur": s_end - s_start})
    return pd.concat([events, steps], ignore_index=True)


def test_every_event_on_its_track(prof, exported):
    _, slices, processes, threads = exported
    assert len(slices) == len(prof.events) + len(prof.steps)
    want = expected_slices(prof)
    assert int(want.ts.min()) >= 0  # no shift needed for these captures
    columns = ["process", "thread", "name", "ts", "dur"]
    assert Counter(map(tuple, slices[columns].itertuples(index=False))) == \
        Counter(map(tuple, want[columns].itertuples(index=False)))
    # durations agree with the events' to the rounding of both ends to the ns
    assert np.abs(want.dur.to_numpy()[:len(prof.events)] -
                  prof.events.duration_ps.to_numpy() / 1e3).max() <= 1


def test_tracks(prof, exported):
    _, _, processes, threads = exported
    pids = [pid for _, pid in processes.values()]
    assert len(set(pids)) == len(pids)
    assert {pid for _, pid, _ in threads.values()} <= set(pids)
    tids = [tid for _, _, tid in threads.values()]
    assert len(set(tids)) == len(tids)
    assert not set(tids) & set(pids)  # a tid equal to a pid would be that process's main thread
    assert len(threads) == len(prof.lines) + prof.steps.host.nunique()
    assert set(processes_of(processes).values()) >= {
        f"{h} {p}" for h, p in zip(prof.events.host.astype(str), prof.events.plane.astype(str))}


def test_names_interned_once(prof, exported):
    pb = perfetto_pb2()
    path = exported[0]
    trace = pb.Trace.FromString(path.read_bytes())
    interned = [e.name for p in trace.packet for e in p.interned_data.event_names]
    assert len(interned) == len(set(interned))
    assert set(interned) >= set(prof.events.name.astype(str))
    # no begin or end carries its name as a string
    assert not any(p.track_event.HasField("name") for p in trace.packet)


def test_stats_as_debug_annotations(prof, exported):
    _, slices, _, _ = exported
    ev = prof.events
    want = expected_slices(prof).iloc[:len(ev)]
    keyed = slices.set_index(["process", "thread", "name", "ts", "dur"]).sort_index()
    unique = ~want.duplicated(keep=False)
    rng = np.random.default_rng(1)
    candidates = np.flatnonzero(unique.to_numpy())
    sample = rng.choice(candidates, size=min(300, len(candidates)), replace=False)
    stats = expected_args(prof, sample)
    checked = 0
    for event, expected in stats.items():
        row = keyed.loc[tuple(want.iloc[event])]
        args = row.args.iloc[0] if isinstance(row, pd.DataFrame) else row.args
        assert set(args) == set(expected), event
        for name, value in expected.items():
            got = args[name]
            if isinstance(value, (int, np.integer)) and value < 0 and got >= 2**63:
                got -= 2**64  # a uint64 stat prof.stat shows as its int64 bit pattern
            if isinstance(value, bytes):
                value = value_text(value)
            assert got == value, (event, name, got, value)
            checked += 1
    assert checked > 100


def test_steps_annotations(prof, exported):
    _, slices, _, _ = exported
    steps = slices[(slices.thread == "Steps") & slices.process.str.endswith(" /host:CPU")]
    assert len(steps) == len(prof.steps)
    for (step, row), args in zip(prof.steps.iterrows(), steps.sort_values("ts").args):
        assert args["step"] == step and args["step_name"] == row.step_name
        assert args["host_compute_ms"] == row.host_compute_ms


def test_smaller_than_json(prof, exported, tmp_path):
    json_size = prof.to_chrome_trace(tmp_path / "t.json").stat().st_size
    assert exported[0].stat().st_size < 0.6 * json_size


def _links(prof) -> set:
    """(source event, end event, kind) of every link the trace viewer draws."""
    launch, flow = prof.result("launch_links"), prof.result("flow_links")
    kinds = ("launch", "context", "element")
    return {(int(a), int(b), "launch") for a, b in zip(launch.launch_event, launch.kernel_event)} \
        | {(int(a), int(b), kinds[k + 1]) for a, b, k in
           zip(flow.producer_event, flow.consumer_event, flow.kind)}


def test_links_as_flows(prof, exported):
    """Every link the trace viewer draws (a launch and its kernel, a producer and its
    consumer) is one flow: its id in the flow_ids of the source's slice and in the
    terminating_flow_ids of its end's, each id once; the slices are the linked events' (by
    track, start and name: events alike there are one)."""
    _, slices, _, _ = exported
    links = _links(prof)
    assert links or prof.result("environment")["device_type"] == "CPU"
    starts = {i: k for k, ids in zip(slices.index, slices.flows) for i in ids}
    ends = {i: k for k, ids in zip(slices.index, slices.ends) for i in ids}
    assert sum(map(len, slices.flows)) == sum(map(len, slices.ends)) == len(links)
    assert starts.keys() == ends.keys() == set(range(1, len(links) + 1))
    want = expected_slices(prof)
    place = list(zip(want.process, want.thread, want.name, want.ts))  # (event k: row k)
    row = slices.assign(process=slices.process, thread=slices.thread)

    def key(k):
        r = row.loc[k]
        return r.process, r.thread, r["name"], r.ts

    got = Counter((key(starts[i]), key(ends[i])) for i in starts)
    assert got == Counter((place[a], place[b]) for a, b, _ in links)
