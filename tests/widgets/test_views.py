"""Tables, the step-time graph and the dashboard in headless Chromium, from real profiles."""

from __future__ import annotations

import csv
import io
import time

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.constants import CATEGORY_COLUMNS
from tfprof_nb.plot._style import CATEGORY_LABELS
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.dashboard_view import Dashboard
from tfprof_nb.widgets.step_time_graph_view import StepTimeGraph
from tfprof_nb.widgets.table_view import KernelTable, OpStatsTable, TableView

from .harness import WidgetPage, click_center, hover_label, plot_traces, wait_for_plot


def _rows(page):
    return page.js("() => Array.from(document.querySelectorAll('.tt-table tr')).slice(1)"
                   ".map(tr => Array.from(tr.children).map(td => td.textContent))")


def _header_index(page, column):
    return page.js("c => Array.from(document.querySelectorAll('.tt-table th'))"
                   ".findIndex(th => th.dataset.column === c)", column)


def test_kernel_table_sort_filter_and_csv(gpu_fixture_file, tmp_path):
    prof = tp.load(gpu_fixture_file)
    ks = prof.kernel_stats
    with WidgetPage(KernelTable(prof), tmp_path, bundle("table")) as page:
        rows = _rows(page)
        assert len(rows) == len(ks)
        col = _header_index(page, "total_duration_us")
        page.page.click("th[data-column='total_duration_us']")  # numbers sort descending
        page.page.click("th[data-column='total_duration_us']")  # then ascending
        shown = [float(r[col].replace(",", "")) for r in _rows(page)]
        assert shown == sorted(shown) and shown != [float(v) for v in ks.total_duration_us]
        page.page.fill(".tt-filter", "Philox")
        filtered = _rows(page)
        name_col = _header_index(page, "kernel_name")
        expected = ks[ks.kernel_name.str.contains("philox", case=False)]
        assert 0 < len(filtered) == len(expected) < len(ks)
        assert all("Philox" in r[name_col] for r in filtered)
        page.page.fill(".tt-filter", "")
        text = page.js("() => document.querySelector('.tfprof-table').__table.csv()")
        page.page.click(".tt-csv")
        assert page.js("() => document.querySelector('.tfprof-table').__lastCsv") == text
    exported = pd.read_csv(io.StringIO(text))
    assert list(exported.columns) == list(ks.columns)
    exported = exported.sort_values("rank").reset_index(drop=True)
    pd.testing.assert_series_equal(exported.kernel_name, ks.kernel_name.reset_index(drop=True))
    np.testing.assert_allclose(exported.total_duration_us, ks.total_duration_us)
    assert exported.occurrences.tolist() == ks.occurrences.tolist()


def test_op_table_pages_large_tables(gpu_fixture_file, tmp_path):
    prof = tp.load(gpu_fixture_file)
    n = len(prof.op_stats)
    assert n > 1000
    with WidgetPage(OpStatsTable(prof), tmp_path, bundle("table")) as page:
        assert len(_rows(page)) == 100
        info = page.js("() => document.querySelector('.tt-info').textContent")
        assert f"{n:,} rows" in info and "page 1/" in info
        first = _rows(page)[0]
        page.page.click(".tt-next")
        assert _rows(page)[0] != first
        assert "page 2/" in page.js("() => document.querySelector('.tt-info').textContent")


def test_table_cells_are_text(tmp_path):
    evil = "<img src=x onerror=alert(1)>"
    df = pd.DataFrame({"operation": [evil, "ok"], "value": [1.5, 2.0]})
    with WidgetPage(TableView(df, title=evil), tmp_path, bundle("table")) as page:
        assert evil in page.js("() => document.querySelector('.tfprof-table').textContent")
        assert page.js("() => document.querySelectorAll('img').length") == 0
        assert page.dialogs == []


