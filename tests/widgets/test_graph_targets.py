"""The graph action of the op stats table and the Source view (widgets/graph_targets.py, the
shared js/src/graphaction.ts) in headless Chromium on a real GPU capture: a click on a row
that has HLO ops behind it, then "graph", asks the view's own Python (GraphRequests) and draws
the graph around the row's hottest op; the targets are those of ``hlo_stats`` and
``source_lines``.  Tests wait for what they check."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.xla.source_lines import source_line_ops
from tfprof_nb.offline.bundles import bundle
from tfprof_nb.widgets.graph_targets import MAX_TARGETS, line_targets, op_targets
from tfprof_nb.widgets.op_stats_view import OpStatsView, typed_op_stats
from tfprof_nb.widgets.source_view import SourceView

from ..conftest import DATA
from .harness import WidgetPage

SHOTS = Path("/tmp/shots")


@pytest.fixture(scope="module")
def h200():
    return tp.load(DATA / "jax_h200_transformer.xplane.pb")


def test_op_targets_are_each_framework_ops_hlo_ops_hottest_first(h200):
    ops = typed_op_stats(h200)
    targets = op_targets(h200, ops)
    hlo = h200.hlo_stats
    framework = hlo.framework_op_name.str.rsplit(":", n=1).str[0]
    assert targets and set(targets) <= set(ops.operation)
    for op, found in targets.items():
        mine = hlo[framework == op]
        assert [t[0] for t in found] == list(mine.sort_values(
            ["total_self_time_us", "hlo_op_name"], ascending=[False, True]).hlo_op_name
            .head(MAX_TARGETS))
        assert all(t[1] == str(hlo.program_id.iloc[0]) for t in found)


def test_line_targets_sum_to_the_source_lines_time(h200):
    targets = line_targets(h200)
    lines = h200.source_lines
    located = lines[lines.no_source == ""]
    assert set(targets) == {f"{f}:{li}" for f, li in zip(located.file, located.line)}
    ops = source_line_ops(h200.hlo_stats, h200.result("source_functions"))
    by_line = ops.groupby(["file", "line"]).self_time_us.sum()
    for f, li, us, n in located[["file", "line", "self_time_us", "ops"]].itertuples(index=False):
        assert by_line[(f, li)] == pytest.approx(us)
        assert len(targets[f"{f}:{li}"]) == min(n, MAX_TARGETS)


def _graph_of_row(page, cls: str, row_js: str) -> str:
    """Click the row ``row_js`` finds, then "graph"; the centre op of the graph drawn."""
    p = page.page
    p.wait_for_selector(".tt-table tr.tp-row-link")
    p.evaluate(f"() => ({row_js}).click()")
    p.wait_for_function(f"!document.querySelector('.{cls}-button').disabled")
    p.click(f".{cls}-button")
    p.wait_for_selector(f".{cls}-out .hg-center", timeout=60000)
    return page.js(f"() => document.querySelector('.{cls}-out .hg-center').dataset.node")


def test_op_stats_row_opens_the_graph_of_its_hottest_hlo_op(h200, tmp_path):
    view = OpStatsView(h200)
    op = "jit(step)/jvp()/dot_general"
    with WidgetPage(view, tmp_path, bundle("opstats"), kernel=True) as page:
        row = ("Array.from(document.querySelectorAll('.tt-table tr.tp-row-link'))"
               f".find(r => Array.from(r.cells).some(c => c.textContent === {op!r}))")
        center = _graph_of_row(page, "ops-graph", row)
        assert center == view.graph_targets[op][0][0]
        assert page.js("() => document.querySelector('.ops-graph-selected').textContent") \
            .startswith(f"Selected: {op}")
        page.page.screenshot(path=str(SHOTS / "graph_op_stats.png"), full_page=True)
        assert page.console_errors == []


def test_source_line_opens_the_graph_of_its_hottest_op(h200, tmp_path):
    view = SourceView(h200)
    first = h200.source_lines.iloc[0]
    with WidgetPage(view, tmp_path, bundle("source"), kernel=True) as page:
        center = _graph_of_row(page, "src-graph",
                               "document.querySelector('.tt-table tr.tp-row-link')")
        assert center == view.graph_targets[f"{first.file}:{first.line}"][0][0]
        n = len(view.graph_targets[f"{first.file}:{first.line}"])
        assert page.js("() => document.querySelector('.src-graph-ops').options.length") == n
        page.page.screenshot(path=str(SHOTS / "graph_source.png"), full_page=True)
        assert page.console_errors == []


def test_offline_the_action_says_why_it_has_no_button(h200, tmp_path):
    from ..reporting.offline_page import OfflinePage

    path = SourceView(h200).to_html(tmp_path / "source.html")
    with OfflinePage(path, wait_for=".src-graph-offline") as page:
        assert page.js("() => document.querySelectorAll('.src-graph-button').length") == 0
        assert "has none" in page.js(
            "() => document.querySelector('.src-graph-offline').textContent")


def test_inside_the_dashboard_each_views_request_reaches_its_python(h200):
    from tfprof_nb.widgets.dashboard_view import DashboardView, prefix_of

    dash = DashboardView(h200)
    for tab, op in (("ops", "fusion.263"), ("source", "fusion.263"), ("timeline", "fusion.263")):
        reply, _ = dash._answer({"kind": "hlo_graph", "op": op, "program": "", "hops": 1,
                                 "id": 3, "view": prefix_of(tab)}, [])
        assert reply["view"] == prefix_of(tab) and reply["id"] == 3, tab
        assert reply["graph"]["center"] == op, tab
