"""The hardware counters in the trace viewer, on a real H200 capture with CUPTI PM sampling
and the hardware sampler's file beside it (``tests/data/jax_h200_counters``): one counter
track per (host, device, counter) in a section per device, the ``_counters_`` line's samples
drawn there and no longer as events, search and details unchanged for the other events."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.hardware_tables import counters_of
from tfprof_nb.widgets.trace_view import TraceView
from tfprof_nb.widgets.timeline_counters import counter_tables

from .harness import WidgetPage, when_drawn

TIMELINE = "document.querySelector('.tfprof-timeline').__timeline"
COUNTERS = Path(__file__).resolve().parents[1] / "data" / "jax_h200_counters"
SCREENS = os.environ.get("TFPROF_NB_SCREENSHOTS")
GPU_SECTION = "vm GPU:0 counters"


@pytest.fixture(scope="module")
def prof():
    return tp.load(COUNTERS)


@pytest.fixture(scope="module")
def widget(prof):
    return TraceView(prof)


def _tracks(widget, section: str) -> dict[str, str]:
    tracks = widget.meta["counter_tracks"]
    rows = tracks[tracks.section == section]
    return dict(zip(rows.name, rows.unit))


def test_each_device_and_the_host_get_a_section_of_counters(widget, prof):
    gpu = _tracks(widget, GPU_SECTION)
    assert gpu["sm_clock_mhz"] == "MHz" and gpu["power_w"] == "W"
    assert gpu["sm__cycles_active.avg"] == "cycles"  # the profile's own PM sampling
    host = _tracks(widget, "vm host counters")
    assert host["cpu_util_pct"] == "%" and host["process_rss_bytes"] == "bytes"
    tracks = widget.meta["counter_tracks"]
    # the GPU's counters follow its plane's tracks; the host's have no plane section
    assert set(tracks.after[tracks.section == GPU_SECTION]) == {"vm /device:GPU:0"}
    assert set(tracks.after[tracks.section == "vm host counters"]) == {""}
    # every sample of the table is a point (none thinned: fewer than MAX_POINTS each)
    points = widget.meta["counter_points"]
    table = counters_of(prof)
    assert len(points) >= len(table.dropna(subset=["value"]))
    k = list(tracks.name[tracks.section == GPU_SECTION]).index("sm_clock_mhz")
    k += int(np.flatnonzero(tracks.section == GPU_SECTION)[0])
    clock = table[(table.device == "GPU:0") & (table.counter == "sm_clock_mhz")]
    assert np.array_equal(points.v[points.counter == k].to_numpy(), clock.value.to_numpy())
    assert tracks["max"][k] == clock.value.max()


def test_the_counters_line_leaves_the_event_tracks(widget, prof):
    ev = prof.events
    samples = ev.index[ev.line == "_counters_"]
    assert len(samples) == 363
    assert "_counters_" not in set(widget.meta["tracks"].name)
    source = widget._controller
    assert len(source.index) == len(ev) - len(samples)
    assert not np.isin(source.event_ids, samples).any()
    # search finds no sample, still every kernel named so; details name the event shown
    assert len(source.find("sm__cycles_active")) == 0
    kernel = str(ev[ev.line.astype(str).str.startswith("Stream #14")].name.iloc[0])
    rows = source.find(kernel)
    assert set(ev.index[ev.name == kernel]) <= set(source.event_ids[rows])
    first = int(rows[np.argmin(source.index.start[rows])])
    shown = source.describe(first)
    assert shown["name"] == kernel and shown["event id"] == str(source.event_ids[first])
    with pytest.raises(ValueError, match="counter sample"):
        source.index_of(int(samples[0]))


def test_thinning_keeps_each_counters_peak(prof):
    tracks, points = counter_tables(prof, limit=20)
    assert points.groupby("counter").size().max() <= 20
    table = counters_of(prof)
    k = int(np.flatnonzero((tracks.section == GPU_SECTION)
                           & (tracks.name == "sm__cycles_active.avg"))[0])
    peak = table[table.counter == "sm__cycles_active.avg"].value.max()
    assert points.v[points.counter == k].max() == peak == tracks["max"][k]


def test_the_viewer_draws_the_gpu_counters(widget, tmp_path):
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        names = when_drawn(page.page, f"""s => {TIMELINE}.rows.filter(r => r.kind === 'counter'
            && r.section === s).map(r => {TIMELINE}.data.counters[r.track].name)""",
                           GPU_SECTION)
        assert {"sm_clock_mhz", "power_w", "sm__cycles_active.avg"} <= set(names)
        sections = page.js(f"() => {TIMELINE}.rows.filter(r => r.kind === 'section')"
                           ".map(r => r.section)")
        assert sections.index(GPU_SECTION) == sections.index("vm /device:GPU:0") + 1
        if SCREENS:
            Path(SCREENS).mkdir(parents=True, exist_ok=True)
            page.page.locator(".tfprof-timeline").screenshot(
                path=str(Path(SCREENS) / "trace_gpu_counters.png"))
        page.page.fill(".tl-filter", "sm_clock")  # only that track: it is in sight
        top, h = when_drawn(page.page, f"""() => {{
            const r = {TIMELINE}.rows.find(r => r.kind === 'counter');
            return [{TIMELINE}.rowTop(r), r.h]; }}""",
                            until="t => t.rows.filter(r => r.kind === 'counter').length === 1")
        box = page.page.locator(".tl-canvas").bounding_box()
        page.page.mouse.move(box["x"] + box["width"] * 0.85, box["y"] + top + h / 2)
        page.page.wait_for_function("() => /sm_clock_mhz: [0-9,.]+ MHz at /.test("
                                    "document.querySelector('.tl-tip')?.textContent ?? '')")
        assert page.console_errors == [] and page.blocked == []
