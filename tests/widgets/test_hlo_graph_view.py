"""The HLO graph view in headless Chromium from its real state: one box per op within the hops,
the centre op outlined, a click on a fusion drawing its fused computation inside it, hovering
showing shapes; and the XLA tab's "graph" action answered by the widget's own Python."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.hlo_graph_view import HloGraphView
from tfprof_nb.widgets.xla_view import XlaView

from ..conftest import DATA
from ..reporting.offline_page import OfflinePage
from .harness import WidgetPage

SCREENS = Path("/tmp/screens")


@pytest.fixture(scope="module")
def h200():
    return tp.load(DATA / "jax_h200_transformer.xplane.pb")


def _count(page, selector: str, n: int) -> None:
    page.page.wait_for_function(f"document.querySelectorAll({selector!r}).length === {n}",
                                timeout=30000)


def test_graph_draws_its_boxes_centre_highlighted_fusion_expands(h200, tmp_path):
    graph = h200.hlo_graph("fusion.263", hops=2)  # inside a command buffer
    top = graph.nodes[graph.nodes.parent == ""]
    fused = graph.nodes[graph.nodes.parent == "fusion.263"]
    with WidgetPage(HloGraphView(graph), tmp_path, bundle("hlograph")) as page:
        _count(page, ".hg-node", len(top))
        assert page.js("() => Array.from(document.querySelectorAll('.hg-center'))"
                       ".map(e => e.dataset.node)") == ["fusion.263"]
        assert page.js("() => getComputedStyle(document.querySelector('.hg-center rect'))"
                       ".strokeWidth") == "3px"
        page.page.hover(".hg-center rect")
        page.page.wait_for_function("document.querySelector('.hg-tip').style.display "
                                    "=== 'block'")
        tip = page.js("() => document.querySelector('.hg-tip').textContent")
        assert "shape: f32[16,8,256,256]" in tip and "FLOPs:" in tip
        page.page.click(".hg-center > rect", position={"x": 20, "y": 10})
        _count(page, ".hg-node", len(top) + len(fused))
        inner = page.js("() => Array.from(document.querySelectorAll("
                        "'.hg-center .hg-node')).map(e => e.dataset.node)")
        assert sorted(inner) == sorted(fused.node)
        page.page.mouse.move(1, 1)
        page.page.wait_for_function("document.querySelector('.hg-tip').style.display "
                                    "=== 'none'")
        SCREENS.mkdir(parents=True, exist_ok=True)
        page.page.screenshot(path=str(SCREENS / "hlo_graph.png"), full_page=True)
        page.page.click(".hg-center > rect", position={"x": 20, "y": 10})  # closes
        _count(page, ".hg-node", len(top))
        assert page.console_errors == []


def test_xla_tab_graph_action_draws_below_the_table(h200, tmp_path):
    with WidgetPage(XlaView(h200), tmp_path, bundle("xla"), kernel=True) as page:
        page.page.wait_for_selector(".tt-table tr.tp-row-link")
        page.page.click(".tt-table tr.tp-row-link >> nth=0")
        page.page.wait_for_function("!document.querySelector('.xla-graph-button').disabled")
        page.page.click(".xla-graph-button")
        page.page.wait_for_selector(".xla-graph-out .hg-center", timeout=60000)
        first = h200.hlo_stats.iloc[0]
        center = page.js("() => document.querySelector('.xla-graph-out .hg-center')"
                         ".dataset.node")
        assert center == first.hlo_op_name
        n = int((h200.hlo_graph(first.hlo_op_name, program=int(first.program_id))
                 .nodes.parent == "").sum())
        assert page.js("() => document.querySelectorAll('.xla-graph-out .hg-node').length") == n
        assert page.console_errors == []


def test_offline_page_draws_the_graph_from_packed_state(h200, tmp_path):
    """A saved page (as reports and exported notebooks carry it) draws the same boxes and
    expands a fusion with no kernel."""
    graph = h200.hlo_graph("fusion.263", hops=1)
    top = int((graph.nodes.parent == "").sum())
    path = graph.show().to_html(tmp_path / "graph.html")
    with OfflinePage(path, wait_for=".hg-node") as page:
        assert page.page.evaluate("document.querySelectorAll('.hg-node').length") == top
        page.page.click(".hg-center > rect", position={"x": 20, "y": 10})
        n = top + int((graph.nodes.parent == "fusion.263").sum())
        page.page.wait_for_function(f"document.querySelectorAll('.hg-node').length === {n}")
        assert page.console_errors == []


def test_the_graphs_counts_are_said_in_words(h200):
    """One op at 0 hops: '1 op within 0 hops of custom-call.18, 0 fused instructions inside
    its fusion; 1 op has an HLO stats row, its self time ...' (it read '1 ops ... 1 ops
    have HLO stats rows')."""
    from tfprof_nb.widgets.hlo_graph_view import _statements

    graph = h200.hlo_graph("custom-call.18", hops=0)
    (said,) = _statements(graph)
    assert said.startswith("1 op within 0 hops of custom-call.18, 0 fused instructions "
                           "inside its fusion; 1 op has an HLO stats row, its self time ")
    assert "<HloGraph 'custom-call.18'" in repr(graph) and "1 node within 0 hops" in repr(graph)