def test_step_graph_bars_hover_and_click(cpu_file, tmp_path):
    prof = tp.load(cpu_file)
    steps = prof.steps
    widget = StepTimeGraph(prof)
    with WidgetPage(widget, tmp_path, bundle("stepgraph")) as page:
        wait_for_plot(page.page)
        traces = plot_traces(page.page)
        bars = [t for t in traces if t["type"] == "bar"]
        assert {t["name"] for t in bars} == {
            CATEGORY_LABELS[c] for c in CATEGORY_COLUMNS if steps[c].any()}
        assert all(t["n"] == len(steps) for t in bars)
        drawn = page.js("() => document.querySelectorAll('.trace.bars .point').length")
        assert drawn == sum(int((steps[c] > 0).sum()) for c in CATEGORY_COLUMNS)
        first_bar = ".trace.bars:first-child .point:nth-child(3)"
        tip = hover_label(page.page, first_bar)
        assert f"{steps.duration_ms.iloc[2]:.3f} ms" in tip and "Host compute" in tip
        click_center(page.page, first_bar)
        page.page.wait_for_function("() => window.__changes.length > 0")
        assert ["clicked_step", 2] in page.changes()
        assert page.console_errors == [] and page.blocked == []


def test_dashboard_tabs_reasons_and_step_zoom(cpu_file, tmp_path):
    prof = tp.load(cpu_file)
    dash = Dashboard(prof)
    assert "kernels" in dash.reasons and "memory" in dash.reasons
    assert dash.errors == {}
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        cards = page.js("() => Array.from(document.querySelectorAll('.db-card'))"
                        ".map(c => c.textContent)")
        assert any("Average step time" in c for c in cards)
        header = page.js("() => document.querySelector('.tp-header').textContent")
        assert f"{prof.n_events:,}" in header
        assert "input-bound" in page.js("() => document.querySelector('.db-pane').textContent")
        page.page.click(".db-tab[data-tab='kernels']")
        assert "No GPU" in page.js(
            "() => document.querySelector(\"[data-pane='kernels']\").textContent")
        page.page.click(".db-tab[data-tab='ops']")
        assert len(_rows(page)) > 5
        page.page.click(".db-tab[data-tab='overview']")
        wait_for_plot(page.page, "[data-pane='overview']")
        click_center(page.page, "[data-pane='overview'] .trace.bars:first-child "
                                ".point:nth-child(2)")
        page.page.wait_for_function("() => document.querySelector('.tfprof-timeline')")
        view = page.js("() => document.querySelector('.tfprof-timeline').__timeline.view()")
        meta = dash.overview__step_figure["layout"]["meta"]
        assert view == pytest.approx([meta["start_us"][1], meta["end_us"][1]])
        dash.open_tab("timeline")  # (what the page's request does; the page had it offline)
        step = dash.timeline__meta["steps"].iloc[1]
        assert view == pytest.approx([step["start"], step["end"]])
        assert page.js("() => document.querySelector(\"[data-pane='timeline']\")"
                       ".style.display") == "block"
        assert ["overview__clicked_step", 1] in page.changes()
        assert page.blocked == [] and page.console_errors == []


