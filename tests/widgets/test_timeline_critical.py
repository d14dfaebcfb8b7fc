"""The trace viewer's critical path (tfprof_nb/widgets/timeline_critical.py, js/src/timeline/
critical.ts) in headless Chromium on a real GPU capture: the toggle asks Python for the step
chosen in the step menu, the path's events are outlined with an arrow from each to the next,
and the step's sentence is shown as text.  The test waits for what it checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.offline.bundles import bundle
from tfprof_nb.widgets.trace_view import TraceTimeline

from .harness import WidgetPage

TIMELINE = "document.querySelector('.tfprof-timeline').__timeline"
GPU = Path(__file__).resolve().parents[1] / "data" / "jax_h200_transformer.xplane.pb"


def test_the_answer_is_the_steps_path_as_timeline_rows():
    prof = tp.load(GPU)
    widget = TraceTimeline(prof)
    widget.critical_step = 3
    answer = widget.critical
    source = widget._timeline_source()
    host, step = prof.steps.host.iloc[3], prof.steps.index[3]
    cp = prof.critical_path
    seg = cp[(cp.host == host) & (cp.step == step) & (cp.event_id >= 0)]
    nodes = answer["nodes"]
    assert answer["step"] == 3 and nodes and answer["more"] == 0
    ids = [source.event_id(n["row"]) for n in nodes]
    assert set(ids) == set(seg.event_id)  # every event of the path, each run once
    assert all(a["start"] + a["dur"] <= b["start"] + 1e-6 for a, b in zip(nodes, nodes[1:]))
    assert sum(n["dur"] for n in nodes) == pytest.approx(seg.duration_us.sum(), abs=1e-3)
    assert answer["sentence"].startswith(f"On its critical path, step {step} is bound by ")
    widget.critical_step = -1
    assert widget.critical["nodes"] == []


def test_a_pods_step_is_named_with_its_host():
    """Two TF workers, each with a step 1498: the sentence names the host as the step menu
    does ('127.0.0.1_24214 step 1498'); online and offline answers alike."""
    prof = tp.load(GPU.parent / "tf_two_workers_loaded")
    widget = TraceTimeline(prof)
    steps = prof.steps
    both = steps.index[steps.index.duplicated()]  # (step numbers both hosts have)
    i = int(np.flatnonzero(steps.index == both[0])[0])
    host, step = steps.host.iloc[i], steps.index[i]
    assert ((steps.index == step) & (steps.host != host)).any()  # (the other host's too)
    widget.critical_step = i
    said = f"On its critical path, {host} step {step} is bound by "
    assert widget.critical["sentence"].startswith(said)
    offline = widget._timeline_source()._offline_paths()["paths"]
    assert offline[str(i)]["sentence"].startswith(said)


def test_the_toggle_draws_the_path_of_the_chosen_step(tmp_path):
    widget = TraceTimeline(tp.load(GPU))
    with WidgetPage(widget, tmp_path, bundle("timeline"), kernel=True) as page:
        p = page.page
        p.select_option(".tl-steps", "2")  # zoom to the third step
        p.click(".tl-critical")
        p.wait_for_function("() => window.__changes.some(([k, v]) => k === 'critical_step')")
        asked = [v for k, v in page.changes() if k == "critical_step"][-1]
        assert asked == 2
        widget.critical_step = asked  # what the comm delivers; Python answers
        page.push("critical", widget.critical)
        p.wait_for_function(f"() => {TIMELINE}.frame.critical >= 1")
        assert p.get_attribute(".tl-critical", "aria-pressed") == "true"
        note = p.text_content(".tl-critical-note")
        assert note == widget.critical["sentence"] and "is bound by" in note
        shown = page.js(f"() => {TIMELINE}.critical.nodes.length")
        assert shown == len(widget.critical["nodes"])
        p.click(".tl-critical")  # off again: nothing drawn
        p.wait_for_function(f"() => {TIMELINE}.frame.critical === 0")
        assert [v for k, v in page.changes() if k == "critical_step"][-1] == -1
        assert p.text_content(".tl-critical-note") == ""
        assert page.console_errors == []
