"""Chrome Trace Event Format export: every event back exactly, with its place and stats."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.trace.event_arguments import BYTES_SHOWN

from .readers import chrome_tables, expected_args, read_chrome


@pytest.fixture(scope="module", params=["cpu", "gpu"])
def prof(request):
    name = "cpu_file" if request.param == "cpu" else "gpu_fixture_file"
    return tp.load(request.getfixturevalue(name))


@pytest.fixture(scope="module")
def exported(prof, tmp_path_factory):
    path = prof.to_chrome_trace(tmp_path_factory.mktemp("chrome") / "trace.json")
    return path, read_chrome(path)


def thread_names(prof) -> pd.Series:
    """Expected thread name of every event: its line's display name, else its name."""
    lines = prof.lines
    names = lines.display_name.where(lines.display_name != "", lines.line)
    key = pd.MultiIndex.from_frame(lines[["host", "plane", "line_id"]].astype(str))
    table = pd.Series(names.to_numpy(), index=key)
    ev = prof.events
    return table.reindex(pd.MultiIndex.from_arrays(
        [ev.host.astype(str), ev.plane.astype(str), ev.line_id.astype(str)])).reset_index(
        drop=True)


def test_file_layout(exported):
    path, trace = exported
    assert trace["displayTimeUnit"] == "ns"
    assert path.read_bytes().startswith(b'{"displayTimeUnit":"ns"')
    assert trace["otherData"]["generator"].startswith("tfprof_nb")


def test_every_event_exactly(prof, exported):
    _, trace = exported
    x, processes, threads = chrome_tables(trace)
    ev = prof.events
    n = len(ev)
    assert len(x) == n + len(prof.steps)
    events = x.iloc[:n].reset_index(drop=True)
    assert (events.name.to_numpy() == ev.name.astype(str).to_numpy()).all()
    # exact decimals of the picoseconds: the floats read back are the events' own floats
    assert np.array_equal(events.ts.to_numpy(np.float64), ev.start_us.to_numpy())
    assert np.array_equal(events.dur.to_numpy(np.float64), ev.duration_us.to_numpy())
    assert (events.dur.to_numpy() >= 0).all()
    # each event on its host/plane's process and its line's thread, all named
    assert set(x.pid) <= set(processes)
    assert set(zip(x.pid, x.tid)) <= set(threads)
    got_process = events.pid.map(processes)
    want_process = ev.host.astype(str).to_numpy() + " " + ev.plane.astype(str).to_numpy()
    assert (got_process.to_numpy() == want_process).all()
    got_thread = pd.Series([threads[k] for k in zip(events.pid, events.tid)])
    assert (got_thread == thread_names(prof)).all()
    # one thread per line: tids are unique over the trace
    assert len({tid for _, tid in threads}) == len(threads)
    assert not {tid for _, tid in threads} & set(processes)  # no tid is also a pid
    assert len(threads) == len(prof.lines) + prof.steps.host.nunique()


def test_metadata_sort_indexes(exported):
    _, trace = exported
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    sort = {e["pid"] for e in meta if e["name"] == "process_sort_index"}
    named = {e["pid"] for e in meta if e["name"] == "process_name"}
    assert sort == named
    assert len([e for e in meta if e["name"] == "thread_sort_index"]) == \
        len([e for e in meta if e["name"] == "thread_name"])


def test_steps_track(prof, exported):
    _, trace = exported
    x, processes, threads = chrome_tables(trace)
    steps = prof.steps
    assert len(steps), "the fixtures have steps"
    got = x.iloc[len(prof.events):].reset_index(drop=True)
    assert [threads[k] for k in zip(got.pid, got.tid)] == ["Steps"] * len(steps)
    assert list(got.pid.map(processes)) == [f"{h} /host:CPU" for h in steps.host]
    assert list(got.name) == [f"step {s}" for s in steps.index]
    # times are rounded to the picosecond
    assert np.allclose(got.ts, steps.start_us, rtol=0, atol=1e-6)
    assert np.allclose(got.dur, steps.duration_ms * 1e3, rtol=0, atol=1e-6)
    for args, (step, row) in zip(got.args, steps.iterrows()):
        assert args["step"] == step and args["step_name"] == row.step_name
        assert args["device_compute_ms"] == row.device_compute_ms
        assert args["other_ms"] == row.other_ms
        assert "host" not in args and "start_us" not in args


