"""The critical path in an offline report (widgets/timeline_critical.offline_paths, drawn by
js/src/timeline/critical.ts as on a live page): the trace viewer's toggle works without a
kernel, from the first steps' paths the page carries (bounded: OFFLINE_NODES in all), and
draws the same path and sentence Python gives a live widget.  Tests wait for what they
check."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets import timeline_critical
from tfprof_nb.widgets.trace_view import TimelineSource, TraceTimeline

from ..conftest import DATA
from .offline_page import OfflinePage

SHOTS = Path("/tmp/shots")
TIMELINE = "document.querySelector(\"[data-pane='timeline'] .tfprof-timeline\").__timeline"


@pytest.fixture(scope="module")
def h200():
    return tp.load(DATA / "jax_h200_transformer.xplane.pb")


def test_the_page_carries_the_first_steps_paths_within_the_bound(h200, monkeypatch):
    source = TimelineSource(h200)
    live = TraceTimeline(h200)
    paths = timeline_critical.offline_paths(h200, source.steps, source._rows_of_events())
    assert paths["steps"] == len(h200.steps) and len(paths["paths"]) == len(h200.steps)
    for i in (0, len(h200.steps) - 1):
        live.critical_step = i
        assert paths["paths"][str(i)] == live.critical  # the live widget's answer
    monkeypatch.setattr(timeline_critical, "OFFLINE_NODES", 300)
    few = timeline_critical.offline_paths(h200, source.steps, source._rows_of_events())
    nodes = [len(a["nodes"]) for a in few["paths"].values()]
    assert sum(nodes) == 300 and len(nodes) < len(h200.steps)
    assert few["paths"][str(len(nodes) - 1)]["more"] > 0  # the last one cut, and says so


def test_a_large_profiles_first_state_does_not_wait_for_the_critical_path(monkeypatch):
    """Over OVERVIEW_PATH_MAX_EVENTS events (here lowered under this capture's count) the
    page's paths are left out, with the reason the toggle shows, and the critical path is not
    computed for it; computed before, it is carried as on a small profile."""
    prof = tp.load(DATA / "jax_h200_transformer.xplane.pb")
    monkeypatch.setattr(timeline_critical, "OVERVIEW_PATH_MAX_EVENTS", prof.n_events - 1)
    source = TimelineSource(prof)
    left_out = timeline_critical.offline_paths(prof, source.steps, source._rows_of_events())
    assert left_out["paths"] == {} and left_out["steps"] == len(prof.steps) > 0
    assert f"for {prof.n_events / 1e6:.1f} M events" in left_out["reason"]
    assert not prof._results.ready("critical_path")
    prof.critical_path
    carried = timeline_critical.offline_paths(prof, source.steps, source._rows_of_events())
    assert len(carried["paths"]) == len(prof.steps) and "reason" not in carried


def test_the_reports_toggle_draws_the_path_without_a_kernel(h200, tmp_path):
    live = TraceTimeline(h200)
    live.critical_step = 0
    path = h200.to_html(tmp_path / "report.html")
    with OfflinePage(path) as page:
        p = page.page
        p.click(".db-tab[data-tab='timeline']")
        toggle = "[data-pane='timeline'] .tl-critical"
        p.wait_for_selector(f"{toggle}:not([disabled])")
        p.click(toggle)
        p.wait_for_function(f"() => {TIMELINE}.frame.critical >= 1", timeout=60000)
        assert p.get_attribute(toggle, "aria-pressed") == "true"
        note = p.text_content("[data-pane='timeline'] .tl-critical-note")
        assert note == live.critical["sentence"] and "is bound by" in note
        assert page.js(f"() => {TIMELINE}.critical.nodes.length") == len(live.critical["nodes"])
        p.locator("[data-pane='timeline'] .tfprof-timeline").screenshot(
            path=str(SHOTS / "report_critical_path.png"))
        p.click(toggle)  # off again: nothing drawn
        p.wait_for_function(f"() => {TIMELINE}.frame.critical === 0")
        assert page.console_errors == [] and page.blocked == []