def test_dashboard_tabs_are_reached_and_chosen_with_the_keyboard(cpu_file, tmp_path):
    """WAI-ARIA tabs: a tablist of named buttons, the shown one selected and the only one in
    the tab order; arrow keys, Home and End move and show; each pane names its tab."""
    dash = Dashboard(tp.load(cpu_file))
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        roles = page.js("() => [document.querySelector('.db-tabs').getAttribute('role'), "
                        "Array.from(document.querySelectorAll('.db-tab')).map(t => "
                        "[t.tagName, t.getAttribute('role'), t.getAttribute('aria-selected'), "
                        "t.tabIndex, t.textContent])]")
        assert roles[0] == "tablist"
        assert [r[:2] for r in roles[1]] == [["BUTTON", "tab"]] * len(dash.views)
        assert [(r[2], r[3]) for r in roles[1]].count(("true", 0)) == 1 and \
            roles[1][0][2:4] == ["true", 0]
        page.page.focus(".db-tab[data-tab='overview']")
        page.page.keyboard.press("ArrowRight")
        page.page.wait_for_function("() => document.activeElement.dataset.tab === 'timeline' "
                                    "&& document.querySelector(\"[data-pane='timeline']\")"
                                    ".style.display === 'block'")
        page.page.keyboard.press("End")
        last = dash.views[-1]["tab"]
        page.page.wait_for_function(f"() => document.activeElement.dataset.tab === '{last}'")
        page.page.keyboard.press("Home")
        page.page.wait_for_function("() => document.activeElement.dataset.tab === 'overview' "
                                    "&& document.activeElement.getAttribute('aria-selected') "
                                    "=== 'true'")
        labelled = page.js("() => Array.from(document.querySelectorAll('.db-pane')).every(p => "
                           "p.getAttribute('role') === 'tabpanel' && document.getElementById("
                           "p.getAttribute('aria-labelledby')))")
        assert labelled and page.console_errors == []


def test_dashboard_gpu_fixture(gpu_fixture_file, tmp_path):
    dash = tp.load(gpu_fixture_file).show()
    assert "kernels" not in dash.reasons and dash.errors == {}
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        for tab in ("timeline", "ops", "kernels", "memory"):
            page.page.click(f".db-tab[data-tab='{tab}']")
        kernel_rows = page.js("() => document.querySelectorAll(\"[data-pane='kernels'] "
                              ".tt-table tr\").length") - 1
        assert kernel_rows == len(tp.load(gpu_fixture_file).kernel_stats)
        page.page.click(".db-tab[data-tab='kernels']")
        wait_for_plot(page.page, "[data-pane='kernels']")
        tip = hover_label(page.page, "[data-pane='kernels'] .trace.bars .point:last-child")
        top = tp.load(gpu_fixture_file).kernel_stats.iloc[0]
        assert top.kernel_name[:40] in tip and "occupancy" in tip
        page.page.click(".db-tab[data-tab='overview']")
        overview = page.js("() => document.querySelector(\"[data-pane='overview']\").textContent")
        assert "Run environment" in overview and "/device:GPU:4" in overview and "7.0" in overview
        assert page.console_errors == []


def test_a_failing_view_shows_its_error_and_the_rest_work(cpu_file, tmp_path, monkeypatch):
    from tfprof_nb.widgets.op_stats_view import OpStatsView

    def broken(prof):
        raise RuntimeError("scope table <b>exploded</b>")

    monkeypatch.setattr(OpStatsView, "state", classmethod(lambda cls, prof: broken(prof)))
    dash = Dashboard(tp.load(cpu_file))
    assert "exploded" in dash.errors["ops"]
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='ops']")
        pane = page.js("() => document.querySelector(\"[data-pane='ops']\").textContent")
        assert "scope table <b>exploded</b>" in pane and "report" in pane
        assert page.js("() => document.querySelectorAll(\"[data-pane='ops'] b\").length") == 0
        # the traceback, folded under the error: Python's own, ending in the failing line
        folded = "() => document.querySelector(\"[data-pane='ops'] details.tp-traceback\")"
        assert page.js(f"{folded}.open") is False
        page.page.click("[data-pane='ops'] details.tp-traceback summary")
        shown = page.js(f"{folded}.querySelector('pre').textContent")
        assert shown.startswith("Traceback (most recent call last)") and "broken" in shown
        assert shown.rstrip().endswith("RuntimeError: scope table <b>exploded</b>")
        page.page.click(".db-tab[data-tab='input']")
        wait_for_plot(page.page, "[data-pane='input']")


