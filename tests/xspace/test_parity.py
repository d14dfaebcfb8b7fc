"""The decoder matches TensorFlow's own xplane_pb2 parse, field by field, on real files."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.xspace import decode_xspace, read_xspace

from .reference import (assert_same, canonical_from_ours, canonical_from_tf, framed_count,
                        tf_parse)


@pytest.fixture(params=["gpu_fixture_file", "cpu_file", "cpu_python_file"])
def profile_file(request):
    return request.getfixturevalue(request.param)


def test_every_event_and_stat_matches_tensorflow(profile_file):
    data = profile_file.read_bytes()
    ours = canonical_from_ours(read_xspace(profile_file))
    ref = canonical_from_tf(tf_parse(data))
    assert sum(len(p["events"]) for p in ref["planes"]) > 1000
    assert_same(ours, ref)


def test_all_stat_kinds_are_covered(gpu_fixture_file, cpu_file):
    """The files used above exercise every value kind of XStat."""
    kinds = set()
    for f in (gpu_fixture_file, cpu_file):
        kinds |= set(np.unique(read_xspace(f).stats.kind).tolist())
    assert {1, 2, 3, 4, 5, 6} <= kinds


def test_profile_events_match_tensorflow_times(profile_file):
    """Profile.events: names, lines, durations equal; starts equal up to one common origin."""
    space = tf_parse(profile_file.read_bytes())
    names, lines, starts, durations = [], [], [], []
    for plane in space.planes:
        for line in plane.lines:
            for ev in line.events:
                md = plane.event_metadata.get(ev.metadata_id)
                names.append(md.name if md is not None else "")
                lines.append(line.name)
                starts.append(line.timestamp_ns * 1000 + ev.offset_ps)
                durations.append(ev.duration_ps)
    ev = tp.load(profile_file).events
    assert ev["name"].astype(str).tolist() == names
    assert ev["line"].astype(str).tolist() == lines
    assert ev["duration_ps"].tolist() == durations
    shift = ev["start_ps"].to_numpy() - np.array(starts, dtype=np.int64)
    assert len(np.unique(shift)) == 1
    np.testing.assert_allclose(ev["start_us"], ev["start_ps"] / 1e6)
    np.testing.assert_allclose(ev["duration_us"], ev["duration_ps"] / 1e6)


def test_decode_from_bytes_equals_decode_from_file(cpu_file):
    a = read_xspace(cpu_file)
    b = decode_xspace(cpu_file.read_bytes())
    assert np.array_equal(a.events.offset_ps, b.events.offset_ps)
    assert a.events.names == b.events.names
    assert b.path is None and a.path == str(cpu_file)


def test_decoder_counts_events_per_name_and_line(profile_file, monkeypatch):
    """The counts made while decoding equal counting the columns (and, past the limit of
    names the decoder counts, none are made)."""
    sp = read_xspace(profile_file, threads=2)
    ev = sp.events
    assert ev.name_counts is not None and ev.line_counts is not None
    assert np.array_equal(ev.name_counts, np.bincount(ev.name_code, minlength=len(ev.names)))
    assert np.array_equal(ev.line_counts, np.bincount(ev.line, minlength=len(sp.line_ids)))
    from tfprof_nb.xspace import decoder
    monkeypatch.setattr(decoder, "_COUNTED_NAMES", 1)
    sp = read_xspace(profile_file)
    assert sp.events.name_counts is None and sp.events.line_counts is not None


@contextmanager
def _native_setting(setter: str, value: int):
    """A decoder setting of the compiled library (``tfp_set_*``) changed for a block."""
    from tfprof_nb import _native
    old = getattr(_native.lib(), setter)(value)
    try:
        yield
    finally:
        getattr(_native.lib(), setter)(old)


def test_columns_populated_ahead_of_the_walk_decode_the_same(cpu_file):
    """Big files' columns are faulted in by a thread of their own while the walk writes them
    (tfp_set_populate_min: small files too, for this test): the same columns."""
    plain = read_xspace(cpu_file, threads=2)
    with _native_setting("tfp_set_populate_min", 0):
        populated = read_xspace(cpu_file, threads=2)
    for name in ("line", "metadata_row", "name_code", "start_ps", "duration_ps"):
        assert np.array_equal(getattr(plain.events, name), getattr(populated.events, name))
    for name in ("owner", "owner_kind", "name_code", "kind", "raw_value"):
        assert np.array_equal(getattr(plain.stats, name), getattr(populated.stats, name))


def _one_plane(lines) -> bytes:
    """An XSpace of one plane whose lines hold the given (offset_ps, duration_ps) events."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    plane = space.planes.add(name="/host:CPU", id=1)
    plane.event_metadata[1].id = 1
    plane.event_metadata[1].name = "op"
    for k, events in enumerate(lines):
        line = plane.lines.add(id=k + 1, name=f"thread {k}", timestamp_ns=1000)
        for offset, dur in events:
            line.events.add(metadata_id=1, offset_ps=offset, duration_ps=dur)
    return space.SerializeToString()