def _same(arg, value) -> bool:
    """Whether a JSON arg is the value ``prof.stat`` gives (which shows uint64 values mixed
    with int64 ones as their int64 bit pattern)."""
    if isinstance(value, bytes):  # hex digits, a long one's size
        return arg == (value.hex() if len(value) <= BYTES_SHOWN else f"<{len(value)} bytes>")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = int(value)
        got = int(arg) if isinstance(arg, str) else arg
        # a string exactly when beyond 2**53, so that JavaScript keeps every digit
        if not isinstance(got, int) or isinstance(arg, str) != (abs(got) > 2**53):
            return False
        return got == value or (value < 0 and got == value + 2**64)
    return arg == value


def test_stats_as_args(prof, exported):
    _, trace = exported
    x, _, _ = chrome_tables(trace)
    n = len(prof.events)
    rng = np.random.default_rng(0)
    sample = set(rng.choice(n, size=min(n, 300), replace=False).tolist())
    for host in prof.hosts:  # and an event of every stat name
        st = prof.spaces[host].stats
        rows = np.flatnonzero(st.owner_kind == 0)
        _, first = np.unique(st.name_code[rows], return_index=True)
        sample.update((st.owner[rows[first]] + prof.event_offsets[host]).tolist())
    want = expected_args(prof, sorted(sample))
    checked = 0
    for event, stats in want.items():
        args = x.args[event]
        assert set(args) == set(stats), event
        for name, value in stats.items():
            assert _same(args[name], value), (event, name, args[name], value)
            checked += 1
    assert checked > 100


def test_gzip_by_suffix(prof, exported, tmp_path):
    path = prof.to_chrome_trace(tmp_path / "t.json.gz")
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert gzip.decompress(raw) == exported[0].read_bytes()
    forced = prof.to_chrome_trace(tmp_path / "plain.json", compress=True)
    assert forced.read_bytes()[:2] == b"\x1f\x8b"
    unforced = prof.to_chrome_trace(tmp_path / "t2.json.gz", compress=False)
    assert unforced.read_bytes()[:1] == b"{"


def test_gpu_fixture_spans_several_chunks(gpu_fixture_file):
    """The exactness tests above cross chunk seams: the GPU fixture is written in pieces."""
    from tfprof_nb.export import chrome, perfetto
    from tfprof_nb.export._content import trace_content
    from tfprof_nb.export._tracks import track_layout

    content = trace_content(tp.load(gpu_fixture_file))
    bounds = content.annotations.bounds(len(content))
    assert len(chrome._chunk_bounds(bounds, len(content), 8, 3)) > 1
    _, _, rows, _ = perfetto._records(content, track_layout(content))
    assert len(perfetto._chunk_bounds(rows)) > 1


def test_links_as_flows(prof, exported):
    """Every link the trace viewer draws is one flow: an "s" event on its source's thread at
    its start and an "f" event bound to the enclosing slice ("bp": "e") on its end's thread at
    its start, with the link's kind as category; ids from 1, each once."""
    from collections import Counter

    from .test_perfetto import _links

    _, data = exported
    events = data["traceEvents"]
    links = _links(prof)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts.keys() == ends.keys() == set(range(1, len(links) + 1))
    assert all(e["bp"] == "e" and e["cat"] == starts[i]["cat"] for i, e in ends.items())
    # (event k is the k-th slice: its place is its thread and start)
    place = [(e["pid"], e["tid"], e["ts"]) for e in events if e["ph"] == "X"]

    def at(flow):
        return flow["pid"], flow["tid"], flow["ts"]

    got = Counter((at(starts[i]), at(ends[i]), starts[i]["cat"]) for i in starts)
    assert got == Counter((place[a], place[b], kind) for a, b, kind in links)