def test_csv_module_roundtrip_of_commas():
    from tfprof_nb.offline.columns import decode_columns
    from tfprof_nb.widgets.traits import TableData

    wire = TableData(pd.DataFrame({"name": ['a,"b"', "c"], "n": [1, 2]})).wire()
    assert decode_columns(wire)["name"] == ['a,"b"', "c"]
    assert next(csv.reader(['"a,""b"""'])) == ['a,"b"']


def _assert_peak_said(page, first, breakdown) -> None:
    """The peak in words: the figure the chart's marker shows, its share of the capacity, and
    the breakdown's unused-preallocated row (XProf's name) as a part of it."""
    from tfprof_nb.analysis.tf.memory import UNMAPPED_OP
    from tfprof_nb.plot.memory_figures import human_bytes

    said = page.js("() => document.querySelector('.mem-peak').textContent")
    marker = page.js("() => document.querySelector('.js-plotly-plot').data"
                     ".find(t => t.name === 'Peak' && t.visible !== false).text[0]")
    assert said.startswith(f"Peak of {first.allocator}: {marker.removeprefix('peak ')} ")
    assert (f"{100 * first.peak_bytes_in_use / first.memory_capacity_bytes:.1f}% of the "
            f"allocator's {human_bytes(first.memory_capacity_bytes)} capacity") in said
    held = breakdown[(breakdown.allocator == first.allocator)
                     & (breakdown.tf_op == UNMAPPED_OP)].allocation_bytes.sum()
    assert held > 0 and (f"{human_bytes(held)} of it "
                         f"({100 * held / first.peak_bytes_in_use:.1f}%) is the breakdown's "
                         f"'{UNMAPPED_OP}' row") in said


def test_memory_timeline_draws_hovers_and_switches_allocator(gpu_fixture_file, tmp_path):
    from tfprof_nb.widgets.memory_timeline_view import MemoryTimeline

    prof = tp.load(gpu_fixture_file)
    summary = prof.memory_summary.sort_values("peak_bytes_in_use", ascending=False,
                                              kind="stable")
    widget = MemoryTimeline(prof)
    with WidgetPage(widget, tmp_path, bundle("memory")) as page:
        wait_for_plot(page.page)
        options = page.js("() => Array.from(document.querySelectorAll('.mem-allocator option'))"
                          ".map(o => o.textContent)")
        assert options == summary.allocator.tolist()
        shown = [t for t in plot_traces(page.page) if t["visible"] is not False]
        assert {t["name"] for t in shown} == {"Stack", "Heap", "Free", "Fragmentation",
                                              "Allocations", "Peak"}
        filled = page.js("() => document.querySelectorAll('.scatterlayer .js-fill').length")
        assert filled >= 2  # stack and heap areas
        # hover one allocation point: its fields show
        page.js("""() => {  // the allocation markers: the trace with the most points
          const traces = Array.from(document.querySelectorAll('.scatterlayer .trace'));
          const most = traces.sort((a, b) => b.querySelectorAll('.point').length -
                                             a.querySelectorAll('.point').length)[0];
          most.querySelectorAll('.point')[10].setAttribute('data-probe', '1');
        }""")
        tip = hover_label(page.page, "[data-probe]")
        for field in ("requested", "allocated", "shape", "region", "step", "in use"):
            assert field in tip
        first = summary.iloc[0]
        tl = prof.memory_timeline
        tl = tl[(tl.host == first.host) & (tl.allocator == first.allocator)]
        assert any(str(op) in tip for op in tl.tf_op.dropna().unique())
        breakdown = prof.memory_breakdown
        n_first = int((breakdown.allocator == first.allocator).sum())
        assert len(_rows(page)) == min(n_first, 100)
        assert f"{n_first:,} rows" in page.js("() => document.querySelector('.tt-info')"
                                               ".textContent")
        _assert_peak_said(page, first, breakdown)
        page.page.select_option(".mem-allocator", "1")
        second = summary.allocator.iloc[1]
        page.page.wait_for_function(
            "name => document.querySelector('.mem-peak').textContent"
            ".startsWith(`Peak of ${name}: `)", arg=second)
        assert second in page.js("() => document.querySelector('.tt-bar b').textContent")
        n_second = int((breakdown.allocator == second).sum())
        column = _header_index(page, "allocator")
        assert {r[column] for r in _rows(page)} == {second}
        assert len(_rows(page)) == min(n_second, 100)
        page.page.wait_for_function(
            "() => document.querySelector('.js-plotly-plot').data[6].visible === true")
        visible = [t["name"] for t in plot_traces(page.page) if t["visible"] is True]
        assert visible.count("Peak") == 1
        assert page.console_errors == []