NESTING_CASES = {  # lines of (offset, duration): whether (line, start, longest first) holds
    "sorted": ([[(0, 90), (0, 50), (10, 5), (60, 1)], [(0, 3)]], True),
    "later child first": ([[(10, 5), (0, 90)]], False),
    "shorter first at a tie": ([[(0, 50), (0, 90)]], False),
    "equal ties": ([[(5, 7), (5, 7)], [(0, 1)]], True),
    "late line start": ([[(100, 1)], [(0, 1)]], True),  # (a new line restarts the order)
}


@pytest.fixture(params=[0, 1, 2])
def pass_block(request):
    """Rows per block of the decoder's passes after the walk (0: the default; 1 and 2 put
    block boundaries between events)."""
    if not request.param:
        yield None
        return
    with _native_setting("tfp_set_pass_block", request.param):
        yield request.param


@pytest.mark.parametrize("case", list(NESTING_CASES))
def test_decoder_finds_whether_events_are_in_nesting_order(case, pass_block, monkeypatch):
    """The decoder's verdict (made as it turns offsets into starts, in blocks on threads)
    equals a sort's, and a host uses it instead of a pass of its own."""
    from tfprof_nb.analysis.runtime.hostdata import host, host_nesting

    lines, expected = NESTING_CASES[case]
    ev = decode_xspace(_one_plane(lines), threads=2).events
    ref = np.lexsort((-ev.duration_ps, ev.start_ps, ev.line))
    assert ev.in_nesting_order is expected
    assert expected == bool(np.array_equal(ref, np.arange(len(ev))))
    passes = []
    scan = host_nesting.nesting_order_or_none
    monkeypatch.setattr(host_nesting, "nesting_order_or_none", lambda *a: passes.append(1) or scan(*a))
    order = host.HostData("h", decode_xspace(_one_plane(lines))).nesting_order()
    assert (order is None) is expected
    assert len(passes) == (0 if expected else 1)
    if order is not None:
        assert np.array_equal(order, ref)


def test_nesting_verdict_of_real_files_matches_the_kernel(profile_file):
    from tfprof_nb._native import kernels as K

    ev = read_xspace(profile_file).events
    assert ev.in_nesting_order is (K.nesting_order_or_none(ev.line, ev.start_ps,
                                                           ev.duration_ps) is None)


def test_passes_after_the_walk_in_small_blocks_give_the_same_space(profile_file):
    """Starts, span, nesting verdict and resolved references made in blocks of 100 rows on
    two threads equal those made in one block."""
    one = read_xspace(profile_file, threads=1)
    with _native_setting("tfp_set_pass_block", 100):
        split = read_xspace(profile_file, threads=2)
    assert len(one.events) > 300 and len(one.stats.raw_value) > 300
    assert np.array_equal(one.events.start_ps, split.events.start_ps)
    assert one.events.span_ps == split.events.span_ps
    assert one.events.in_nesting_order is split.events.in_nesting_order
    assert np.array_equal(one.stats.raw_value, split.stats.raw_value)
    assert one.stats.values == split.stats.values


