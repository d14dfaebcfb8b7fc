"""Offline HTML reports opened from file:// in Chromium with the network blocked."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.offline.bundles import bundle
from tfprof_nb.offline.payload import widget_payload
from tfprof_nb.widgets.dashboard_view import Dashboard
from tfprof_nb.widgets.manifest import view_entries

from ..conftest import DATA
from ..widgets.harness import (COLOR_PIXELS, event_point, frame_count, row_point, settle_images,
                               when_drawn)
from ..widgets.test_event_details import pane_rows
from .offline_page import OfflinePage

TABS = [e["tab"] for e in view_entries()]  # every tab of the dashboard, in order
TIMELINE = "document.querySelector(\"[data-pane='timeline'] .tfprof-timeline\").__timeline"


def _pane_content(page, tab: str) -> dict:
    """What the tab shows: painted canvas pixels, SVG shapes, table rows, reason text."""
    page.page.click(f".db-tab[data-tab='{tab}']")
    # measured once its plotly figures are drawn (or an error shown) and its canvases hold a
    # painted frame (a resize clears one until the next frame: a painted one is opaque), in
    # the same evaluation as that check
    return page.page.wait_for_function("""tab => {
      const pane = document.querySelector(`[data-pane='${tab}']`);
      if (!Array.from(pane.querySelectorAll('.tfprof-figure')).every(
            f => f.querySelector('.main-svg') || f.textContent)) return false;
      const canvases = Array.from(pane.querySelectorAll('canvas')).filter(c => c.width && c.height);
      if (!canvases.every(c => c.getContext('2d').getImageData(0, 0, 1, 1).data[3] === 255))
        return false;
      let pixels = 0;
      for (const c of canvases) {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const bg = [d[0], d[1], d[2]];
        for (let i = 0; i < d.length; i += 4)
          if (d[i+3] > 0 && Math.abs(d[i]-bg[0]) + Math.abs(d[i+1]-bg[1])
              + Math.abs(d[i+2]-bg[2]) > 30) pixels++;
      }
      return {visible: pane.style.display === 'block', pixels,
              figures: Array.from(pane.querySelectorAll('.js-plotly-plot'))
                .filter(g => g.querySelector('.main-svg')).length,
              shapes: pane.querySelectorAll('svg rect, svg path, svg circle, svg line').length,
              rows: pane.querySelectorAll('.tt-table tr').length,
              reason: (pane.querySelector('.db-reason') || {}).textContent || ''};
    }""", arg=tab, timeout=60000).json_value()


# tabs drawn with plotly figures (when they have data)
FIGURE_TABS = {"overview", "ops", "kernels", "gpu", "xla", "memory", "input", "pod"}
# TFPROF_NB_SCREENSHOTS=docs/screenshots (make screenshots): each tab saved as a PNG there
SCREENSHOTS = os.environ.get("TFPROF_NB_SCREENSHOTS")


def _check_every_tab(page, dash, name: str | None = None) -> dict:
    shown = {}
    for tab in TABS:
        content = _pane_content(page, tab)
        assert content["visible"], tab
        if tab in dash.reasons:
            assert content["reason"] == dash.reasons[tab], tab
        else:
            assert content["pixels"] + content["shapes"] + content["rows"] > 0, (tab, content)
            if tab in FIGURE_TABS and (tab != "overview" or dash.overview__step_figure):
                assert content["figures"] >= 1, (tab, content)
        if SCREENSHOTS and name:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.page.evaluate("() => window.scrollTo(0, 0)")
            box = page.page.locator(".tfprof-dashboard").bounding_box()
            page.page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}_{tab}.png"), clip={
                "x": box["x"], "y": box["y"], "width": box["width"],
                "height": min(box["height"], 860)})
        shown[tab] = content
    return shown


def _click_an_event(page):
    """Click the first event found in the dashboard's timeline; returns its row index."""
    found = event_point(page.page, "[data-pane='timeline'] .tfprof-timeline")
    assert found, "no event drawn in the trace viewer"
    x, y, index = found
    page.page.mouse.click(x, y)
    return index