def test_tf_data_graph_marks_the_bottleneck(cpu_slowmap_logdir, tmp_path):
    prof = tp.load(cpu_slowmap_logdir)
    dash = Dashboard(prof)
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='tfdata']")
        nodes = page.js("() => Array.from(document.querySelectorAll('.tfd-node'))"
                        ".map(g => [g.querySelector('text').textContent, g.classList.contains("
                        "'bottleneck'), g.classList.contains('critical')])")
        bottleneck = [n for n in nodes if n[1]]
        assert len(bottleneck) == 1 and bottleneck[0][0] == "Map" and bottleneck[0][2]
        assert any(n[0] == "Root" and n[2] for n in nodes)  # the root is on the critical path
        text = page.js("() => document.querySelector('.tfd-suggestion').textContent")
        assert "num_parallel_calls=tf.data.AUTOTUNE" in text
        title = page.js("() => document.querySelector('.tfd-node.bottleneck title').textContent")
        assert "self:" in title and "total:" in title and "calls:" in title


def test_input_pipeline_tab(cpu_file, tmp_path):
    prof = tp.load(cpu_file)
    with WidgetPage(Dashboard(prof), tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='input']")
        pane = page.js("() => document.querySelector(\"[data-pane='input']\").textContent")
        assert prof.input_pipeline.summary["input_statement"] in pane
        assert "Data preprocessing" in pane and "Iterator::Root" in pane
        wait_for_plot(page.page, "[data-pane='input']")
        traces = plot_traces(page.page, "[data-pane='input']")
        assert traces[0]["name"] == "Waiting for input" and traces[0]["n"] == len(prof.steps)
        page.page.click(".db-tab[data-tab='pod']")
        assert "one host" in page.js(
            "() => document.querySelector(\"[data-pane='pod']\").textContent")


def _pod_run(tmp_path, cpu_file, cpu_python_file):
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(cpu_file, run / "worker-0.xplane.pb")
    shutil.copy(cpu_python_file, run / "worker-1.xplane.pb")
    return tp.load(run)


def test_pod_viewer_with_two_workers(tmp_path, cpu_file, cpu_python_file):
    prof = _pod_run(tmp_path, cpu_file, cpu_python_file)
    dash = Dashboard(prof)
    assert "pod" not in dash.reasons
    (tmp_path / "page").mkdir()
    with WidgetPage(dash, tmp_path / "page", bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='pod']")
        wait_for_plot(page.page, "[data-pane='pod']")
        ticks = page.js("() => Array.from(document.querySelectorAll(\"[data-pane='pod'] "
                        ".xtick text\")).map(t => t.textContent)")
        assert ticks == ["worker-0", "worker-1"]
        before = page.js("() => document.querySelector(\"[data-pane='pod'] .js-plotly-plot\")"
                         "._fullData[0].y.slice()")
        options = page.js("() => Array.from(document.querySelectorAll('.pod-step option'))"
                          ".map(o => o.textContent)")
        n = prof.pod.step.nunique()
        assert options[0] == f"Mean of the {n} steps XProf's pod viewer aligns across the 2 " \
            "hosts" and len(options) == n + 1
        page.page.select_option(".pod-step", "2")
        after = page.js("() => document.querySelector(\"[data-pane='pod'] .js-plotly-plot\")"
                        "._fullData[0].y")
        step = sorted(prof.pod.step.unique())[1]
        one = prof.pod[prof.pod.step == step].set_index("host")
        dash.open_tab("pod")
        col = next(c for c in CATEGORY_COLUMNS
                   if CATEGORY_LABELS[c] == dash.pod__figure["data"][0]["name"])
        np.testing.assert_allclose(after, one[col].reindex(["worker-0", "worker-1"]).fillna(0))
        assert after != before
        # the drawn title says the bars are that step's alone (it read "mean of ..." still)
        title = "[data-pane='pod'] .gtitle"
        page.page.wait_for_function(f"() => document.querySelector(\"{title}\")?.textContent"
                                    ".includes('alone')")
        assert page.js(f"() => document.querySelector(\"{title}\").textContent") == \
            f"Step time per host: s{options[2][1:]} alone"
        assert page.console_errors == []


