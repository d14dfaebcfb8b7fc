"""The decoder's limits are errors that say what they are, never wrapped numbers: at most
2^31 - 1 rows of each table per host (the 32-bit row columns), and event times within 2^61 ps
of the profile's start (so every later sum and doubling of a time fits in 64 bits)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb._native.layout import TIME_LIMIT_PS
from tfprof_nb.xspace import decode_xspace

DATA = Path(__file__).resolve().parents[1] / "data"
SMALL = DATA / "mi300x_jax08_gemm.xplane.pb"


@pytest.fixture
def row_limit(monkeypatch):
    """Sets the row limit of the decodes this test starts (each decode takes it)."""
    from tfprof_nb.xspace import decoder

    return lambda rows: monkeypatch.setattr(decoder, "ROW_LIMIT", rows)


def test_too_many_events_for_one_host(row_limit, tmp_path):
    raw = SMALL.read_bytes()
    n_events = len(decode_xspace(raw).events)
    row_limit(n_events - 1)
    with pytest.raises(tp.ProfileFormatError) as err:
        decode_xspace(raw, path="big.xplane.pb")
    message = str(err.value)
    assert message.startswith("big.xplane.pb: too many events for one host (limit 2^31)")
    assert f"{n_events:,} events" in message
    path = tmp_path / "big.xplane.pb"
    path.write_bytes(raw)
    with pytest.raises(tp.ProfileFormatError, match=r"too many events for one host"):
        tp.load(path)
    row_limit(n_events)  # at the limit: decodes
    assert len(decode_xspace(raw).events) == n_events


def test_too_many_stats_for_one_host(row_limit):
    raw = (DATA / "mi355x_jax_te_fused_attn.xplane.pb").read_bytes()
    space = decode_xspace(raw)
    n_events, n_stats = len(space.events), len(space.stats.kind)
    assert n_stats > n_events
    row_limit(n_events + 1)
    with pytest.raises(tp.ProfileFormatError, match=r"too many events for one host \(limit "
                                                    rf"2\^31\): {n_stats:,} stats"):
        decode_xspace(raw, path="many_stats.xplane.pb")


def _space():
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(SMALL.read_bytes())
    return space


def _line_with_events(space):
    for plane in space.planes:
        for line in plane.lines:
            if len(line.events) > 2:
                return plane, line
    raise AssertionError("no line with events")


@pytest.mark.parametrize("field, value", [("offset_ps", 2**62), ("offset_ps", -2**63),
                                          ("duration_ps", 2**63 - 1),
                                          ("duration_ps", TIME_LIMIT_PS), ("duration_ps", -1)])
def test_event_times_out_of_range(field, value):
    space = _space()
    plane, line = _line_with_events(space)
    setattr(line.events[1], field, value)
    with pytest.raises(tp.ProfileFormatError) as err:
        decode_xspace(space.SerializeToString(), path="times.xplane.pb")
    message = str(err.value)
    assert "an event's time is out of range" in message and "(26.7 days)" in message
    assert f"line {line.name!r} on plane {plane.name!r}" in message
    assert f"{field} {value:,}" in message  # the file's own numbers, not wrapped ones


def test_line_timestamp_out_of_range():
    space = _space()
    plane, line = _line_with_events(space)
    line.timestamp_ns = 2**63 - 1
    with pytest.raises(tp.ProfileFormatError, match=rf"timestamp_ns is {2**63 - 1:,}"):
        decode_xspace(space.SerializeToString(), path="line.xplane.pb")


def test_a_far_line_is_refused_whatever_its_offsets():
    """A line 3e15 ns (35 days) late whose events' offsets bring them back to their true
    times: each sum is in range, but the line's start is not, so the file is refused (never
    decoded with a clamped start)."""
    space = _space()
    plane, line = _line_with_events(space)
    line.timestamp_ns += 3 * 10**15
    for ev in line.events:
        ev.offset_ps -= 3 * 10**18
    with pytest.raises(tp.ProfileFormatError, match="an event's time is out of range"):
        decode_xspace(space.SerializeToString(), path="far.xplane.pb")


def test_sums_of_durations_saturate_instead_of_wrapping(tmp_path):
    """Three nested events of one TensorFlow op, each within +-2^61 ps: their durations sum
    past int64 in the op table, which saturates (a huge, positive total), never wraps."""
    space = _space()
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    line = max(plane.lines, key=lambda ln: len(ln.events))
    ref = decode_xspace(SMALL.read_bytes())
    line_start = int(ref.events.line_start_ps[ref.line_names.index(line.name)])
    mid = max(plane.event_metadata) + 1
    plane.event_metadata[mid].id = mid
    plane.event_metadata[mid].name = "myop:MatMul"
    for i in range(3):
        ev = line.events.add()
        ev.metadata_id, ev.offset_ps = mid, -TIME_LIMIT_PS - line_start + i
        ev.duration_ps = 2 * TIME_LIMIT_PS - 2 * i
    path = tmp_path / "sums.xplane.pb"
    path.write_bytes(space.SerializeToString())
    stats = tp.load(path).op_stats
    row = stats[stats["operation"] == "myop"]
    assert len(row) == 1 and int(row["occurrences"].iloc[0]) == 3
    assert row["total_time_us"].iloc[0] >= (2**63 - 1) / 1e6 * 0.999  # saturated, not wrapped
    assert (stats[["total_time_us", "total_self_time_us"]] >= 0).all().all()


def test_a_far_line_without_events_loads_and_never_wraps():
    space = _space()
    empty = space.planes[0].lines.add()
    empty.id, empty.name, empty.timestamp_ns = 999_999, "far and empty", -2**63
    ours = decode_xspace(space.SerializeToString())
    starts = ours.events.line_start_ps
    i = ours.line_names.index("far and empty")
    assert starts[i] == -TIME_LIMIT_PS - 1  # clamped outside the range, not a wrapped number
    assert np.all(np.abs(np.delete(starts, i)) <= TIME_LIMIT_PS)
    assert len(ours.events) == sum(len(ln.events) for p in space.planes for ln in p.lines)


def test_times_at_the_limit_decode():
    """An event ending exactly TIME_LIMIT_PS after the origin is in range."""
    space = _space()
    plane, line = _line_with_events(space)
    ours = decode_xspace(space.SerializeToString())
    i = ours.line_names.index(line.name)
    line_start = int(ours.events.line_start_ps[i])
    ev = line.events[1]
    ev.offset_ps = TIME_LIMIT_PS - line_start - ev.duration_ps
    again = decode_xspace(space.SerializeToString())
    assert int(again.events.span_ps[1]) == TIME_LIMIT_PS


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def test_a_profile_over_2_gb_decodes_like_its_content(tmp_path):
    """A 2.3 GB file: a real capture whose first plane carries a 2.3 GB field no reader
    knows (a sparse hole on disk, skipped unread), so every plane, line, event and string
    after it lies past 2^31 bytes.  It decodes exactly like the capture itself: no offset or
    length wraps at 32 bits."""
    space = _space()
    pad = 2_300_000_000
    path = tmp_path / "huge.xplane.pb"
    with open(path, "wb") as f:
        for i, plane in enumerate(space.planes):
            body = plane.SerializeToString()
            if i == 0:
                head = _varint(15 << 3 | 2) + _varint(pad)
                f.write(_varint(1 << 3 | 2) + _varint(len(head) + pad + len(body)) + head)
                f.seek(pad, 1)  # (a hole: nothing is written or read there)
            else:
                f.write(_varint(1 << 3 | 2) + _varint(len(body)))
            f.write(body)
        for host in space.hostnames:
            data = host.encode()
            f.write(_varint(4 << 3 | 2) + _varint(len(data)) + data)
    assert path.stat().st_size > 2**31
    ours = tp.load(path)
    ref = tp.load(SMALL)
    a, b = ours.events, ref.events
    assert len(a) == len(b) > 0
    for col in ("name", "start_ps", "duration_ps"):
        assert a[col].tolist() == b[col].tolist()
    assert len(ours.hosts) == len(ref.hosts) == 1
    assert ours.kernel_stats.drop(columns="host").equals(ref.kernel_stats.drop(columns="host"))


def test_task_environment_times_past_int64_are_unknown(tmp_path):
    """profile_start_time / profile_stop_time are uint64 in the file: one past 2^63 - 1 ns is
    no date (and no int64 or pandas timestamp holds it), so it is unknown, not an error."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString((DATA / "jax_h200_nocmdbuf.xplane.pb").read_bytes())
    env = next(p for p in space.planes if p.name == "Task Environment")
    keys = {m.name: k for k, m in env.stat_metadata.items()}
    stop = next(s for s in env.stats if s.metadata_id == keys["profile_stop_time"])
    stop.uint64_value = 2**64 - 1
    path = tmp_path / "stop.xplane.pb"
    path.write_bytes(space.SerializeToString())
    decoded = decode_xspace(path.read_bytes())
    assert decoded.profile_stop_ns is None and decoded.profile_start_ns is not None
    prof = tp.load(path)
    prof.analyse()
    assert "captured" in prof.summary()