def _details(page) -> list:
    """The rows of the details pane of the dashboard's timeline, once filled (the stats load
    lazily): its fields, then its arguments."""
    page.page.wait_for_function("() => document.querySelectorAll(\"[data-pane='timeline'] "
                                ".tl-details tr\").length > 0", timeout=30000)
    return page.js("""() => Array.from(
      document.querySelectorAll("[data-pane='timeline'] .tl-details tr"))
      .map(tr => [tr.children[0].textContent, tr.children[1].textContent])""")


def _check_report(path, prof, name: str | None = None):
    dash = Dashboard(prof)
    with OfflinePage(path) as page:
        shown = _check_every_tab(page, dash, name)
        # timeline: zoom with the wheel, then a click shows the event's embedded details
        page.page.click(".db-tab[data-tab='timeline']")
        before = page.js(f"() => {TIMELINE}.view()")
        box = page.page.locator("[data-pane='timeline'] canvas").bounding_box()
        page.page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + 150)
        page.page.keyboard.down("Control")  # Ctrl+wheel zooms (the wheel scrolls the page)
        page.page.mouse.wheel(0, -600)
        page.page.keyboard.up("Control")
        page.page.wait_for_function(f"w => {TIMELINE}.view()[1] - {TIMELINE}.view()[0] < w",
                                    arg=0.5 * (before[1] - before[0]))
        page.page.click("[data-pane='timeline'] .tl-reset")
        assert page.js(f"() => {TIMELINE}.view()") == pytest.approx(before)
        index = _click_an_event(page)
        offline = _details(page)
        live = dash._timeline_source().describe(index)
        assert [tuple(r) for r in offline] == pane_rows(live)  # the same rows, the same text
        # tables sort in the report as in the notebook
        page.page.click(".db-tab[data-tab='ops']")
        pane = "[data-pane='ops']"
        header = f"{pane} .tt-table th[data-column='total_self_time_us']"
        col = page.js(f"() => Array.from(document.querySelectorAll(\"{pane} .tt-table th\"))"
                      ".findIndex(th => th.dataset.column === 'total_self_time_us')")
        page.page.click(header)
        page.page.click(header)  # numbers sort descending first, then ascending
        values = page.js(f"""c => Array.from(document.querySelectorAll("{pane} .tt-table tr"))
          .slice(1).map(tr => tr.children[c].textContent)""", col)
        numbers = [float(v.replace(",", "")) for v in values]
        assert numbers == sorted(numbers) and len(numbers) > 5
        assert page.blocked == [] and page.console_errors == [] and page.dialogs == []
    return dash, shown


def _size_budget(path, prof):
    payload = widget_payload(Dashboard(prof))
    js = len(bundle("dashboard").read_bytes()) + len(bundle("offline").read_bytes())
    size = path.stat().st_size
    assert size <= 2 * (payload.raw_bytes + payload.details_bytes) + js
    return size, payload


def test_plotly_adds_at_most_1_5_mb_to_a_report():
    from tfprof_nb.offline.loader import esm_b64

    # the dashboard's module as a page carries it (deflated, base64), plotly.js inside: the
    # module every view with charts shares
    assert len(esm_b64(bundle("dashboard").read_text())) <= 1.5e6
    assert len(esm_b64(bundle("timeline").read_text())) < 50e3  # views without charts stay light


def test_report_of_a_captured_cpu_profile(cpu_logdir, tmp_path):
    path = tp.report(cpu_logdir, tmp_path / "cpu.html")
    prof = tp.load(cpu_logdir)
    assert path == tmp_path / "cpu.html"
    dash, shown = _check_report(path, prof, "cpu")
    assert shown["timeline"]["pixels"] > 2000 and shown["overview"]["shapes"] > 0
    assert "kernels" in dash.reasons  # the CPU profile has no GPU: the tab says so
    _size_budget(path, prof)
    with OfflinePage(path) as page:  # the page's policy refuses any connection, by itself
        attempt = page.js("() => fetch('http://127.0.0.1:9/x').then(() => 'sent', "
                          "() => 'refused')")
        assert attempt == "refused" and page.blocked == []


def test_report_of_the_gpu_fixture(gpu_fixture_file, tmp_path):
    prof = tp.load(gpu_fixture_file)
    path = prof.to_html(tmp_path / "gpu.html")
    dash, shown = _check_report(path, prof, "gpu")
    assert shown["kernels"]["rows"] - 1 == len(prof.kernel_stats)
    assert shown["memory"]["figures"] == 1 and shown["memory"]["shapes"] > 20
    size, payload = _size_budget(path, prof)
    assert size < payload.raw_bytes  # packed: smaller than what a live widget sends
    assert "gpu" not in dash.reasons and shown["gpu"]["figures"] == 3  # no collectives chart
    assert shown["gpu"]["rows"] - 2 == 3 + len(prof.launch_latency.per_kernel)  # two tables


