"""Exports of a synthetic XSpace with hostile names and values, metadata stats, slices that
do not nest on their line and an event before the profile start."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tfprof_nb as tp

from .readers import chrome_tables, expected_args, perfetto_pb2, read_chrome, read_perfetto
from .test_chrome import _same

NASTY = ['<script>alert("x")</script>', 'back\\slash "quoted" & <b>bold</b>',
         "ctl\x00\x01\x1f\t\n\r end", "naïve ☃ 𝄞 日本語", "\u2028line\u2029sep",
         "it's </script><!--", ""]
LINE = 'thread </script> "t"\\'
# stat name -> (XStat field, value)
STATS = {'key "quoted" <k>': ("str_value", NASTY[0]), "control\x01key": ("str_value", NASTY[2]),
         "neg": ("int64_value", -(2**63)), "small": ("int64_value", -7),
         "big": ("uint64_value", 2**64 - 1), "inf": ("double_value", math.inf),
         "nan": ("double_value", math.nan), "negzero": ("double_value", -0.0),
         "tiny": ("double_value", 5e-324), "blob": ("bytes_value", b"\x00\xff<"),
         "unicode ☃": ("str_value", NASTY[3])}
OVERLAPPING = [(0, 10), (5, 15), (6, 7), (20, 30)]  # (start, end) in us


def _space() -> bytes:
    xplane_pb2 = pytest.importorskip("tensorflow.tsl.profiler.protobuf.xplane_pb2")
    space = xplane_pb2.XSpace()
    plane = space.planes.add(name="/host:CPU", id=0)
    stat_ids = {}
    for i, name in enumerate([*STATS, "md", "ref target"], start=1):
        plane.stat_metadata[i].id = i
        plane.stat_metadata[i].name = name
        stat_ids[name] = i
    line = plane.lines.add(id=1, name=LINE, timestamp_ns=0)
    for i, name in enumerate(NASTY, start=1):
        md = plane.event_metadata[i]
        md.id, md.name = i, name
        md.stats.add(metadata_id=stat_ids["md"], str_value=f"metadata <{i}>")
        ev = line.events.add(metadata_id=i, offset_ps=i * 2_000_000, duration_ps=1_000_000)
        for stat, (kind, value) in STATS.items():
            ev.stats.add(metadata_id=stat_ids[stat], **{kind: value})
        if i == 2:  # the event's own value beside its metadata's
            ev.stats.add(metadata_id=stat_ids["md"], str_value="own <value>")
        if i == 3:
            ev.stats.add(metadata_id=stat_ids["small"], ref_value=stat_ids["ref target"])
    before = line.events.add(metadata_id=1, offset_ps=-500_000, duration_ps=250_000)
    before.stats.add(metadata_id=stat_ids["small"], int64_value=1)
    # a uint64 where the stat is int64 elsewhere: prof.stat shows its int64 bits, -5
    before.stats.add(metadata_id=stat_ids["neg"], uint64_value=2**64 - 5)
    other = plane.lines.add(id=2, name="overlapping", timestamp_ns=100_000)
    for k, (a, b) in enumerate(OVERLAPPING, start=100):
        plane.event_metadata[k].id = k
        plane.event_metadata[k].name = f"o{a}-{b}"
        other.events.add(metadata_id=k, offset_ps=a * 10**6, duration_ps=(b - a) * 10**6)
    gpu = space.planes.add(name="/device:GPU:0", id=1)
    gpu.event_metadata[1].id = 1
    gpu.event_metadata[1].name = NASTY[1]
    gpu.lines.add(id=7, name="Stream #7", timestamp_ns=0).events.add(
        metadata_id=1, offset_ps=3_000_000, duration_ps=1_500_000)
    return space.SerializeToString()


@pytest.fixture(scope="module")
def prof(tmp_path_factory):
    path = tmp_path_factory.mktemp("synthetic") / "nasty.xplane.pb"
    path.write_bytes(_space())
    return tp.load(path)


def _args_by_name(x):
    return {name: args for name, args in zip(x.name, x.args)}


def test_chrome_round_trip(prof, tmp_path):
    path = prof.to_chrome_trace(tmp_path / "nasty.json")
    raw = path.read_bytes()
    for bad in (b"<", b">", "\u2028".encode(), "\u2029".encode()):
        assert bad not in raw  # safe to embed in an HTML page
    x, processes, threads = chrome_tables(read_chrome(path))
    ev = prof.events
    n = len(ev)
    assert list(x.name[:n]) == list(ev.name.astype(str))
    assert set(NASTY) <= set(x.name)
    assert np.array_equal(x.ts[:n].to_numpy(np.float64), ev.start_us.to_numpy())
    assert x.ts.min() == -0.5  # the event before the profile start keeps its time
    assert LINE in threads.values()
    assert "/host:CPU" in " ".join(processes.values())
    args = x.args[0]  # NASTY[0]'s event, with every kind of value
    assert args['key "quoted" <k>'] == NASTY[0] and args["control\x01key"] == NASTY[2]
    assert args["unicode ☃"] == NASTY[3]
    assert args["neg"] == str(-(2**63)) and args["small"] == -7
    assert args["big"] == str(2**64 - 1)  # beyond 2**53: a string, every digit kept
    assert args["inf"] == "inf" and args["nan"] == "nan"
    assert args["negzero"] == 0 and math.copysign(1, args["negzero"]) < 0
    assert args["tiny"] == 5e-324 and args["blob"] == "00ff3c"
    assert args["metadata.md"] == "metadata <1>"  # the event metadata's stat
    assert x.args[1]["md"] == "own <value>"  # the event's own stat, and its metadata's
    assert x.args[1]["metadata.md"] == "metadata <2>"
    assert x.args[2]["small #2"] == "ref target"  # a ref: the referenced stat's name
    assert x.args[2]["small"] == -7  # (a stat carried twice: both, the second numbered)
    assert x.args[len(NASTY)]["neg"] == str(2**64 - 5)
    assert prof.stat("neg").iloc[-1] == -5
    # and every arg of every event is what prof.stat says
    for event, stats in expected_args(prof, range(n)).items():
        assert set(x.args[event]) == set(stats)
        for name, value in stats.items():
            if name not in ("inf", "nan"):  # JSON has no such numbers: strings
                assert _same(x.args[event][name], value), (event, name)


def test_overlapping_slices_get_their_own_thread(prof, tmp_path):
    x, _, threads = chrome_tables(read_chrome(prof.to_chrome_trace(tmp_path / "o.json")))
    by_thread = {}
    for pid, tid, name in zip(x.pid, x.tid, x.name):
        by_thread.setdefault(threads[(pid, tid)], []).append(name)
    assert sorted(by_thread["overlapping"]) == ["o0-10", "o20-30", "o6-7"]
    assert by_thread["overlapping (overlap 1)"] == ["o5-15"]
    # the extra thread is listed next to its line
    tids = {name: tid for (_, tid), name in threads.items()}
    assert tids["overlapping (overlap 1)"] == tids["overlapping"] + 1


def test_perfetto_round_trip(prof, tmp_path):
    perfetto_pb2()
    slices, processes, threads = read_perfetto(prof.to_perfetto(tmp_path / "nasty.pftrace"))
    ev = prof.events
    assert sorted(slices.name) == sorted(ev.name.astype(str))
    thread = [threads[u][0] for u in slices.uuid]
    assert LINE in thread and "overlapping (overlap 1)" in thread
    # every time shifted by the 500 ns before the profile start; durations kept
    got = dict(zip(slices.name, zip(slices.ts, slices.dur)))
    assert slices.ts.min() == 0
    assert got["o5-15"] == (100_000 + 5_000 + 500, 10_000)
    assert got["o6-7"] == (100_000 + 6_000 + 500, 1_000)
    assert got["o0-10"] == (100_000 + 500, 10_000)
    args = _args_by_name(slices)[NASTY[0]]
    assert args['key "quoted" <k>'] == NASTY[0] and args["unicode ☃"] == NASTY[3]
    assert args["neg"] == -(2**63) and args["big"] == 2**64 - 1 and args["small"] == -7
    assert math.isinf(args["inf"]) and math.isnan(args["nan"]) and args["tiny"] == 5e-324
    assert args["blob"] == "00ff3c" and args["metadata.md"] == "metadata <1>"


def test_profile_without_events(tmp_path):
    from ..analysis.test_edge_profiles import CASES
    from ..analysis.test_edge_profiles import _space as edge_space

    path = tmp_path / "empty.xplane.pb"
    path.write_bytes(edge_space(CASES["empty_planes"]))
    prof = tp.load(path)
    assert len(prof.events) == 0
    trace = read_chrome(prof.to_chrome_trace(tmp_path / "e.json"))
    assert trace["traceEvents"] == []
    perfetto_pb2()
    slices, processes, threads = read_perfetto(prof.to_perfetto(tmp_path / "e.pftrace"))
    assert len(slices) == 0 and not processes and not threads
