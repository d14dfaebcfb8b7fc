"""A part of a host: ``tp.load(..., window=(start_us, end_us), lines=...)`` decodes only the
events it keeps, on the whole load's time axis; a host too big for memory is refused before
allocating, the refusal naming these options and the host's span; a part is sized from the
events and stats it keeps (their tables' bytes, and a load with every analysis within them)."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.runtime.decoding import decode as decoding
from tfprof_nb.xspace.decoder import read_local_xspace
from tfprof_nb.xspace.model import stat_value
from tfprof_nb.xspace.selection import Selection

DATA = Path(__file__).resolve().parents[2] / "data"
GPU_FILE = DATA / "jax_h200_transformer.xplane.pb"  # a real JAX capture on an H200
_KEYS = ["plane", "line", "name", "start_ps", "duration_ps"]


@pytest.fixture(scope="module")
def whole():
    return tp.load(GPU_FILE, progress=False)


@pytest.fixture(scope="module")
def composed(tmp_path_factory) -> Path:
    """One host of 24 copies of the H200 capture, back to back (benchmarks/compose_profile)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    from compose_profile import compose_long_host

    big = tmp_path_factory.mktemp("composed") / "long.xplane.pb"
    compose_long_host(GPU_FILE, big, 24 * GPU_FILE.stat().st_size)
    return big


def _rows(events):
    return events[_KEYS].reset_index(drop=True)


def _window(events, lo_frac, hi_frac):
    lo = float(events.start_us.min())
    hi = float((events.start_us + events.duration_us).max())
    return lo + (hi - lo) * lo_frac, lo + (hi - lo) * hi_frac


def _overlapping(events, window):
    """The whole load's events overlapping ``window`` (µs), by their ps times."""
    lo, hi = (round(t * 1e6) for t in window)
    end = events.start_ps + events.duration_ps
    return events[(events.start_ps <= hi) & (end >= lo)]


def test_a_window_keeps_the_events_overlapping_it_on_the_same_axis(whole):
    window = _window(whole.events, 0.4, 0.6)
    part = tp.load(GPU_FILE, window=window, progress=False)
    expected = _overlapping(whole.events, window)
    assert 0 < len(expected) < len(whole.events) / 2
    assert _rows(part.events).equals(_rows(expected))  # same rows, same starts
    assert np.array_equal(part.events.start_us.to_numpy(), expected.start_us.to_numpy())


def _event_stats(space, rows) -> list:
    """(event's line, start, stat name, value) of every stat of events ``rows``, in order."""
    st, ev = space.stats, space.events
    mine = np.flatnonzero((st.owner_kind == 0) & np.isin(st.owner, rows))
    return [(int(ev.line[st.owner[r]]), int(ev.start_ps[st.owner[r]]),
             st.names[st.name_code[r]], stat_value(st, r)) for r in mine.tolist()]