def test_report_of_the_tpu_profile(tmp_path):
    """JAX inference on four TPU v6e chips: the XLA tab with its program memory, the device
    figures in the overview, the devices' duty cycle in the GPU utilisation tab."""
    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    path = prof.to_html(tmp_path / "tpu.html")
    dash, shown = _check_report(path, prof, "tpu")
    assert shown["xla"]["figures"] == 2  # the roofline and the first program's memory
    assert shown["gpu"]["figures"] == 1 and "gpu" not in dash.reasons  # no launches on TPUs
    with OfflinePage(path) as page:
        cards = page.js("() => Array.from(document.querySelectorAll('.db-card'))"
                        ".map(c => c.textContent)")
        duty = prof.overview().device["duty_cycle_pct"]  # XProf's, every TPU active in steps
        assert any(c.startswith(f"Device duty cycle{duty:.1f}%") for c in cards), cards
        page.page.click(".db-tab[data-tab='xla']")
        page.page.wait_for_selector(".xla-memory .js-plotly-plot .main-svg")
        if SCREENSHOTS:  # the program memory section, below the fold of the tab's screenshot
            page.page.locator(".xla-mem-section").screenshot(
                path=str(Path(SCREENSHOTS) / "tpu_xla_memory.png"))
        ids = page.js("() => Array.from(document.querySelectorAll('.xla-program option'))"
                      ".map(o => o.value)")
        assert ids == [str(p) for p in prof.program_memory().program_id]  # all 64 bits
        page.page.select_option(".xla-program", ids[-1])  # in the report too: 4 programs
        page.page.wait_for_function("() => document.querySelectorAll("
                                    "\".xla-memory .js-plotly-plot .main-svg\").length > 0")
        # the trace viewer: devices first, zoomed to a step (docs/screenshots/tpu_timeline_step)
        page.page.click(".db-tab[data-tab='timeline']")
        sections = page.js(f"() => {TIMELINE}.rows.filter(r => r.kind === 'section')"
                           ".map(r => r.section.split(' ')[1])")
        assert sections == [f"/device:TPU:{i}" for i in range(4)] + ["Counters", "/host:CPU"]
        step = prof.steps.iloc[len(prof.steps) // 2]
        a = float(step.start_us)
        page.js(f"([a, b]) => {TIMELINE}.setView(a, b)", [a - 2e3, a + step.duration_ms * 1e3])
        page.page.wait_for_function(f"() => {TIMELINE}.frame.drawn > 50", timeout=30000)
        _screenshot(page, "tpu_timeline_step")
        assert page.blocked == [] and page.console_errors == []


def test_report_of_a_command_buffer_capture_is_per_op(tmp_path):
    """XLA's defaults on an H200 (kernels inside command buffers): the XLA tab's HLO op table
    lists the ops the buffers ran, each with how it was attributed, not one opaque
    command_buffer row (docs/screenshots/cmdbuf_xla.png)."""
    prof = tp.load(DATA / "jax_h200_transformer.xplane.pb")
    stats = prof.hlo_stats
    path = prof.to_html(tmp_path / "cmdbuf.html")
    pane = "[data-pane='xla']"
    with OfflinePage(path) as page:
        page.page.click(".db-tab[data-tab='xla']")
        page.page.wait_for_selector(f"{pane} .tt-table th[data-column='attribution']")
        table = f"document.querySelector(\"{pane} th[data-column='attribution']\").closest('table')"
        heads = page.js(f"() => Array.from({table}.querySelectorAll('th'))"
                        ".map(th => th.dataset.column)")
        cells = page.js(f"""() => Array.from({table}.querySelectorAll('tr')).slice(1)
          .map(tr => Array.from(tr.children).map(td => td.textContent))""")
        assert len(cells) >= 10
        shown = {row[heads.index("hlo_op_name")]: row[heads.index("attribution")]
                 for row in cells}
        expected = dict(zip(stats.hlo_op_name.astype(str), stats.attribution.astype(str)))
        assert all(expected[name] == how for name, how in shown.items())
        assert set(shown.values()) <= {"name", "position"} and "name" in shown.values()
        assert not any(name.startswith("command_buffer") for name in shown)
        if SCREENSHOTS:
            page.page.evaluate("() => window.scrollTo(0, 0)")
            box = page.page.locator(".tfprof-dashboard").bounding_box()
            page.page.screenshot(path=str(Path(SCREENSHOTS) / "cmdbuf_xla.png"), clip={
                "x": box["x"], "y": box["y"], "width": box["width"],
                "height": min(box["height"], 1280)})
        assert page.blocked == [] and page.console_errors == []


TIMELINE_ROOT = "[data-pane='timeline'] .tfprof-timeline"


def _screenshot(page, name: str) -> None:
    """The dashboard as shown, saved as ``<name>.png`` under TFPROF_NB_SCREENSHOTS (if set)."""
    if not SCREENSHOTS:
        return
    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
    page.page.evaluate("() => window.scrollTo(0, 0)")
    box = page.page.locator(".tfprof-dashboard").bounding_box()
    page.page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), clip={
        "x": box["x"], "y": box["y"], "width": box["width"], "height": min(box["height"], 860)})