def test_tf_stats_pies_and_scope_icicle(gpu_fixture_file, tmp_path):
    prof = tp.load(gpu_fixture_file)
    dash = Dashboard(prof)
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='ops']")
        wait_for_plot(page.page, "[data-pane='ops']")
        pies = [t for t in plot_traces(page.page, "[data-pane='ops']") if t["type"] == "pie"]
        assert len(pies) >= 2  # host by op and by type (+ device when it has ops)
        assert not any("IDLE" in p["labels"] for p in pies)  # idle time starts left out
        tip = hover_label(page.page, "[data-pane='ops'] .slice")
        assert " us (" in tip
        page.page.click(".db-idle")  # include idle
        page.page.wait_for_function(
            "() => document.querySelector(\"[data-pane='ops'] .js-plotly-plot\")"
            ".data.some(t => t.labels.includes('IDLE'))")
        nodes = page.js("() => document.querySelectorAll('.icicle-node').length")
        assert nodes == len(prof.scope_stats(side="all"))
        page.page.select_option(".db-scope-metric", "bytes")
        top = page.js("() => document.querySelector('.icicle-node title').textContent")
        assert top.split(":")[0] in set(prof.scope_stats(side="all").scope)
        assert page.console_errors == []


def test_scopes_by_memory_are_not_offered_without_memory_events(tmp_path):
    """A CPU TensorFlow capture records no allocations: every scope allocates 0 bytes, whose
    icicle would be empty, so that choice is disabled with why (it drew a blank area)."""
    from tfprof_nb.widgets.op_stats_view import OpStatsView

    from ..conftest import DATA

    prof = tp.load(DATA / "tf_cpu_epochs.xplane.pb")
    assert len(prof.scope_stats(side="all")) and \
        not (prof.scope_stats(side="all").allocated_bytes > 0).any()
    with WidgetPage(OpStatsView(prof), tmp_path, bundle("opstats")) as page:
        page.page.wait_for_selector(".db-scope-metric")
        option = page.js("() => { const o = document.querySelector('.db-scope-metric "
                         "option[value=bytes]'); return [o.disabled, o.textContent]; }")
        assert option == [True, "by allocated memory (no memory events in this profile)"]
        assert page.console_errors == []


def test_comparison_view(cpu_file, cpu_slowmap_logdir, tmp_path):
    from tfprof_nb.widgets.comparison_view import ComparisonView

    comparison = tp.compare(tp.load(cpu_file), tp.load(cpu_slowmap_logdir),
                            labels=("before", "after"))
    view = ComparisonView(comparison)
    with WidgetPage(view, tmp_path, bundle("compare")) as page:
        wait_for_plot(page.page, count=2)  # the step-time waterfall, then the categories
        assert [t["name"] for t in plot_traces(page.page)] == ["step time change"]
        assert [t["name"] for t in plot_traces(page.page, index=1)] == ["before", "after"]
        assert "before -> after" in page.js(
            "() => document.querySelector('.cmp-summary').textContent")
        assert len(_rows(page)) > 0
    data, _ = comparison._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data


