"""Tables, the step-time graph and the dashboard in headless Chromium, from real profiles."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.dashboard import Dashboard
from tfprof_nb.widgets.stepgraph import StepTimeGraph
from tfprof_nb.widgets.tables import KernelTable, OpStatsTable, Table

from .harness import WidgetPage


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
    with WidgetPage(Table(df, title=evil), tmp_path, bundle("table")) as page:
        assert evil in page.js("() => document.querySelector('.tfprof-table').textContent")
        assert page.js("() => document.querySelectorAll('img').length") == 0
        assert page.dialogs == []


def test_step_graph_bars_hover_and_click(cpu_file, tmp_path):
    prof = tp.load(cpu_file)
    steps = prof.steps
    widget = StepTimeGraph(prof)
    with WidgetPage(widget, tmp_path, bundle("stepgraph")) as page:
        bars = page.js("() => document.querySelectorAll('.sg-bar').length")
        nonzero = int((steps[[c["name"] for c in widget.step_graph["categories"]]] > 0)
                       .to_numpy().sum())
        assert bars == nonzero
        page.page.hover(".sg-bar[data-step='2']")
        tip = page.js("() => document.querySelector('.sg-tip').textContent")
        assert f"{steps.duration_ms.iloc[2]:.3f} ms" in tip and "Host compute" in tip
        page.page.click(".sg-bar[data-step='2']")
        assert ["clicked_step", 2] in page.changes()


def test_dashboard_tabs_reasons_and_step_zoom(cpu_file, tmp_path):
    prof = tp.load(cpu_file)
    dash = Dashboard(prof)
    assert "kernels" in dash.reasons and "memory" in dash.reasons
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        cards = page.js("() => Array.from(document.querySelectorAll('.db-card'))"
                        ".map(c => c.textContent)")
        assert any("Average step time" in c for c in cards)
        assert "input-bound" in page.js("() => document.querySelector('.db-pane').textContent")
        page.page.click(".db-tab[data-tab='kernels']")
        assert "No GPU" in page.js(
            "() => document.querySelector(\"[data-pane='kernels']\").textContent")
        page.page.click(".db-tab[data-tab='ops']")
        assert len(_rows(page)) > 5
        page.page.click(".db-tab[data-tab='overview']")
        page.page.click(".sg-bar[data-step='1']")
        view = page.js("() => document.querySelector('.tfprof-timeline').__timeline.view()")
        step = dash.tl_meta["steps"][1]
        assert view == pytest.approx([step["start"], step["end"]])
        assert page.js("() => document.querySelector(\"[data-pane='timeline']\")"
                       ".style.display") == "block"
        assert page.blocked == [] and page.console_errors == []


def test_dashboard_gpu_fixture(gpu_fixture_file, tmp_path):
    dash = tp.load(gpu_fixture_file).show()
    assert "kernels" not in dash.reasons
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        for tab in ("timeline", "ops", "kernels", "memory"):
            page.page.click(f".db-tab[data-tab='{tab}']")
        kernel_rows = page.js("() => document.querySelectorAll(\"[data-pane='kernels'] "
                              ".tt-table tr\").length") - 1
        assert kernel_rows == len(tp.load(gpu_fixture_file).kernel_stats)
        page.page.click(".db-tab[data-tab='overview']")
        overview = page.js("() => document.querySelector(\"[data-pane='overview']\").textContent")
        assert "Run environment" in overview and "/device:GPU:4" in overview and "7.0" in overview
        assert page.console_errors == []


def test_csv_module_roundtrip_of_commas():
    from tfprof_nb.widgets.tables import table_spec

    spec = table_spec(pd.DataFrame({"name": ['a,"b"', "c"], "n": [1, 2]}))
    assert spec["data"]["name"] == ['a,"b"', "c"]
    assert next(csv.reader(['"a,""b"""'])) == ['a,"b"']


def test_memory_timeline_draws_hovers_and_switches_allocator(gpu_fixture_file, tmp_path):
    from tfprof_nb.widgets.memory import MemoryTimeline

    prof = tp.load(gpu_fixture_file)
    widget = MemoryTimeline(prof)
    allocators = widget.mem_meta["allocators"]
    assert [a["name"] for a in allocators] == prof.memory_summary.allocator.tolist()
    with WidgetPage(widget, tmp_path, bundle("memory")) as page:
        painted = page.js("""() => {
          const c = document.querySelector('.mem-canvas');
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }""")
        assert painted > 5000
        box = page.page.locator(".mem-canvas").bounding_box()
        page.page.mouse.move(box["x"] + 450, box["y"] + 150)
        tip = page.js("() => document.querySelector('.mem-tip').textContent")
        for field in ("requested:", "allocated:", "tf_op:", "step:", "region:", "data type:",
                      "shape:", "memory in use:", "fragmentation:"):
            assert field in tip
        row = page.js("() => document.querySelector('.tfprof-memory').__hovered")
        tl = prof.memory_timeline
        assert str(tl.tf_op.iloc[row]) in tip
        first = allocators[0]
        assert len(_rows(page)) == int((prof.memory_breakdown.allocator == first["name"]).sum())
        page.page.select_option(".mem-allocator", "1")
        second = allocators[1]["name"]
        assert second in page.js("() => document.querySelector('.tt-bar b').textContent")
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
        bars = page.js("() => document.querySelectorAll(\"[data-pane='input'] .sg-bar\")"
                       ".length")
        assert bars >= len(prof.steps)
        page.page.click(".db-tab[data-tab='pod']")
        assert "one host" in page.js(
            "() => document.querySelector(\"[data-pane='pod']\").textContent")