def test_report_links_a_gpu_launch_to_its_kernel(tmp_path):
    """An AMD GPU profile's report: a click on a kernel launch outlines its kernel and draws
    the arrow, from the pairs embedded in the page (docs/screenshots/gpu_launch_link.png)."""
    prof = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb")
    path = prof.to_html(tmp_path / "amd.html")
    source = Dashboard(prof)._timeline_source()
    src, dst, kind = source.link_rows()
    launch, kernel = src[kind == 0], dst[kind == 0]
    index = source.index
    names = [index.names[index.name[r]] for r in launch.tolist()]
    i = names.index("hipModuleLaunchKernel")
    rows = [int(launch[i]), int(kernel[i])]
    a = float(min(index.start[rows]))
    b = float(max(index.start[rows] + index.dur[rows]))
    with OfflinePage(path) as page:
        page.page.click(".db-tab[data-tab='timeline']")
        before = frame_count(page.page, TIMELINE_ROOT)
        page.js(f"([a, b]) => {TIMELINE}.setView(a, b)", [a - (b - a) * 0.6, b + (b - a) * 0.6])
        assert when_drawn(page.page, COLOR_PIXELS, [TIMELINE_ROOT, [0xE6, 0x51, 0x00]],
                          root=TIMELINE_ROOT, after=before) == 0  # drawn there: no link yet
        x, y = row_point(page.page, rows[0], TIMELINE_ROOT)
        page.page.mouse.click(x, y)
        page.page.wait_for_function("() => document.querySelector(\"[data-pane='timeline'] "
                                    ".tl-links\").textContent.includes('→ kernel')",
                                    timeout=30000)
        text = page.js("() => document.querySelector(\"[data-pane='timeline'] .tl-links\")"
                       ".textContent")
        assert index.names[index.name[rows[1]]] in text
        # a frame painted with the arrow: the arrow and the kernel's outline
        assert when_drawn(page.page, COLOR_PIXELS, [TIMELINE_ROOT, [0xE6, 0x51, 0x00]],
                          root=TIMELINE_ROOT, until="t => t.frame.arrows === 1",
                          timeout=10000) > 60
        _screenshot(page, "gpu_launch_link")
        assert page.blocked == [] and page.console_errors == []


def test_report_shows_html_like_names_as_text(cpu_html_logdir, tmp_path):
    evil = "<img src=x onerror=alert(1)>"
    prof = tp.load(cpu_html_logdir)
    assert evil in set(prof.events.name)
    path = prof.to_html(tmp_path / "html.html", title=f"title {evil}")
    assert evil not in path.read_text()  # only escaped or packed, never as markup
    with OfflinePage(path) as page:
        assert page.js("() => document.title") == f"title {evil}"
        page.page.click(".db-tab[data-tab='timeline']")
        page.page.fill("[data-pane='timeline'] .tl-search", "<img")
        page.page.press("[data-pane='timeline'] .tl-search", "Enter")
        assert _details(page)[0] == ["name", evil]  # the event's own name, first
        page.page.click(".db-tab[data-tab='ops']")
        assert evil in page.js("() => document.body.textContent")
        assert page.js("() => document.querySelectorAll('img').length") == 0
        # an <img src=x onerror=...> made from a name would have had its answer (and shown its
        # dialog) before a probe image asked for after it
        settle_images(page.page, "data:,")
        assert page.dialogs == [] and page.blocked == [] and page.console_errors == []