def test_standalone_pipeline_graph_and_pod_view(tmp_path, cpu_slowmap_logdir, cpu_file,
                                                cpu_python_file):
    from tfprof_nb.widgets import PipelineGraph, PodView

    graph = PipelineGraph(tp.load(cpu_slowmap_logdir))
    (tmp_path / "graph").mkdir()
    with WidgetPage(graph, tmp_path / "graph", bundle("pipelinegraph")) as page:
        bottleneck = page.js("() => Array.from(document.querySelectorAll('.tfd-node.bottleneck"
                             "')).map(g => g.querySelector('text').textContent)")
        assert bottleneck == ["Map"]
        assert page.console_errors == []
    pod = PodView(_pod_run(tmp_path, cpu_file, cpu_python_file))
    assert pod.figure["layout"]["meta"]["hosts"] == ["worker-0", "worker-1"]
    (tmp_path / "pod").mkdir()
    with WidgetPage(pod, tmp_path / "pod", bundle("podview")) as page:
        wait_for_plot(page.page)
        traces = plot_traces(page.page)
        assert traces and all(t["n"] == 2 for t in traces)  # one stacked column per worker
        assert page.console_errors == []


def test_every_view_renders_on_its_own(gpu_fixture_file, tmp_path):
    """Each view of the dashboard's list is also a widget with its own module."""
    from tfprof_nb.widgets.dashboard_view import view_classes

    prof = tp.load(gpu_fixture_file)
    rendered = []
    for cls in view_classes():
        tab = cls.tab
        if cls.reason(prof):
            continue
        view = cls(prof)
        assert view.error == ""
        (tmp_path / tab).mkdir()
        with WidgetPage(view, tmp_path / tab, view._module_source) as page:
            if any("figure" in k for k in view.synced()) or tab == "ops":
                wait_for_plot(page.page)
            text = page.js("() => document.getElementById('root').textContent")
            assert text.strip() or page.js("() => !!document.querySelector('canvas, svg')")
            assert page.console_errors == [] and page.blocked == [], tab
        rendered.append(tab)
    assert {"overview", "timeline", "ops", "kernels", "memory", "input"} <= set(rendered)


def test_xla_tab_of_an_xla_profile(tmp_path_factory, tmp_path, gpu_fixture_file):
    from tfprof_nb.widgets import XlaView

    from ..analysis.xla_profiles import make

    prof = tp.load(make(tmp_path_factory, "gpu") / "full.xplane.pb")
    dash = Dashboard(prof)
    assert "xla" not in dash.reasons and dash.errors == {}
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='xla']")
        wait_for_plot(page.page, "[data-pane='xla']")
        pane = page.js("() => document.querySelector(\"[data-pane='xla']\").textContent")
        assert "ridge point" in pane and "TFLOP/s" in pane
        traces = plot_traces(page.page, "[data-pane='xla']")
        assert traces[0]["name"] == "Roofline (HBM)" and traces[-1]["name"] == "Whole program"
        nodes = page.js("() => document.querySelectorAll(\"[data-pane='xla'] .icicle-node\")"
                        ".length")
        assert nodes == int((prof.op_profile(include_idle=False).depth > 0).sum())
        info = page.js("() => document.querySelector(\"[data-pane='xla'] .tt-info\")"
                       ".textContent")
        assert f"{len(prof.hlo_stats):,} rows" in info
        assert page.console_errors == []
    reason = XlaView.reason(tp.load(gpu_fixture_file))
    assert reason.startswith("No XLA ops") and "jit_compile" in reason


DASH_TL = "document.querySelector(\"[data-pane='timeline'] .tfprof-timeline\")?.__timeline"


