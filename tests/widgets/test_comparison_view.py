"""The comparison view in Chromium: the step-time waterfall of a real pair of runs (a
TensorFlow model with a wider Dense layer), the matched op table with its noise bands, the
categories, and the same page offline (``to_html``)."""

from __future__ import annotations

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.comparison_view import ComparisonView

from ..make_compare_profiles import capture
from ..reporting.offline_page import OfflinePage
from .harness import WidgetPage, plot_traces, wait_for_plot


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    runs = capture(tmp_path_factory.mktemp("tf_wider"), "tf_wider")
    return tp.compare(tp.load(runs["base"]), tp.load(runs["wider"]), labels=("32", "4096"))


def _table_cells(page, root: str) -> list[list[str]]:
    return page.js("sel => Array.from(document.querySelectorAll(sel + ' .tt-table tr'))"
                   ".slice(1).map(tr => Array.from(tr.children).map(td => td.textContent))",
                   root)


def _header(page, root: str) -> list[str]:
    return page.js("sel => Array.from(document.querySelectorAll(sel + ' .tt-table th'))"
                   ".map(th => th.dataset.column)", root)


def test_waterfall_and_matched_ops(comparison, tmp_path):
    top = comparison.waterfall(top=10)
    with WidgetPage(ComparisonView(comparison), tmp_path, bundle("compare")) as page:
        wait_for_plot(page.page, ".cmp-waterfall")
        (trace,) = plot_traces(page.page, ".cmp-waterfall")
        assert trace["type"] == "bar" and trace["n"] == len(top)
        drawn = page.js("() => { const gd = document.querySelector('.cmp-waterfall "
                        ".js-plotly-plot'); return {x: gd.data[0].x, y: gd.data[0].y, "
                        "base: gd.data[0].base, meta: gd.layout.meta}; }")
        assert drawn["x"] == top.label.tolist()
        assert drawn["meta"]["measure"] == top.measure.tolist()
        # each change starts where the one before ended; the last bar is the new median
        assert drawn["base"][1] == pytest.approx(comparison.step_time["base"])
        for i in range(2, len(top) - 1):
            assert drawn["base"][i] == pytest.approx(drawn["base"][i - 1] + drawn["y"][i - 1])
        assert drawn["base"][-2] + drawn["y"][-2] == pytest.approx(drawn["y"][-1])
        assert drawn["y"][-1] == pytest.approx(comparison.step_time["new"])
        page.page.wait_for_function(  # every bar drawn
            "n => document.querySelectorAll('.cmp-waterfall .point path').length >= n",
            arg=len(top))
        wait_for_plot(page.page, ".cmp-figure")
        page.page.wait_for_function(
            "() => document.querySelectorAll('.cmp-ops-delta .tt-table tr').length > 1")
        header = _header(page, ".cmp-ops-delta")
        for column in ("operation", "32_us", "4096_us", "delta_us", "band_low_us", "noise"):
            assert column in header
        rows = _table_cells(page, ".cmp-ops-delta")
        noise = [r[header.index("noise")] for r in rows]
        ops = comparison.ops
        assert noise.count("beyond noise") == int((ops.noise == "beyond noise").sum()) > 0
        first = rows[0][header.index("operation")]
        assert first == ops.index[0][1]
        assert "32 -> 4096" in page.js(
            "() => document.querySelector('.cmp-summary').textContent")
        assert page.console_errors == []


def test_the_offline_page(comparison, tmp_path):
    path = comparison.to_html(tmp_path / "cmp.html")
    with OfflinePage(path, wait_for=".tfprof-compare .cmp-waterfall .main-svg") as page:
        page.page.wait_for_function(
            "() => document.querySelectorAll('.cmp-ops-delta .tt-table tr').length > 1")
        assert page.js("() => document.querySelector('.cmp-waterfall .js-plotly-plot')"
                       ".layout.meta.kind") == "compare_waterfall"
        assert page.blocked == [] and page.console_errors == []