def test_report_path_may_be_a_directory_and_writes_atomically(cpu_file, tmp_path):
    path = tp.report(cpu_file, tmp_path)
    assert path == tmp_path / "tfprof_report.html"
    assert [p.name for p in tmp_path.iterdir()] == ["tfprof_report.html"]
    text = path.read_text()
    assert text.startswith("<!doctype html>") and "Content-Security-Policy" in text
    assert "http://" not in text.replace("http://www.w3.org", "")
    assert "https://" not in text


def test_payload_round_trip_of_event_details(cpu_file):
    """The embedded details are the rows the live widget answers, event by event, text for
    text (Python builds both; the page writes only each event's start, duration and id, from
    numbers, by Python's rule: tests/widgets/test_event_details.py holds it)."""
    from tfprof_nb.offline.columns import decode_columns
    from tfprof_nb.offline.details import event_details_block

    from ..widgets.test_event_details import page_rows

    prof = tp.load(cpu_file)
    source = Dashboard(prof)._timeline_source()
    info = event_details_block(source)
    cols = decode_columns(info["columns"])
    assert len(cols["off"]) == len(prof.events) + 1 and "rows" not in cols
    rows = page_rows(info, source.index.start)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(rows), 300, replace=False).tolist():
        assert rows[i] == list(source.describe(i).items())
    some = np.sort(rng.choice(len(rows), 50, replace=False))
    part = event_details_block(source, some)
    cols = decode_columns(part["columns"])
    assert list(cols["rows"]) == some.tolist() and len(cols["off"]) == len(some) + 1
    assert cols["id"].tolist() == [source.event_id(i) for i in some.tolist()]
    assert page_rows(part, source.index.start[some]) == [rows[i] for i in some.tolist()]


def test_any_view_and_a_comparison_as_an_offline_page(cpu_file, cpu_slowmap_logdir,
                                                      tmp_path):
    from tfprof_nb.widgets import TraceTimeline

    before, after = tp.load(cpu_file), tp.load(cpu_slowmap_logdir)
    path = tp.compare(before, after, labels=("before", "after")).to_html(tmp_path)
    assert path.name == "tfprof_comparisonview.html"
    with OfflinePage(path, wait_for=".tfprof-compare .js-plotly-plot .main-svg") as page:
        assert "before -> after" in page.js(
            "() => document.querySelector('.cmp-summary').textContent")
        page.page.wait_for_function(
            "() => document.querySelectorAll('.tfprof-compare .main-svg').length >= 2")
        assert page.js("() => document.querySelector('.cmp-figure .js-plotly-plot').data"
                       ".map(t => t.name)") == ["before", "after"]
        assert page.js("() => document.querySelector('.cmp-waterfall .js-plotly-plot')"
                       ".layout.meta.kind") == "compare_waterfall"
        assert page.blocked == [] and page.console_errors == []
    timeline = TraceTimeline(before)
    path = timeline.to_html(tmp_path / "trace.html", title="trace")
    with OfflinePage(path, wait_for=".tfprof-timeline canvas") as page:
        point = event_point(page.page)
        page.page.mouse.click(point[0], point[1])
        page.page.wait_for_function(  # a function: the page's policy forbids eval
            "() => document.querySelector('.tl-details').textContent.includes('event id')")
        shown = page.js("() => document.querySelector('.tl-details').textContent")
        live = timeline._timeline_source().describe(point[2])
        assert live["name"] in shown and f"{live['event id']}" in shown
        assert page.blocked == [] and page.console_errors == []


@pytest.mark.parametrize("case", ["tpu_only", "host_no_markers", "empty_planes"])
def test_reports_of_profiles_with_missing_parts(tmp_path, case):
    from ..analysis.test_edge_profiles import CASES, _space

    source = tmp_path / f"{case}.xplane.pb"
    source.write_bytes(_space(CASES[case]))
    prof = tp.load(source)
    path = prof.to_html(tmp_path / "r.html")
    dash = Dashboard(prof)
    with OfflinePage(path) as page:
        _check_every_tab(page, dash)
        assert page.blocked == [] and page.console_errors == []


