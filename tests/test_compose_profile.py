"""benchmarks/compose_profile.py: composed profiles decode, with TensorFlow's own protobuf, to
K time-shifted copies of the source's events whose ID stats move on by one stride per copy (and
the pod to byte copies of the source)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import compose_profile  # noqa: E402

xplane_pb2 = pytest.importorskip("tensorflow.tsl.profiler.protobuf.xplane_pb2")


def parse(path: Path):
    space = xplane_pb2.XSpace()
    space.ParseFromString(Path(path).read_bytes())
    return space


def plane_stats(plane) -> dict:
    names = {k: v.name for k, v in plane.stat_metadata.items()}
    return {names[s.metadata_id]: s for s in plane.stats}


def line_key(line) -> tuple:
    return line.id, line.display_id, line.name, line.display_name, line.timestamp_ns


ID_STATS = ("_p", "_c", "correlation_id", "step_num", "iter_num", "element_id", "group_id")
INTS = ("uint64_value", "int64_value")


def id_stat(names: dict, stat):
    """(name, value field) of an event stat the composer moves on per copy, else None."""
    name, which = names.get(stat.metadata_id), stat.WhichOneof("value")
    return (name, which) if name in ID_STATS and which in INTS else None


def expected_strides(space) -> dict:
    """The rule, computed here from TF's parse: largest event-stat value (all planes) plus one,
    ``_p`` and ``_c`` sharing theirs, modulo 2**64 (0 -> 1)."""
    top: dict = {}
    for plane in space.planes:
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                for stat in event.stats:
                    if found := id_stat(names, stat):
                        group = "_p" if found[0] in ("_p", "_c") else found[0]
                        value = getattr(stat, found[1])
                        top[group] = max(top.get(group, value), value)
    strides = {n: (top[n] + 1) % 2**64 or 1 for n in top}
    if "_p" in strides:
        strides["_c"] = strides["_p"]
    return strides


def moved(value: int, which: str, copy: int, stride: int) -> int:
    """``value + copy * stride`` as the field holds it (uint64 / int64 wrap-around)."""
    bits = (value + copy * stride) % 2**64
    return bits - 2**64 if which == "int64_value" and bits >= 2**63 else bits


def event_view(plane, line, event, shift_ps: int = 0, copy: int = 0, strides=None) -> tuple:
    """What a copy must keep: name, start (less the shift; aggregated events don't move),
    duration, occurrences, stats. With ``strides``, ``event`` is a source event seen as copy
    ``copy`` must hold it: its ID stats moved on by ``copy`` strides, its other stats as bytes.
    Without, the stats as they are (ID stats as values, others as bytes)."""
    occurrences = event.num_occurrences if event.WhichOneof("data") == "num_occurrences" else 0
    start = line.timestamp_ns * 1000 + event.offset_ps - (0 if occurrences else shift_ps)
    names = {k: v.name for k, v in plane.stat_metadata.items()}
    stats = []
    for s in event.stats:
        found = id_stat(names, s)
        if found is None:
            stats.append(s.SerializeToString())
        else:
            value = getattr(s, found[1])
            if strides is not None:
                value = moved(value, found[1], copy, strides[found[0]])
            stats.append((s.metadata_id,) + found + (value,))
    return (plane.event_metadata[event.metadata_id].name, start, event.duration_ps, occurrences,
            stats)


def check_copies(src, out, k: int, span: int, strides: dict) -> int:
    """Assert ``out`` is ``src`` with every line's events repeated k times, copy c shifted by
    c * span and its ID stats moved on by c * strides[name] (other stats byte for byte);
    return the number of events checked."""
    assert len(out.planes) == len(src.planes)
    assert list(out.hostnames) == list(src.hostnames)
    checked = 0
    for a, b in zip(src.planes, out.planes):
        assert (a.id, a.name) == (b.id, b.name)
        assert a.event_metadata == b.event_metadata and a.stat_metadata == b.stat_metadata
        assert [line_key(x) for x in a.lines] == [line_key(x) for x in b.lines]
        for la, lb in zip(a.lines, b.lines):
            n = len(la.events)
            assert len(lb.events) == k * n
            for c in range(k):
                want = [event_view(a, la, e, 0, c, strides) for e in la.events]
                got = [event_view(b, lb, e, c * span) for e in lb.events[c * n:(c + 1) * n]]
                assert got == want, f"{a.name}/{la.name}: copy {c} differs"
            starts = [event_view(a, la, e)[1] for e in la.events]
            if starts == sorted(starts):  # sorted source line
                starts = [e.offset_ps for e in lb.events]
                assert starts == sorted(starts)
            checked += len(lb.events)
    return checked


def test_long_host_repeats_a_real_capture(cpu_file, tmp_path):
    out = tmp_path / "long.xplane.pb"
    size = cpu_file.stat().st_size
    res = compose_profile.compose_long_host(cpu_file, out, int(3.5 * size))
    assert res["bytes"] == out.stat().st_size >= 3.5 * size
    k, span = res["k"], res["span_ps"]
    assert k >= 4
    src, got = parse(cpu_file), parse(out)
    strides = expected_strides(src)
    assert {"_p", "_c", "step_num", "iter_num", "element_id"} <= set(strides)
    assert res["strides"] == strides and strides["_p"] == strides["_c"]
    assert set(res["id_collisions"].values()) == {0}
    assert check_copies(src, got, k, span, strides) == res["events"] > 0

    def step_nums(space) -> list:
        found = []
        for plane in space.planes:
            names = {i: m.name for i, m in plane.stat_metadata.items()}
            for line in plane.lines:
                for e in line.events:
                    if plane.event_metadata[e.metadata_id].name == "train":
                        found += [s.int64_value for s in e.stats
                                  if names[s.metadata_id] == "step_num"]
        return found

    src_steps, steps = step_nums(src), step_nums(got)
    assert len(src_steps) >= 2 and len(steps) == k * len(src_steps)
    assert len(set(steps)) == len(steps)  # every copy's train steps are new steps

    ends = [ln.timestamp_ns * 1000 + e.offset_ps + e.duration_ps
            for p in got.planes for ln in p.lines for e in ln.events]
    starts = [ln.timestamp_ns * 1000 + e.offset_ps
              for p in src.planes for ln in p.lines for e in ln.events]
    src_ends = [ln.timestamp_ns * 1000 + e.offset_ps + e.duration_ps
                for p in src.planes for ln in p.lines for e in ln.events]
    assert span > max(src_ends) - min(starts)  # copies never overlap
    env_src = plane_stats(next(p for p in src.planes if p.name == "Task Environment"))
    env = plane_stats(next(p for p in got.planes if p.name == "Task Environment"))
    start = env["profile_start_time"].uint64_value
    assert start == env_src["profile_start_time"].uint64_value
    assert env["profile_stop_time"].uint64_value == start + k * span // 1000
    assert max(ends) <= k * span  # event times are relative to the profile start
    for name in env_src:
        if name != "profile_stop_time":
            assert env[name] == env_src[name]


def synthetic_space():
    """A small XSpace with the shapes a capture rarely has: aggregated events (num_occurrences),
    events with no offset at all, zero durations, events over 127 bytes, a line duration, a
    negative line timestamp, and a Task Environment with a stop time only. ID stats: a linked
    ``_p``/``_c`` pair, uint64 ids near 2**64 and int64 ones that wrap, a negative one, ID names
    holding a string or a reference (kept), ID names in metadata and plane stats (kept), a stat
    metadata map key that differs from its id, and an event that crosses 127 bytes as its
    step_num grows."""
    space = xplane_pb2.XSpace(hostnames=["h"], warnings=["w"])
    plane = space.planes.add(id=7, name="/host:CPU")
    plane.event_metadata[1].id, plane.event_metadata[1].name = 1, "op"
    for key, name in [(5, "note"), (6, "_p"), (7, "_c"), (8, "step_num"), (9, "element_id"),
                      (10, "group_id"), (11, "_pt"), (12, "correlation_id")]:
        plane.stat_metadata[key].id, plane.stat_metadata[key].name = key, name
    plane.stat_metadata[14].id, plane.stat_metadata[14].name = 99, "iter_num"  # key != id
    plane.event_metadata[1].stats.add(metadata_id=8, int64_value=7)  # metadata stat: kept
    ids = [dict(_p=("int64_value", 78)), dict(_c=("int64_value", 78)),
           dict(_p=("uint64_value", 2**64 - 10)), dict(_c=("uint64_value", 2**64 - 10)),
           dict(_c=("int64_value", 5)), dict(element_id=("int64_value", -3)),
           dict(group_id=("str_value", "g")), dict(correlation_id=("ref_value", 5)),
           dict(_pt=("int64_value", 3), iter_num=("int64_value", 0)),
           dict(correlation_id=("uint64_value", 12), group_id=("int64_value", 2**62))]
    key_of = {m.name: k for k, m in plane.stat_metadata.items()}
    a = plane.lines.add(id=1, name="a", display_name="A", timestamp_ns=100, duration_ps=90_000)
    for i in range(10):
        e = a.events.add(metadata_id=1, offset_ps=2**i * 1000, duration_ps=(i % 3) * 10)
        e.stats.add(metadata_id=5, str_value="x" * (40 * i))
        e.stats.add(metadata_id=8, int64_value=14 * i)
        for name, (which, value) in ids[i].items():
            setattr(e.stats.add(metadata_id=key_of[name]), which, value)
    a.events.add(metadata_id=1, num_occurrences=3, duration_ps=5)
    a.events.add(metadata_id=1, duration_ps=5)  # no offset: 0
    b = plane.lines.add(id=2, name="b", timestamp_ns=-50)
    e = b.events.add(metadata_id=1, offset_ps=60_000, duration_ps=1)
    e.stats.add(metadata_id=8, int64_value=100)
    pad = e.stats.add(metadata_id=5, str_value="")
    while e.ByteSize() < 127:  # a 1-byte length prefix in the source, 2 bytes in later copies
        pad.str_value += "y"
    assert e.ByteSize() == 127
    plane.lines.add(id=3, name="empty")
    plane.stats.add(metadata_id=5, int64_value=-3)
    plane.stats.add(metadata_id=8, int64_value=4)  # plane stat: kept
    env = space.planes.add(id=0, name="Task Environment")
    env.stat_metadata[2].id, env.stat_metadata[2].name = 2, "profile_stop_time"
    env.stats.add(metadata_id=2, uint64_value=10**18)
    return space


def raw_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field, encoded by hand."""
    return compose_profile.key(number, 2) + compose_profile.encode_varint(len(payload)) + payload


def unordered_plane() -> bytes:
    """An XPlane entry (XSpace field 1) whose events put their fields out of the usual order:
    a step_num stat whose value ends right where the offset field begins, and an event with no
    offset whose first field is a ``_p`` stat holding its value before its metadata id (the
    offset is inserted at the event's very start)."""
    X = xplane_pb2
    plane = X.XPlane(id=9, name="/host:unordered")
    plane.event_metadata[1].id, plane.event_metadata[1].name = 1, "op"
    for key, name in [(6, "_p"), (8, "step_num")]:
        plane.stat_metadata[key].id, plane.stat_metadata[key].name = key, name
    first = (raw_field(4, X.XStat(metadata_id=8, int64_value=300).SerializeToString())
             + X.XEvent(offset_ps=500, duration_ps=7).SerializeToString()
             + X.XEvent(metadata_id=1).SerializeToString())
    second = (raw_field(4, X.XStat(int64_value=9).SerializeToString()
                        + X.XStat(metadata_id=6).SerializeToString())
              + X.XEvent(duration_ps=4).SerializeToString()
              + X.XEvent(metadata_id=1).SerializeToString())
    line = (X.XLine(id=1, name="r", timestamp_ns=10).SerializeToString()
            + raw_field(4, first) + raw_field(4, second))
    return raw_field(1, plane.SerializeToString() + raw_field(3, line))


def test_long_host_edge_cases(tmp_path, monkeypatch):
    monkeypatch.setattr(compose_profile, "CHUNK_EVENTS", 3)  # blocks split mid-line
    src = tmp_path / "src.xplane.pb"
    src.write_bytes(synthetic_space().SerializeToString() + unordered_plane())
    source = parse(src)
    out = tmp_path / "out.xplane.pb"
    res = compose_profile.compose_long_host(src, out, 5 * src.stat().st_size)
    k, span = res["k"], res["span_ps"]
    assert k >= 5 and res["events"] == 15 * k
    strides = expected_strides(source)
    assert strides == {"_p": 2**64 - 9, "_c": 2**64 - 9, "step_num": 301, "element_id": 2**64 - 2,
                       "iter_num": 1, "correlation_id": 13, "group_id": 2**62 + 1}
    assert res["strides"] == strides
    assert set(res["id_collisions"].values()) == {0}
    got = parse(out)
    check_copies(source, got, k, span, strides)
    line = got.planes[0].lines[0]
    assert line.duration_ps == 90_000 + (k - 1) * span
    assert [e.WhichOneof("data") for e in line.events[10:12]] == ["num_occurrences", "offset_ps"]
    assert line.events[10].num_occurrences == 3 and line.events[11 + 12].offset_ps == span
    assert got.planes[0].stats == synthetic_space().planes[0].stats
    assert got.planes[0].event_metadata == synthetic_space().planes[0].event_metadata
    assert got.planes[1].stats[0].uint64_value == 10**18 + (k - 1) * span // 1000
    # the producer/consumer pair stays linked within a copy, and only there
    pairs = [(line.events[12 * c].stats[2].int64_value,
              line.events[12 * c + 1].stats[2].int64_value) for c in range(k)]
    assert all(p == q for p, q in pairs) and len({p for p, _ in pairs}) == k
    assert pairs[1][0] == 78 - 9  # 78 + (2**64 - 9), as an int64
    big = got.planes[0].lines[1].events
    assert [e.ByteSize() > 127 for e in big] == [False] + [True] * (k - 1)
    assert [e.stats[0].int64_value for e in big] == [100 + 301 * c for c in range(k)]
    unordered = got.planes[2].lines[0].events
    assert [e.stats[0].int64_value for e in unordered[::2]] == [300 + 301 * c for c in range(k)]
    assert [e.stats[0].int64_value for e in unordered[1::2]] == [9 - 9 * c for c in range(k)]


def test_pod_is_byte_copies(cpu_file, tmp_path):
    paths = compose_profile.compose_pod(cpu_file, tmp_path / "run", hosts=3)
    assert [p.name for p in paths] == [f"worker-{i}.xplane.pb" for i in range(3)]
    assert all(p.read_bytes() == cpu_file.read_bytes() for p in paths)
