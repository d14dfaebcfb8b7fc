"""The trace viewer's graph action (js/src/timeline/details_graph.ts) in headless Chromium on
a real H200 capture whose kernels run inside command buffers: the details of a kernel offer
"graph", which asks the widget's Python by the event's id and draws the graph around the
kernel's own HLO instruction (its ``hlo_op`` stat names the buffer); an event with no HLO op
gets no action.  The test waits for what it checks."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.offline.bundles import bundle
from tfprof_nb.widgets.trace_view import TraceTimeline

from ..conftest import DATA
from .harness import WidgetPage

SHOTS = Path("/tmp/shots")


@pytest.fixture(scope="module")
def h200():
    return tp.load(DATA / "jax_h200_transformer.xplane.pb")


def test_a_kernel_in_a_command_buffer_opens_on_its_own_instruction(h200, tmp_path):
    inside = h200.result("command_buffer_kernels").iloc[5]
    event, own = int(inside.event), str(inside.hlo_op)
    assert h200.stat("hlo_op")[event].startswith("command_buffer")  # the stat names the buffer
    widget = TraceTimeline(h200)
    with WidgetPage(widget, tmp_path, bundle("timeline"), kernel=True) as page:
        p = page.page
        host = [e for e in h200.events.index if e not in h200.stat("hlo_op").index][0]
        widget.selected_index = widget._timeline_source().index_of(int(host))
        page.push("details", widget.details)  # what the comm delivers: no HLO op, no action
        p.wait_for_selector(".tl-details tr")
        assert page.js("() => getComputedStyle(document.querySelector('.tl-graph-box'))"
                       ".display") == "none"
        widget.selected_index = widget._timeline_source().index_of(event)
        page.push("details", widget.details)
        p.wait_for_selector(".tl-graph-button:not([disabled])")
        assert page.js("() => document.querySelector('.tl-graph-selected').textContent") \
            .endswith(f"a kernel of {h200.stat('hlo_op')[event]}, its own instruction ")
        p.click(".tl-graph-button")
        p.wait_for_selector(".tl-graph-out .hg-center", timeout=60000)
        assert page.js("() => document.querySelector('.tl-graph-out .hg-center')"
                       ".dataset.node") == own
        n = int((h200.hlo_graph(own).nodes.parent == "").sum())
        assert page.js("() => document.querySelectorAll('.tl-graph-out .hg-node').length") == n
        p.locator(".tl-graph-box").screenshot(path=str(SHOTS / "graph_trace_details.png"))
        assert page.console_errors == []