def test_pod_viewer_with_two_workers(tmp_path, cpu_file, cpu_python_file):
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(cpu_file, run / "worker-0.xplane.pb")
    shutil.copy(cpu_python_file, run / "worker-1.xplane.pb")
    prof = tp.load(run)
    dash = Dashboard(prof)
    assert "pod" not in dash.reasons
    (tmp_path / "page").mkdir()
    with WidgetPage(dash, tmp_path / "page", bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='pod']")
        assert page.js("() => document.querySelectorAll(\"[data-pane='pod'] .sg-bar\")"
                       ".length") >= 2
        label = page.js("() => document.querySelector('.pod-label').textContent")
        assert "slowest:" in label and "worker-" in label
        steps = dash.pod["steps"]
        page.page.fill(".pod-step", str(len(steps) - 1))
        assert f"step {steps[-1]}" in page.js(
            "() => document.querySelector('.pod-label').textContent")


def test_tf_stats_pies_and_scope_icicle(gpu_fixture_file, tmp_path):
    prof = tp.load(gpu_fixture_file)
    dash = Dashboard(prof)
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='ops']")
        pies = page.js("() => document.querySelectorAll('.tfprof-pie').length")
        assert pies >= 2  # host by op and by type (+ device when it has ops)
        titles = page.js("() => Array.from(document.querySelectorAll('.pie-slice title'))"
                         ".map(t => t.textContent)")
        assert any(t.startswith("IDLE:") for t in titles)
        page.page.click(".db-idle")  # exclude idle
        titles = page.js("() => Array.from(document.querySelectorAll('.pie-slice title'))"
                         ".map(t => t.textContent)")
        assert not any(t.startswith("IDLE:") for t in titles)
        nodes = page.js("() => document.querySelectorAll('.icicle-node').length")
        assert nodes == len(prof.scope_stats(side="all"))
        page.page.select_option(".db-scope-metric", "bytes")
        top = page.js("() => document.querySelector('.icicle-node title').textContent")
        assert top.split(":")[0] in set(prof.scope_stats(side="all").scope)


def test_comparison_view(cpu_file, cpu_slowmap_logdir, tmp_path):
    from tfprof_nb.widgets.compare import ComparisonView

    comparison = tp.compare(tp.load(cpu_file), tp.load(cpu_slowmap_logdir),
                            labels=("before", "after"))
    view = ComparisonView(comparison)
    with WidgetPage(view, tmp_path, bundle("compare")) as page:
        assert page.js("() => document.querySelectorAll('.sg-bar').length") >= 2
        assert "before -> after" in page.js(
            "() => document.querySelector('.cmp-summary').textContent")
        assert len(_rows(page)) > 0
    data, _ = comparison._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data


def test_standalone_pipeline_graph_and_pod_view(tmp_path, cpu_slowmap_logdir, cpu_file,
                                                cpu_python_file):
    import shutil

    from tfprof_nb.widgets import PipelineGraph, PodView

    graph = PipelineGraph(tp.load(cpu_slowmap_logdir))
    (tmp_path / "graph").mkdir()
    with WidgetPage(graph, tmp_path / "graph", bundle("pipelinegraph")) as page:
        bottleneck = page.js("() => Array.from(document.querySelectorAll('.tfd-node.bottleneck"
                             "')).map(g => g.querySelector('text').textContent)")
        assert bottleneck == ["Map"]
        assert page.console_errors == []
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(cpu_file, run / "worker-0.xplane.pb")
    shutil.copy(cpu_python_file, run / "worker-1.xplane.pb")
    pod = PodView(tp.load(run))
    assert pod.pod["hosts"] == ["worker-0", "worker-1"]
    (tmp_path / "pod").mkdir()
    with WidgetPage(pod, tmp_path / "pod", bundle("podview")) as page:
        columns = page.js("() => new Set(Array.from(document.querySelectorAll('.sg-bar'))"
                          ".map(b => b.dataset.step)).size")
        assert columns == 2  # one stacked column per worker
        assert "slowest:" in page.js("() => document.querySelector('.pod-label').textContent")
        assert page.console_errors == []