def test_text_values_read_while_the_file_is_handed_back_decode_the_same(profile_file,
                                                                         monkeypatch):
    """Interning text stats hands the file's pages back behind it (here after each page):
    a file mapping decodes as the same bytes do, where nothing is handed back."""
    from tfprof_nb import _native

    lib, flags = _native.lib(), []
    intern = lib.tfp_intern_text

    def recording(*args):
        flags.append(args[-1])
        return intern(*args)

    monkeypatch.setattr(lib, "tfp_intern_text", recording)
    with _native_setting("tfp_set_intern_window", 1):
        mapped = read_xspace(profile_file, threads=2)
    in_memory = decode_xspace(profile_file.read_bytes(), threads=2)
    assert flags == [1, 0] and len(mapped.stats.values) > 10
    assert mapped.stats.values == in_memory.stats.values
    for name in ("kind", "raw_value", "owner"):
        assert np.array_equal(getattr(mapped.stats, name), getattr(in_memory.stats, name))


@pytest.fixture(params=["reserved", "counted", "framed"])
def stat_rows(request, monkeypatch):
    """How the stat columns get their rows: reserved to the walker's bound and filled as the
    chunks are walked (the default on Linux for a line too large to count while framing), or
    counted in a pass before the walk (where address space cannot be reserved): the framing
    counts no stat for these two.  Or counted while the lines are framed (the default)."""
    from tfprof_nb.xspace import decoder

    monkeypatch.setattr(decoder, "RESERVE_STATS", request.param == "reserved")
    monkeypatch.setattr(decoder, "RESERVE_MIN_BYTES", 0)  # (small files too)
    with _native_setting("tfp_set_frame_counts", int(request.param == "framed")):
        yield request.param


def test_stats_of_chunks_walked_side_by_side_match_tensorflow(profile_file, stat_rows,
                                                              monkeypatch):
    """Small chunks on three threads, so most chunks start before the stat rows of those
    before them are known (reserved: their stats wait in a stage until a thread learns them),
    with the columns faulted in ahead of the writers: every event and stat equals
    TensorFlow's parse, reserved, counted before the walk or counted while framing."""
    from tfprof_nb.xspace import decoder

    monkeypatch.setattr(decoder, "CHUNK_BYTES", 512)
    with _native_setting("tfp_set_populate_min", 0):
        space = read_xspace(profile_file, threads=3)
    assert_same(canonical_from_ours(space), canonical_from_tf(tf_parse(profile_file.read_bytes())))


def _framed_stat_rows(path, threads: int) -> int:
    """T_ST once the lines of ``path`` are framed on ``threads`` threads: the stats, or a
    bound on them where a line was too large to count while framing."""
    from tfprof_nb.xspace import decoder

    return framed_count(path, threads, decoder.T_ST)


def test_framing_counts_the_stats_of_lines_up_to_a_threads_share(cpu_file, monkeypatch):
    """The framing counts a line's stats as it cuts it into chunks, so no pass counts them
    again before the walk: on one thread every line (T_ST is then the stats walked), on
    many threads only lines no larger than a thread's share (a larger line would leave its
    thread framing alone: its stats are bounded, then counted side by side).  The columns
    are the same either way, and the same as with no count while framing."""
    from tfprof_nb.xspace import decoder

    monkeypatch.setattr(decoder, "CHUNK_BYTES", 4096)
    one = read_xspace(cpu_file, threads=1)
    n = len(one.stats.owner)
    assert _framed_stat_rows(cpu_file, 1) == n
    # (the CPU capture's largest line holds more than a 64th of its lines' bytes)
    assert _framed_stat_rows(cpu_file, 64) > n
    with _native_setting("tfp_set_frame_counts", 0):
        assert _framed_stat_rows(cpu_file, 1) > n  # bounded only
        unframed = read_xspace(cpu_file, threads=2)
    for space in (read_xspace(cpu_file, threads=64), unframed):
        for name in ("owner", "owner_kind", "name_code", "kind", "raw_value"):
            assert np.array_equal(getattr(one.stats, name), getattr(space.stats, name))
        for name in ("line", "metadata_row", "name_code", "start_ps", "duration_ps"):
            assert np.array_equal(getattr(one.events, name), getattr(space.events, name))


