"""The trace viewer's level of detail: window tiles, search and offline copies, against brute
force over the real events (Python side), and in Chromium with the widget's own Python
answering its requests."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
import tfprof_nb.widgets.trace_view as timeline_mod
from tfprof_nb._native import kernels
from tfprof_nb.offline.columns import decode_columns
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.trace_view import TimelineSource, TraceTimeline
from tfprof_nb.widgets.timeline_lod import BLOCK_BYTES, TimelineIndex

from .harness import (WidgetPage, event_point, frame_count, overview_budget, painted,
                      when_drawn)
from .test_event_details import pane_text

TL = "document.querySelector('.tfprof-timeline').__timeline"


@pytest.fixture(scope="module")
def source(cpu_python_file):
    """The timeline of a real CPU capture with the Python tracer (deep stacks)."""
    return TimelineSource(tp.load(cpu_python_file))


def _overlaps(start, end, t0: float, t1: float) -> np.ndarray:
    """Events drawn in [t0, t1]: those reaching into it, and instants inside it (an event of
    zero duration at t0 too)."""
    return (start <= t1) & ((end > t0) | (start >= t0))


def _check_tile(index: TimelineIndex, tile, t0: float, t1: float) -> None:
    """Every event overlapping [t0, t1] is in exactly one block of its segment, blocks hold
    contiguous rows in start order, and a merged block spans its events."""
    c = tile.columns
    off = c["off"].astype(np.int64)
    assert off[0] == 0 and off[-1] == tile.blocks and np.all(np.diff(off) >= 0)
    for s, (lo, hi) in enumerate(zip(index.seg_lo, index.seg_hi)):
        start, end = index.start[lo:hi], index.start[lo:hi] + index.dur[lo:hi]
        inside = np.flatnonzero(_overlaps(start, end, t0, t1)) + lo
        first = c["row"][off[s]:off[s + 1]].astype(np.int64)
        count = c["count"][off[s]:off[s + 1]].astype(np.int64)
        covered = np.concatenate([np.arange(f, f + k) for f, k in zip(first, count)]) \
            if len(first) else np.empty(0, np.int64)
        np.testing.assert_array_equal(covered, inside)  # each once, in order
        b_start, b_dur = c["start"][off[s]:off[s + 1]], c["dur"][off[s]:off[s + 1]]
        np.testing.assert_array_equal(b_start, index.start[first])
        last_end = np.array([(index.start[f:f + k] + index.dur[f:f + k]).max()
                             for f, k in zip(first, count)])
        np.testing.assert_allclose(b_start + b_dur, last_end, rtol=1e-6, atol=1e-3)
        assert np.all(c["name"][off[s]:off[s + 1]] == index.name[first])


def test_windows_cover_every_event_once(source):
    index = source.index
    span = index.t1 - index.t0
    rng = np.random.default_rng(1)
    for width in (1400, 50):
        for frac in (1.0, 0.1, 0.001):
            a = index.t0 + rng.uniform(0, 1 - frac) * span
            tile = index.window(a, a + frac * span, width)
            _check_tile(index, tile, a, a + frac * span)
    whole = index.window(index.t0, index.t1, 1400)
    assert whole.blocks < len(index)  # merged at this zoom
    assert not whole.exact


def test_events_wide_enough_stay_alone(source):
    index = source.index
    a, b = index.t0, index.t1
    tile = index.window(a, b, 1400)
    ppu = 1400 / (b - a)
    c = tile.columns
    wide = c["dur"] * ppu >= 1
    # a block of a pixel or more that holds several events began with a narrow one
    for row, count in zip(c["row"][wide], c["count"][wide]):
        if count > 1:
            assert index.dur[row] * ppu < 1
    rows_wide = np.flatnonzero(index.dur * ppu >= 1)
    alone = set(c["row"][c["count"] == 1].tolist())
    assert set(rows_wide.tolist()) <= alone


def test_zoomed_in_windows_are_exact(source):
    index = source.index
    row = int(np.argmax(index.dur))
    a = float(index.start[row])
    tile = index.window(a, a + float(index.dur[row]) * 1e-3, 1400)
    assert tile.exact and np.all(tile.columns["count"] == 1)


def test_window_budget_coarsens_instead_of_growing(source):
    index = source.index
    tile = index.window(index.t0, index.t1, 100_000, budget=50 * BLOCK_BYTES)
    assert tile.nbytes <= 50 * BLOCK_BYTES + 4 * (len(index.seg_lo) + 1)
    _check_tile(index, tile, index.t0, index.t1)


def test_events_in_and_search_match_brute_force(source):
    index = source.index
    a = index.t0 + (index.t1 - index.t0) * 0.4
    b = a + (index.t1 - index.t0) * 0.05
    tile = index.events_in(a, b)
    expect = np.flatnonzero(_overlaps(index.start, index.start + index.dur, a, b))
    np.testing.assert_array_equal(np.sort(tile.columns["row"]), expect)
    _check_tile(index, tile, a, b)
    assert index.count_in(a, b) == len(expect)
    total, start, dur, rows, names = index.search("EAGER")
    names_lower = np.array([n.lower() for n in index.names])
    expect = np.flatnonzero(np.char.find(names_lower[index.name], "eager") >= 0)
    assert total == len(expect) > 0
    np.testing.assert_array_equal(np.sort(rows), expect)
    assert np.all(np.diff(start) >= 0)
    assert index.search("no such op at all")[0] == 0 and index.search("  ")[0] == 0


@pytest.mark.parametrize("request_, error", [
    ({"kind": "window", "t0": 5.0, "t1": 1.0, "width": 100}, "finite range"),
    ({"kind": "window", "t0": 0.0, "t1": 1.0, "width": 0}, "1 px"),
    ({"kind": "window", "t0": float("nan"), "t1": 1.0, "width": 10}, "finite"),
    ({"kind": "window", "t0": 0.0}, "t1"),
    ({"kind": "window", "t0": "x", "t1": 1, "width": 10}, "bad window"),
    ({"kind": "reboot"}, "unknown request"),
])
def test_bad_requests_get_an_error_answer(source, request_, error):
    reply, buffers = source.on_message({**request_, "id": 7})
    assert reply["id"] == 7 and error in reply["error"] and buffers == []


def test_windows_outside_the_profile_are_empty(source):
    index = source.index
    reply, buffers = source.on_message({"kind": "window", "id": 1, "t0": index.t1 + 1e6,
                                        "t1": index.t1 + 2e6, "width": 1400})
    assert reply["tile"]["blocks"] == 0 and len(buffers) == 6


def test_first_state_is_an_overview_past_the_budget(cpu_python_file, monkeypatch):
    prof = tp.load(cpu_python_file)
    full = TraceTimeline(prof)
    assert full.meta["lod"]["mode"] == "full" and full.tile.blocks == len(prof.events)
    assert set(full.tile.columns) == {"start", "dur", "name", "off"}  # 16 bytes per event
    budget = overview_budget(prof)
    monkeypatch.setattr(timeline_mod, "STATE_BUDGET", budget)
    small = TraceTimeline(prof)
    assert small.meta["lod"]["mode"] == "overview"
    state = sum(buf.nbytes for buf in small.get_state("tile")["tile"]["buffers"])
    assert state <= budget + 4 * (len(small.meta["segments"]) + 1)
    assert small.tile.columns["count"].sum() == len(prof.events)


def test_offline_copy_keeps_the_overview_and_a_detailed_range(source):
    n = len(source.index)
    traits, rows = source.offline_state(budget=n * timeline_mod.OFFLINE_EVENT_BYTES)
    assert rows is None and traits["meta"]["lod"]["mode"] == "full"  # every event fits
    traits, rows = source.offline_state(budget=n * 10)
    meta = traits["meta"]
    assert meta["lod"]["mode"] == "overview"
    detail = traits["detail"]
    detail_rows = decode_columns(detail)["row"]
    index = source.index
    expect = np.flatnonzero(_overlaps(index.start, index.start + index.dur, detail["t0"],
                                      detail["t1"]))
    np.testing.assert_array_equal(np.sort(detail_rows), expect)
    assert 0 < len(detail_rows) < n and set(detail_rows.tolist()) <= set(rows.tolist())
    assert detail["t0"] == pytest.approx(source.meta["steps"].start.min())  # the first step


def test_zoom_fetches_detail_from_python(cpu_python_file, tmp_path, monkeypatch):
    """An overview first; each zoom asks the widget's Python for the window; clicks and
    search work across fetched windows."""
    prof = tp.load(cpu_python_file)
    monkeypatch.setattr(timeline_mod, "STATE_BUDGET", overview_budget(prof))
    widget = TraceTimeline(prof)
    source = widget._timeline_source()
    assert widget.meta["lod"]["mode"] == "overview"
    with WidgetPage(widget, tmp_path, bundle("timeline"), kernel=True) as page:
        assert painted(page.page) > 2000
        # an overview first: the state's one tile, and one more per window the widget's
        # Python answered (60 ms after it is drawn the viewer asks for its whole view's detail)
        first, tiles, answers = page.js(f"() => [{TL}.tiles.list[0].exact, "
                                        f"{TL}.tiles.list.length, {TL}.tiles.roundTrips.length]")
        assert not first and tiles == 1 + answers
        index = source.index
        row = int(np.argmax(np.where(index.dur < (index.t1 - index.t0) / 50, index.dur, 0)))
        a, b = float(index.start[row]), float(index.start[row] + index.dur[row])
        pad = (b - a) * 0.5
        page.js(f"([a, b]) => {TL}.setView(a, b)", [a - pad, b + pad])
        page.page.wait_for_function(
            f"() => {TL}.tiles.list.length > 1 && !{TL}.tiles.pending && {TL}.sharp()",
            timeout=20000)
        sent = page.js("() => window.__sent")
        assert sent and sent[-1]["kind"] == "window" and sent[-1]["t0"] < a - pad
        assert page.answered and max(page.answered) < 0.5
        point = event_point(page.page)
        page.page.mouse.click(point[0], point[1])
        assert ["selected_index", point[2]] in page.changes()
        live = source.describe(point[2])
        assert live["name"] == index.names[index.name[point[2]]]
        status = page.js("() => document.querySelector('.tl-status').textContent")
        assert live["name"] in status
        # search: the kernel finds every matching event, by start
        query = "eager"
        total = index.search(query)[0]
        page.page.fill(".tl-search", query)
        page.page.wait_for_function("() => /found/.test(document.querySelector('.tl-found')"
                                    ".textContent)", timeout=10000)
        shown = page.js("() => document.querySelector('.tl-found').textContent")
        assert shown.startswith(f"{total:,} found")
        page.page.press(".tl-search", "Enter")
        first = index.search(query)[3][0]
        assert ["selected_index", int(first)] in page.changes()
        # a window the kernel refuses says so on the canvas, no exception
        page.js("() => window.__deliver({kind: 'window', id: -1, error: 'x'}, [])")
        assert page.console_errors == [] and page.blocked == []


def test_dashboard_routes_the_timeline_messages(cpu_python_file, tmp_path, monkeypatch):
    from tfprof_nb.widgets.dashboard_view import Dashboard

    prof = tp.load(cpu_python_file)
    monkeypatch.setattr(timeline_mod, "STATE_BUDGET", overview_budget(prof))
    dash = Dashboard(prof)
    reply, buffers = dash._answer({"kind": "search", "query": "eager", "id": 3,
                                   "view": "timeline__"}, [])
    assert reply["view"] == "timeline__" and reply["total"] > 0 and len(buffers) == 4
    assert dash._answer({"kind": "search", "query": "x", "view": "overview__"}, []) is None
    reply, _ = dash._answer({"kind": "search", "query": "x", "view": "ops__"}, [])
    assert reply["error"] == "unknown request 'search'"  # op stats answers graph requests only
    with WidgetPage(dash, tmp_path, bundle("dashboard"), kernel=True) as page:
        page.page.click(".db-tab[data-tab='timeline']")
        dash.open_tab("timeline")
        meta = dash.timeline__meta
        a = meta["t0"] + (meta["t1"] - meta["t0"]) * 0.3
        tl = "document.querySelector(\"[data-pane='timeline'] .tfprof-timeline\").__timeline"
        page.js(f"([a, b]) => {tl}.setView(a, b)", [a, a + (meta["t1"] - meta["t0"]) * 1e-3])
        page.page.wait_for_function(f"() => {tl}.tiles.list.length > 1 && !{tl}.tiles.pending",
                                    timeout=20000)
        assert all(m["view"] == "timeline__" for m in page.js("() => window.__sent"))
        assert page.console_errors == []


def test_offline_page_of_an_overview(cpu_python_file, tmp_path, monkeypatch):
    """A report of a profile past the budget: the overview, every event of one range with
    its stats, and a note on the canvas where detail needs a kernel."""
    from ..reporting.offline_page import OfflinePage

    prof = tp.load(cpu_python_file)
    n = len(prof.events)
    monkeypatch.setenv("TFPROF_NB_MAX_REPORT_MB", str(n * 12 / 2**20))
    path = prof.to_html(tmp_path / "r.html")
    tlq = "document.querySelector(\"[data-pane='timeline'] .tfprof-timeline\").__timeline"
    with OfflinePage(path) as page:
        page.page.click(".db-tab[data-tab='timeline']")
        tiles = page.js(f"() => {tlq}.tiles.list.map(t => ({{t0: t.t0, t1: t.t1, "
                        "exact: t.exact}))")
        assert len(tiles) == 2 and tiles[1]["exact"] and not tiles[0]["exact"]
        d = tiles[1]
        root = "[data-pane='timeline'] .tfprof-timeline"
        # a twentieth of the exact tile, where most events start (a capture's first twentieth
        # may hold none on the tracks in sight)
        width = (d["t1"] - d["t0"]) * 0.05
        starts = prof.events.start_us.to_numpy()
        lo = max(np.linspace(d["t0"], d["t1"] - width, 40),
                 key=lambda a: int(((starts >= a) & (starts < a + width)).sum()))
        before = frame_count(page.page, root)
        page.js(f"([a, b]) => {tlq}.setView(a, b)", [float(lo), float(lo + width)])
        # the tile a frame painted at that view drew (the painter picks it)
        assert when_drawn(page.page, f"() => {tlq}.current.exact", root=root, after=before)
        point = event_point(page.page, "[data-pane='timeline'] .tfprof-timeline",
                            timeout=60000)
        assert point is not None, page.js(f"() => [{tlq}.current.t0, {tlq}.current.t1, "
                                          f"{tlq}.current.exact, innerHeight]")
        page.page.mouse.click(point[0], point[1])
        page.page.wait_for_function("() => document.querySelector(\"[data-pane='timeline'] "
                                    ".tl-details\").textContent.includes('event id')",
                                    timeout=30000)
        shown = page.js("() => document.querySelector(\"[data-pane='timeline'] "
                        ".tl-details\").textContent")
        live = TimelineSource(prof).describe(point[2])
        # every row, text for text: the start the page wrote from its detail tile, the
        # duration and id from the embedded block
        assert shown.endswith(pane_text(live)), (shown, live)
        if d["t1"] < prof.duration_us * 0.9 + d["t0"]:
            after = d["t1"] + (d["t1"] - d["t0"])
            before = frame_count(page.page, root)
            page.js(f"([a, b]) => {tlq}.setView(a, b)", [after, after + 1.0])
            assert not when_drawn(page.page, f"() => {tlq}.current.exact", root=root,
                                  after=before)
        assert page.blocked == [] and page.console_errors == []
    assert math.isfinite(path.stat().st_size)


# The pixel merging of the kernel (_native/timeline.c, what a window answer holds) and of the
# browser (js/src/lod.ts, what a frame draws of the tile it holds: a page without a kernel has
# no other) are one rule in two languages: these cases, with the kernel's blocks, are what
# js/test/lod.test.ts holds the browser to.  Times on a 1/16 us grid and powers of two of px
# per us: exact in both, ties included.
LOD_CASES = Path(__file__).resolve().parents[2] / "js" / "test" / "lod_cases.json"


def _lod_cases() -> list[dict]:
    rng = np.random.default_rng(7)
    cases = [
        # wide events, the first reaching into the window
        dict(start=[0, 100, 200, 300], dur=[50] * 4, t0=120, t1=260, ppu=1, min_px=1),
        # a sub-pixel run: merged per pixel column
        dict(start=(np.arange(200) * 0.25).tolist(), dur=[0.125] * 200, t0=0, t1=50, ppu=1,
             min_px=1),
        # ties: 1 px is not small; a small event a pixel after its block's reach joins it
        dict(start=[0, 0.5, 2, 2.5, 3.5, 10, 10.5, 12], dur=[0.5, 0.5, 0.25, 1, 0.5, 0.5, 0, 0],
             t0=0, t1=20, ppu=1, min_px=1),
    ]
    for ppu, min_px in ((0.5, 1), (1, 1), (2, 1), (4, 2), (16, 1)):
        gaps = rng.integers(0, 64, 250) / 16
        durs = rng.integers(0, 48, 250) / 16
        start = np.cumsum(gaps + np.concatenate([[0], durs[:-1]]))
        cases.append(dict(start=start.tolist(), dur=durs.tolist(), t0=float(start[25]) + 0.5,
                          t1=float(start[225]), ppu=ppu, min_px=min_px))
    for c in cases:
        n = len(c["start"])
        _, _, _, first, count, _ = kernels.tl_window(
            np.array(c["start"], np.float64), np.array(c["dur"], np.float32), np.array([0]),
            np.array([n]), c["t0"], c["t1"], c["ppu"], c["min_px"], 10 * n + 10)
        c.update(first=first.tolist(), count=count.tolist())
    return cases


def test_the_browser_merges_pixels_as_the_kernel_does():
    """js/test/lod_cases.json holds the kernel's blocks of each case (rewrite it with
    ``python -m tests.widgets.test_timeline_lod`` after a change of the rule, in both)."""
    cases = _lod_cases()
    assert json.loads(LOD_CASES.read_text()) == cases
    assert any(max(c["count"]) > 1 for c in cases) and any(max(c["count"]) == 1 for c in cases)


if __name__ == "__main__":
    LOD_CASES.write_text(json.dumps(_lod_cases()) + "\n")