def test_the_kept_events_keep_their_stats():
    full = read_local_xspace(GPU_FILE)
    ev = full.events
    lo, hi = ev.span_ps
    window = (lo + (hi - lo) // 3, lo + (hi - lo) // 2)
    starts = full.line_start_ps()  # (lines' offsets from them: the walker's windows)
    part = read_local_xspace(GPU_FILE, select=Selection(
        np.ones(len(starts), np.uint8), window[0] - starts, window[1] - starts))
    kept = np.flatnonzero((ev.start_ps <= window[1]) & (ev.start_ps + ev.duration_ps >= window[0]))
    assert len(part.events) == len(kept) > 0
    assert _event_stats(part, np.arange(len(kept))) == _event_stats(full, kept)
    assert len(part.stats.kind) < len(full.stats.kind)


def test_an_open_window_and_the_whole_window_keep_everything(whole):
    part = tp.load(GPU_FILE, window=(None, None), progress=False)
    assert _rows(part.events).equals(_rows(whole.events))
    late = _window(whole.events, 0.9, 2.0)
    tail = tp.load(GPU_FILE, window=(late[0], None), progress=False)
    assert _rows(tail.events).equals(_rows(_overlapping(whole.events, (late[0], 1e18))))


def test_lines_keep_only_those_lines(whole):
    lines = sorted(set(whole.events.line))
    chosen = [lines[0], lines[-1]]
    part = tp.load(GPU_FILE, lines=chosen, progress=False)
    expected = whole.events[whole.events.line.isin(chosen)]
    assert len(expected) < len(whole.events)
    assert _rows(part.events).equals(_rows(expected))
    # a glob on "<plane>/<line>", with a window
    plane = whole.events.plane.iloc[-1]
    window = _window(whole.events, 0.2, 0.5)
    both = tp.load(GPU_FILE, lines=f"{plane}/*", window=window, progress=False)
    expected = _overlapping(whole.events[whole.events.plane == plane], window)
    assert _rows(both.events).equals(_rows(expected))
    with pytest.raises(ValueError, match="matches no line"):
        tp.load(GPU_FILE, lines="no such line*", progress=False)


def test_steps_of_a_window_are_the_whole_steps_inside_it(whole):
    window = _window(whole.events, 0.3, 0.8)
    part = tp.load(GPU_FILE, window=window, progress=False)
    steps = part.steps
    assert len(steps) >= 1
    start = steps.start_us.to_numpy()
    end = start + steps.duration_ms.to_numpy() * 1e3
    assert (start >= window[0] - 1e-6).all() and (end <= window[1] + 1e-6).all()
    # each is a step of the whole load, starting at the same time
    assert np.isin(np.round(start, 3), np.round(whole.steps.start_us.to_numpy(), 3)).all()


def test_the_refusal_names_window_lines_and_the_span(whole, monkeypatch):
    monkeypatch.setattr(decoding, "available_memory", lambda: 4096)
    with pytest.raises(MemoryError) as info:
        tp.load(GPU_FILE, progress=False)
    text = str(info.value)
    assert "window=(start_us, end_us)" in text and "lines=" in text
    span = f"{whole.events.start_us.min():,.1f} to "
    assert span in text, text
    assert f"({len(whole.events):,} events)" in text


def test_a_part_is_refused_before_allocating_when_it_does_not_fit(monkeypatch):
    monkeypatch.setattr(decoding, "available_memory", lambda: 4096)
    with pytest.raises(MemoryError, match="narrower window="):
        tp.load(GPU_FILE, window=(None, None), progress=False)


def test_a_composed_big_host_opens_in_a_window_with_bounded_memory(composed, monkeypatch):
    big = composed
    size = big.stat().st_size
    # free memory for a tenth of what the whole host needs: refused whole, opened in a window
    monkeypatch.setattr(decoding, "available_memory",
                        lambda: int(decoding.MEMORY_PER_FILE_BYTE * size / 10))
    with pytest.raises(MemoryError, match="window="):
        tp.load(big, progress=False)
    first = tp.load(GPU_FILE, progress=False).events
    window = (float(first.start_us.min()), float((first.start_us + first.duration_us).max()))
    tracemalloc.start()
    try:
        part = tp.load(big, window=window, progress=False)
        events = part.events
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 0 < len(events) <= 2 * len(first)  # the first copy (and a neighbour's edge)
    assert peak < size / 4, (peak, size)


def test_a_window_is_on_the_axis_the_hosts_share(tmp_path):
    """Two real hosts captured 36 s apart: the window, on the shared axis, keeps the events
    of the later host there, at the starts the whole load gives them."""
    import shutil

    shutil.copy(GPU_FILE, tmp_path / "a.xplane.pb")
    shutil.copy(DATA / "jax_h200_inputbound.xplane.pb", tmp_path / "b.xplane.pb")
    events = tp.load(tmp_path, progress=False).events
    later = events[events.host == "b"]
    assert later.start_us.min() > events[events.host == "a"].start_us.max() + 1e6
    window = _window(later, 0.4, 0.6)
    part = tp.load(tmp_path, window=window, progress=False)
    keys = ["host", *_KEYS]
    expected = _overlapping(events, window)
    assert set(expected.host) == {"b"}
    assert part.events[keys].reset_index(drop=True).equals(expected[keys].reset_index(drop=True))


def _counted(monkeypatch) -> list:
    """The (events, stats) every part's memory check is given, recorded."""
    seen, needed = [], decoding.memory_needed
    monkeypatch.setattr(decoding, "memory_needed",
                        lambda events, stats: seen.append((events, stats)) or needed(events, stats))
    return seen


@pytest.mark.parametrize("name", ["jax_h200_transformer", "jax_h200_nocmdbuf",
                                  "tpu_v6e_jax_inference", "mi300x_jax08_conv"])
def test_a_part_is_sized_from_its_events_and_stats_at_their_tables_bytes(name, monkeypatch):
    path = DATA / f"{name}.xplane.pb"
    seen = _counted(monkeypatch)
    full = read_local_xspace(path)
    starts = full.line_start_ps()
    lo, hi = full.events.span_ps
    window = (lo + (hi - lo) // 4, lo + (hi - lo) // 2)
    select = Selection(np.ones(len(starts), np.uint8), window[0] - starts, window[1] - starts,
                       check=lambda *counts: decoding.check_selected(name, *counts))
    part = read_local_xspace(path, select=select)
    ev, st = part.events, part.stats
    assert seen == [(len(ev), len(st.kind))] and 0 < len(ev) < len(full.events)
    tables = sum(getattr(ev, c).nbytes for c in ("line", "metadata_row", "name_code",
                                                 "start_ps", "duration_ps")) + \
        sum(getattr(st, c).nbytes for c in ("owner", "owner_kind", "name_code", "kind",
                                            "raw_value"))
    modelled = decoding.EVENT_ROW_BYTES * len(ev) + decoding.STAT_ROW_BYTES * len(st.kind)
    assert 0.85 * tables <= modelled <= 1.2 * tables, (modelled, tables)  # (codes: 1-4 bytes)


def test_a_parts_estimate_covers_its_load_and_every_analysis(whole, composed, monkeypatch):
    """The H200 capture (9 stats an event): the estimate at least 1.5x the Python heap's peak
    over a load of three copies and every analysis (peak RSS ran 1.5-1.9x that peak on the
    captures measured), and not past 8x it."""
    from tfprof_nb.analysis.runtime.registry import analyses

    analyses()  # (every analysis module imported before the count)
    seen = _counted(monkeypatch)
    first = whole.events
    lo = float(first.start_us.min())
    span = float((first.start_us + first.duration_us).max()) - lo
    tracemalloc.start()
    try:
        tp.load(composed, window=(lo, lo + 3 * span), progress=False).analyze()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (events, stats), = seen
    assert events >= 2 * len(first)
    need = decoding.memory_needed(events, stats)
    assert 1.5 * peak <= need <= 8 * peak, (need, peak, events, stats)