def test_reserved_stat_columns_keep_only_the_stats(profile_file, monkeypatch):
    """The walker bounds the stats before walking them (T_ST after the framing); the columns
    reserved to that bound are shrunk to the stats walked, their pages past them handed
    back, and hold what columns of the counted stats hold."""
    import mmap

    from tfprof_nb.xspace import decoder

    monkeypatch.setattr(decoder, "RESERVE_MIN_BYTES", 0)  # (small files too)
    buf = np.frombuffer(profile_file.read_bytes(), np.uint8)
    walk = decoder._Walk(buf, str(profile_file), False, 2, None)
    bound = walk.n(decoder.T_ST)
    walk.close()
    stats = read_xspace(profile_file, threads=2).stats
    n = len(stats.owner)
    assert 0 < n <= bound
    monkeypatch.setattr(decoder, "RESERVE_MIN_BYTES", 1 << 62)  # counted, as small files are
    counted = read_xspace(profile_file, threads=2)
    assert counted.stats.owner.base is None
    for name in ("owner", "owner_kind", "name_code", "kind", "raw_value"):
        column = getattr(stats, name)
        assert np.array_equal(column, getattr(counted.stats, name))
        assert len(column) == n
        mapping = column.base.obj if isinstance(column.base, memoryview) else column.base
        assert isinstance(mapping, mmap.mmap) and len(mapping) == column.nbytes


def test_code_columns_take_the_narrowest_type(gpu_fixture_file, cpu_file, cpu_python_file):
    """Name codes are uint8 up to 256 names, then uint16 (then int32), and metadata rows
    int8 / int16 (-1 included): the files compared with TensorFlow above hold both widths."""
    from tfprof_nb.xspace.decoder import code_dtype, row_dtype

    seen = set()
    for f in (gpu_fixture_file, cpu_file, cpu_python_file):
        sp = read_xspace(f)
        ev, st = sp.events, sp.stats
        assert ev.name_code.dtype == code_dtype(len(ev.names)), f
        assert st.name_code.dtype == code_dtype(len(st.names)), f
        assert ev.metadata_row.dtype == row_dtype(len(sp.event_metadata_key)), f
        assert ev.name_code.max() < len(ev.names) and st.name_code.max() < len(st.names)
        seen |= {ev.name_code.dtype, st.name_code.dtype}
    assert {np.dtype(np.uint8), np.dtype(np.uint16)} <= seen
    assert code_dtype(256) == np.uint8 and code_dtype(257) == np.uint16
    assert code_dtype(2**16 + 1) == np.int32
    assert row_dtype(127) == np.int8 and row_dtype(128) == np.int16


def test_many_threads_count_the_stats_first(cpu_file, monkeypatch):
    """Past RESERVE_MAX_THREADS the stats are counted before the walk, whatever the file's
    size: a reserved walk keeps a stage of stats per chunk walked ahead, which grows with the
    threads.  The columns are the same."""
    from tfprof_nb.xspace import decoder

    monkeypatch.setattr(decoder, "RESERVE_MIN_BYTES", 0)  # (small files too)
    monkeypatch.setattr(decoder, "CHUNK_BYTES", 4096)
    few = read_xspace(cpu_file, threads=decoder.RESERVE_MAX_THREADS)
    many = read_xspace(cpu_file, threads=decoder.RESERVE_MAX_THREADS + 4)
    assert few.stats.owner.base is not None  # reserved: a mapping shrunk to the stats
    assert many.stats.owner.base is None  # counted: an array of the exact size
    for name in ("owner", "owner_kind", "name_code", "kind", "raw_value"):
        assert np.array_equal(getattr(few.stats, name), getattr(many.stats, name))
    for name in ("line", "metadata_row", "name_code", "start_ps", "duration_ps"):
        assert np.array_equal(getattr(few.events, name), getattr(many.events, name))