def test_report_of_two_workers_has_the_pod_view(tmp_path, cpu_file, cpu_python_file):
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(cpu_file, run / "worker-0.xplane.pb")
    shutil.copy(cpu_python_file, run / "worker-1.xplane.pb")
    path = tp.report(run, tmp_path / "pod.html")
    prof = tp.load(run)
    with OfflinePage(path) as page:
        shown = _check_every_tab(page, Dashboard(prof))
        assert shown["pod"]["shapes"] > 0 and shown["pod"]["figures"] == 1
        assert page.js("() => Array.from(document.querySelectorAll(\"[data-pane='pod'] "
                       ".xtick text\")).map(t => t.textContent)") == ["worker-0", "worker-1"]
        options = page.js("() => document.querySelectorAll('.pod-step option').length")
        assert options == prof.pod.step.nunique() + 1
        page.page.click(".db-tab[data-tab='timeline']")
        sections = page.js(f"() => {TIMELINE}.rows.filter(r => r.kind !== 'track')"
                           ".map(r => r.section)")
        assert any("worker-0" in str(s) for s in sections)
        assert any("worker-1" in str(s) for s in sections)
        assert page.blocked == [] and page.console_errors == []


def test_a_pods_input_chart_labels_clear_of_the_chart_beside(tmp_path):
    """A pod's input chart labels its steps "host step"; at a report's width plotly slants
    them to the right, and the last one ran into the host-side chart's first label
    ("Enqueuing data to device").  Slanted to the left as that chart's, no label of one
    crosses a label of the other, at the report's usual widths."""
    prof = tp.load(DATA / "tf_two_workers_loaded")
    path = prof.to_html(tmp_path / "pod.html")
    with OfflinePage(path) as page:
        for width in (1200, 1400, 1700):
            page.page.set_viewport_size({"width": width, "height": 900})
            page.page.click(".db-tab[data-tab='input']")
            page.page.wait_for_function("""() => {  // (drawn at the page's new width)
              const gd = document.querySelector("[data-pane='input'] .js-plotly-plot");
              return gd && gd.querySelector('.main-svg') &&
                Math.abs(gd.getBoundingClientRect().width - gd._fullLayout.width) < 2; }""")
            boxes = page.js("""() => {
              const gd = document.querySelector("[data-pane='input'] .js-plotly-plot");
              const box = e => { const r = e.getBoundingClientRect();
                                 return [r.left, r.top, r.right, r.bottom]; };
              return [Array.from(gd.querySelectorAll('.xtick text')).map(box),
                      Array.from(gd.querySelectorAll('.x2tick text')).map(box)]; }""")
            steps, beside = boxes
            assert len(steps) > 10 and len(beside) == 5, width
            crossing = [(a, b) for a in steps for b in beside
                        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]
            assert not crossing, (width, crossing[:2])
        assert page.console_errors == []


def test_report_follows_a_dark_colour_scheme(cpu_file, tmp_path):
    path = tp.report(cpu_file, tmp_path / "dark.html")
    brightness, text_brightness = {}, {}
    for scheme in ("light", "dark"):
        with OfflinePage(path, color_scheme=scheme) as page:
            page.page.click(".db-tab[data-tab='timeline']")
            brightness[scheme] = when_drawn(page.page, """() => {
              const c = document.querySelector("[data-pane='timeline'] canvas");
              const d = c.getContext('2d').getImageData(c.width - 3, c.height - 3, 1, 1).data;
              return d[0] + d[1] + d[2]; }""", root=TIMELINE_ROOT)
            page.page.click(".db-tab[data-tab='overview']")
            page.page.wait_for_selector(".tfprof-overview .js-plotly-plot .main-svg")
            # chart text follows the scheme: light text on dark pages, dark on light ones
            fill = page.js("""() => getComputedStyle(document.querySelector(
              '.tfprof-overview .xtick text')).fill""")
            rgb = [int(v) for v in fill[fill.index("(") + 1:fill.index(")")].split(",")[:3]]
            text_brightness[scheme] = sum(rgb)
            assert page.console_errors == []
    assert brightness["dark"] < 150 < brightness["light"]
    assert text_brightness["light"] < 300 < text_brightness["dark"]