def _built_by_the_kernel(page, changed: list, tab: str, views_first: bool) -> None:
    """Wait for the page's request for ``tab``, then send what building it changed as one
    update: ``views`` first or last (a kernel's update comes in a set's order)."""
    page.page.wait_for_function("t => window.__sent.some(m => m.kind === 'tab' && m.tab === t)",
                                arg=tab)
    deadline = time.monotonic() + 60
    while "views" not in changed:  # (the page's request reaches the widget's Python)
        assert time.monotonic() < deadline, "the tab was never built"
        page.page.wait_for_timeout(20)
    traits = list(dict.fromkeys(k for k in changed if k != "views"))
    page.push_state(["views", *traits] if views_first else [*traits, "views"])
    changed.clear()


@pytest.mark.parametrize("views_first", [True, False])
def test_a_tab_the_kernel_builds_keeps_what_it_was_opened_for(gpu_fixture_file, cpu_file,
                                                              tmp_path, views_first):
    """A pending trace tab arrives from the kernel in one update whose traits come in any
    order: drawn from it, the trace viewer still shows the kernel-stats row clicked (its first
    event selected) and the step chosen on the overview (its view)."""
    (tmp_path / "row").mkdir()
    (tmp_path / "zoom").mkdir()
    dash = Dashboard(tp.load(gpu_fixture_file))
    changed: list[str] = []
    dash.observe(lambda c: changed.append(c["name"]))
    with WidgetPage(dash, tmp_path / "row", bundle("dashboard"), kernel=True,
                    live=True) as page:
        page.page.click(".db-tab[data-tab='kernels']")
        _built_by_the_kernel(page, changed, "kernels", views_first)
        row = page.page.locator("[data-pane='kernels'] .tt-table tr.tp-row-link").first
        name = row.locator("td:nth-child(3)").text_content()
        row.click()
        _built_by_the_kernel(page, changed, "timeline", views_first)
        page.page.wait_for_function(f"() => {DASH_TL}?.selected >= 0", timeout=60000)
        assert page.js(f"() => {DASH_TL}.selection.name") == name
        assert page.console_errors == []
    dash = Dashboard(tp.load(cpu_file))
    changed.clear()
    dash.observe(lambda c: changed.append(c["name"]))
    with WidgetPage(dash, tmp_path / "zoom", bundle("dashboard"), kernel=True,
                    live=True) as page:
        wait_for_plot(page.page, "[data-pane='overview']")
        click_center(page.page, "[data-pane='overview'] .trace.bars:first-child "
                                ".point:nth-child(2)")
        _built_by_the_kernel(page, changed, "timeline", views_first)
        page.page.wait_for_function(f"() => {DASH_TL}")
        meta = dash.overview__step_figure["layout"]["meta"]
        assert page.js(f"() => {DASH_TL}.view()") == \
            pytest.approx([meta["start_us"][1], meta["end_us"][1]])
        assert page.console_errors == []


def test_input_chart_legend_clear_of_a_pods_step_labels(tmp_path):
    """A pod's steps are labelled "host step": rotated, those labels reach far under the
    axis; the legend sits at the foot of the figure, below every tick label (it was drawn
    over them)."""
    from ..conftest import DATA

    prof = tp.load(DATA / "tf_two_workers_loaded")
    with WidgetPage(Dashboard(prof), tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='input']")
        wait_for_plot(page.page, "[data-pane='input']")
        boxes = page.js("""() => {
          const gd = document.querySelector("[data-pane='input'] .js-plotly-plot");
          const box = e => { const r = e.getBoundingClientRect();
                             return [r.left, r.top, r.right, r.bottom]; };
          return {legend: box(gd.querySelector('.legend')),
                  ticks: Array.from(gd.querySelectorAll('.xtick text')).map(box)};
        }""")
    legend, ticks = boxes["legend"], boxes["ticks"]
    assert len(ticks) > 10 and legend[3] > legend[1]
    lowest = max(t[3] for t in ticks)
    assert legend[1] >= lowest, (legend, lowest)
