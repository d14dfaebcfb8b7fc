"""The trace viewer as Perfetto's users expect it, in headless Chromium on real captures: an
area's summary (the browser's and the kernel's the same), tables that lead to the trace,
flows, counter tracks, track management, the keys, tooltips and search. Every test waits for
what it checks."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
import tfprof_nb.widgets.trace_view as tl
from tfprof_nb.offline.bundles import bundle
from tfprof_nb.offline.columns import decode_columns
from tfprof_nb.widgets.dashboard_view import Dashboard
from tfprof_nb.widgets.trace_view import TimelineSource, TraceTimeline

from .harness import WidgetPage, event_point, overview_budget, row_point
from .test_event_details import pane_rows

TIMELINE = "document.querySelector('.tfprof-timeline').__timeline"
DATA = Path(__file__).resolve().parents[1] / "data"
GPU = DATA / "jax_h200_nocmdbuf.xplane.pb"


# TFPROF_NB_SCREENSHOTS=docs/screenshots (make screenshots): the features saved as PNGs there
SCREENSHOTS = os.environ.get("TFPROF_NB_SCREENSHOTS")


def _shot(page, name: str, selector: str = ".tfprof-timeline") -> None:
    """The viewer (or ``selector``) as shown, saved as ``<name>.png`` when asked for."""
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.locator(selector).first.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"))


def _kernel_summary(source: TimelineSource, area: dict) -> dict:
    """{name: (count, wall, self)} of the kernel's summary of ``area``."""
    header, buffers = source.on_message({"kind": "area", "id": 1, **area})
    cols = decode_columns(header["rows"], buffers)
    names = source.index.names
    return {names[c]: (n, w, s) for c, n, w, s in zip(cols["name"], cols["count"], cols["wall"],
                                                     cols["self"])}


def _drag(page, x0: float, y0: float, x1: float, y1: float) -> None:
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=6)
    page.mouse.up()


def _browser_summary(page) -> tuple[dict, dict]:
    area = page.evaluate(f"() => {TIMELINE}.area.area")
    rows = page.evaluate(f"() => {TIMELINE}.area.rows")
    return area, {r["name"]: (r["count"], r["wall"], r["self"]) for r in rows}


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys() and a
    for name in a:
        assert a[name][0] == b[name][0], name
        np.testing.assert_allclose(a[name][1:], b[name][1:], rtol=1e-6, atol=1e-6)


def test_an_area_is_summed_in_the_browser_as_the_kernel_sums_it(cpu_python_file, tmp_path):
    """Every event is in the page: the browser sums the dragged area; its rows equal the
    kernel's for the same range and tracks (count, time in range, self time per name)."""
    widget = TraceTimeline(tp.load(cpu_python_file))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        box = page.page.locator(".tl-canvas").bounding_box()
        _drag(page.page, box["x"] + 250, box["y"] + 30, box["x"] + box["width"] - 40,
              box["y"] + box["height"] - 10)
        page.page.wait_for_function("() => /events?, /.test(document.querySelector('.tl-area')"
                                    "?.textContent ?? '')")
        area, rows = _browser_summary(page.page)
        assert len(area["tracks"]) > 2
        _same(rows, _kernel_summary(widget._timeline_source(), area))
        table = page.js("() => Array.from(document.querySelectorAll('.tl-area tr')).length")
        assert table == len(rows) + 1
        assert page.js("() => document.querySelector('.tl-status').textContent").startswith(
            "selected ")
        _shot(page.page, "trace_area_selection")
        assert page.console_errors == []


def test_an_area_of_an_overview_is_summed_by_the_kernel(cpu_python_file, tmp_path, monkeypatch):
    prof = tp.load(cpu_python_file)
    monkeypatch.setattr(tl, "STATE_BUDGET", overview_budget(prof))
    widget = TraceTimeline(prof)
    with WidgetPage(widget, tmp_path, bundle("timeline"), kernel=True) as page:
        assert page.js(f"() => {TIMELINE}.data.lod.mode") == "overview"
        box = page.page.locator(".tl-canvas").bounding_box()
        _drag(page.page, box["x"] + 250, box["y"] + 30, box["x"] + box["width"] - 40,
              box["y"] + box["height"] - 10)
        page.page.wait_for_function("() => /events?, /.test(document.querySelector('.tl-area')"
                                    "?.textContent ?? '')")
        assert any(m.get("kind") == "area" for m in page.js("() => window.__sent"))
        area, rows = _browser_summary(page.page)
        _same(rows, _kernel_summary(widget._timeline_source(), area))


def test_a_row_of_kernel_stats_shows_its_kernels_in_the_trace(tmp_path):
    """In the dashboard, a click on a GPU kernel's row opens the trace viewer with every
    launch of that kernel found by the kernel, highlighted, the first selected and framed."""
    prof = tp.load(GPU)
    dash = Dashboard(prof)
    stats = prof.kernel_stats
    with WidgetPage(dash, tmp_path, bundle("dashboard"), kernel=True) as page:
        page.page.click(".db-tab[data-tab='kernels']")
        page.page.click("[data-pane='kernels'] .tt-table tr.tp-row-link")
        name = page.js("() => document.querySelector(\"[data-pane='kernels'] .tt-table "
                       "tr.tp-row-link td:nth-child(3)\").textContent")
        tlq = "document.querySelector(\"[data-pane='timeline'] .tfprof-timeline\").__timeline"
        page.page.wait_for_function(f"() => !!{tlq} && {tlq}.selected >= 0")
        assert page.js("() => document.querySelector(\"[data-pane='timeline']\").style"
                       ".display") == "block"
        found = page.js(f"() => {tlq}.search.hits.length")
        assert found == stats.occurrences[stats.kernel_name == name].sum() > 0
        assert page.js(f"() => {tlq}.selection.name") == name
        sel = page.js(f"() => [{tlq}.selection.start, {tlq}.selection.dur, ...{tlq}.view()]")
        assert sel[2] <= sel[0] and sel[3] >= sel[0] + sel[1]  # framed
        assert sel[3] - sel[2] <= 4 * max(sel[1], 1.0)
        status = page.js("() => document.querySelector(\"[data-pane='timeline'] .tl-found\")"
                         ".textContent")
        assert status == f"1 / {found}"
        _shot(page.page, "trace_from_kernel_table", "[data-pane='timeline'] .tfprof-timeline")
        assert page.console_errors == []


def test_flows_of_tensorflow_and_tf_data_are_drawn_for_the_selection(cpu_python_file,
                                                                      tmp_path):
    widget = TraceTimeline(tp.load(cpu_python_file))
    source = widget._timeline_source()
    src, dst, kind = source.link_rows()
    index = source.index
    # a tf.data element produced, then consumed: the pair whose producer is widest beside
    # the span of both (the one a click can hit alone; consumers last a microsecond)
    ks = np.flatnonzero(kind == 2)
    lo = np.minimum(index.start[src[ks]], index.start[dst[ks]])
    hi = np.maximum(index.start[src[ks]] + index.dur[src[ks]],
                    index.start[dst[ks]] + index.dur[dst[ks]])
    k = int(ks[np.argmax(index.dur[src[ks]] / np.maximum(hi - lo, 1e-3))])
    producer, consumer = int(src[k]), int(dst[k])
    a = min(index.start[producer], index.start[consumer])
    b = max(index.start[producer] + index.dur[producer], index.start[consumer] + index.dur[consumer])
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        page.push("view", [a - (b - a) * 0.3, b + (b - a) * 0.3])
        page.page.wait_for_function(f"([a, b]) => {TIMELINE}.view()[0] < a", arg=[a, b])
        point = row_point(page.page, producer)
        assert point is not None
        page.page.mouse.click(*point)
        assert [v for k, v in page.changes() if k == "selected_index"][-1] == producer
        widget.selected_index = producer  # what the comm delivers; Python answers
        page.push("links", widget.links)
        page.page.wait_for_function(f"() => {TIMELINE}.frame.arrows >= 1")
        text = page.js("() => document.querySelector('.tl-links').textContent")
        assert f"→ tf.data consumer {index.names[index.name[consumer]]}" in text
        assert any(p["row"] == consumer for p in widget.links["partners"])
        _shot(page.page, "trace_flow")
        assert page.console_errors == []


def test_counter_tracks_draw_memory_and_the_launch_queue(tmp_path):
    widget = TraceTimeline(tp.load(GPU))
    names = list(widget.meta["counter_tracks"]["name"])
    assert any(n.startswith("memory in use") for n in names)
    assert any(n.startswith("launch queue") for n in names)
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        rows = page.js(f"() => {TIMELINE}.rows.filter(r => r.kind === 'counter').map(r => "
                       f"[{TIMELINE}.rowTop(r), r.h])")
        assert len(rows) == len(names)
        box = page.page.locator(".tl-canvas").bounding_box()
        top, h = rows[0]
        page.page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + top + h / 2)
        page.page.wait_for_function("() => /memory in use .*: [0-9.]+ [KMG]?i?B at /.test("
                                    "document.querySelector('.tl-tip')?.textContent ?? '')")
        _shot(page.page, "trace_counters")
        assert page.console_errors == []


def test_tracks_are_pinned_hidden_filtered_and_folded(tmp_path):
    widget = TraceTimeline(tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb"))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        rows = page.js(f"() => {TIMELINE}.rows.filter(r => r.kind === 'track').map(r => "
                       f"[r.track, {TIMELINE}.rowTop(r)])")
        box = page.page.locator(".tl-canvas").bounding_box()
        track, top = rows[2]
        page.page.mouse.click(box["x"] + 40, box["y"] + top + 6)  # its name: the menu
        page.page.wait_for_selector(".tl-menu")
        _shot(page.page, "trace_track_menu")
        page.page.click(".tl-menu button:text('pin to the top')")
        page.page.wait_for_function(f"t => {TIMELINE}.rows.some(r => r.pinned && r.track === t)",
                                    arg=track)
        page.page.mouse.click(box["x"] + 40, box["y"] + 22 + 6)  # the pinned row, under the axis
        page.page.click(".tl-menu button:text('hide')")
        page.page.wait_for_function("() => document.querySelector('.tl-show-all')"
                                    ".textContent === 'show 1 hidden'")
        page.page.fill(".tl-filter", "XLA Modules")
        page.page.wait_for_function(f"() => {TIMELINE}.rows.filter(r => r.kind === 'track')"
                                    ".length === 4")
        page.page.click(".tl-show-all")
        page.page.wait_for_function(f"n => {TIMELINE}.rows.filter(r => r.kind === 'track')"
                                    ".length === n", arg=len(rows))
        page.js(f"() => {TIMELINE}.setView({TIMELINE}.data.t0, {TIMELINE}.data.t0 + 1000)")
        page.page.click(".tl-fold-empty")
        page.page.wait_for_function(f"() => {TIMELINE}.rows.some(r => r.folded)")
        assert page.js("() => document.querySelector('.tl-fold-empty').textContent") \
            .startswith("unfold ")
        assert page.console_errors == []


def test_keys_tooltips_and_a_search_that_frames_its_matches(cpu_python_file, tmp_path):
    widget = TraceTimeline(tp.load(cpu_python_file))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        page.page.focus(".tl-canvas")
        page.page.keyboard.press("?")
        page.page.wait_for_selector(".tl-overlay")
        _shot(page.page, "trace_keys")
        assert "Ctrl/⌘ + wheel" in page.js("() => document.querySelector('.tl-overlay')"
                                           ".textContent")
        page.page.keyboard.press("?")
        page.page.wait_for_selector(".tl-overlay", state="detached")
        page.page.fill(".tl-search", "EagerExecute")
        page.page.press(".tl-search", "Enter")
        page.page.wait_for_function(f"() => {TIMELINE}.selected >= 0")
        sel, view = page.js(f"() => [{TIMELINE}.selection, {TIMELINE}.view()]")
        assert view[0] <= sel["start"] and view[1] >= sel["start"] + sel["dur"]
        assert view[1] - view[0] <= 2.5 * max(sel["dur"], 1.0)  # framed, not the old zoom
        point = row_point(page.page, sel["row"])
        page.page.mouse.move(*point)
        page.page.wait_for_function("name => (document.querySelector('.tl-tip')?.textContent "
                                    "?? '').startsWith(name)", arg=sel["name"])
        page.page.mouse.click(point[0], page.page.locator(".tl-canvas").bounding_box()["y"] + 3)
        page.page.wait_for_function(f"() => {TIMELINE}.selected === -1 && document"
                                    ".querySelector('.tl-status').textContent === ''")
        assert page.console_errors == []


@pytest.mark.parametrize("name", ["tpu_v6e_jax_inference.xplane.pb", "jax_h200_nocmdbuf.xplane.pb",
                                  "jax_h200_transformer.xplane.pb",
                                  "mi355x_jax_te_fused_attn.xplane.pb",
                                  "gpu_bert_multiworker/34.83.195.179_6003.xplane.pb"])
def test_table_rows_find_as_many_events_as_the_tables_count(name):
    """HLO ops and GPU kernels: as many events as their rows' occurrences; an op's device
    events: its HLO ops' (op stats count the most of them, as XProf does)."""
    from tfprof_nb.widgets.timeline_find import occurrences

    prof = tp.load(DATA / name)
    for _, row in prof.hlo_stats.iterrows():
        assert len(occurrences(prof, "hlo", row.to_dict())) == row.occurrences, row.hlo_op_name
    stats = prof.kernel_stats
    for kernel, rows in stats.groupby("kernel_name"):
        assert len(occurrences(prof, "kernels", {"kernel_name": kernel})) == \
            rows.occurrences.sum(), kernel
    ops = _some_rows(prof.op_stats[prof.op_stats.type != "IDLE"])
    for _, row in ops.iterrows():
        n = len(occurrences(prof, "ops", row.to_dict()))
        assert (n == row.occurrences) if row.host_or_device == "Host" else \
            (n >= row.occurrences), row.operation


def _some_rows(table: pd.DataFrame, n: int = 300) -> pd.DataFrame:
    """At most ``n`` rows: the most frequent tenth and a fixed random sample of the rest (the
    BERT capture has 4,900 op rows at about 4 ms a search)."""
    if len(table) <= n:
        return table
    top = table.nlargest(n // 10, "occurrences")
    return pd.concat([top, table.drop(top.index).sample(n - len(top), random_state=0)])


def test_host_op_rows_find_their_events_on_a_cpu_capture(cpu_file):
    from tfprof_nb.widgets.timeline_find import occurrences

    prof = tp.load(cpu_file)
    ops = prof.op_stats[prof.op_stats.type != "IDLE"]
    assert len(ops) > 5
    for _, row in ops.iterrows():
        assert len(occurrences(prof, "ops", row.to_dict())) == row.occurrences, row.operation
    with pytest.raises(ValueError, match="unknown table"):
        occurrences(prof, "steps", {})


# the details pane's rows, by section: [[label, text], ...] of the fields, the arguments' title,
# the arguments
PANE = """sel => {
  const el = document.querySelector(sel + ' .tl-details');
  const rows = (t) => Array.from(el.querySelectorAll(t + ' tr'))
    .map(tr => [tr.children[0].textContent, tr.children[1].textContent]);
  return [rows('.tl-fields'), el.querySelector('.tl-args-title')?.textContent ?? null,
          rows('.tl-args'), Array.from(el.children).map(c => c.className)];
}"""


def _kernel_event(prof, source: TimelineSource, name: str) -> tuple[int, int]:
    """(event id, timeline row) of the first event named ``name``."""
    event = int(np.flatnonzero(prof.events["name"].astype(str).to_numpy() == name)[0])
    return event, source.index_of(event)


def _check_pane(pane, live: dict) -> None:
    """The pane shows the kernel's own fields first, its stats after them as Arguments."""
    fields, title, args, order = pane
    assert fields[0] == ["name", "loop_convert_fusion_1"]  # not its "name" stat
    assert [r[0] for r in fields] == [k for k in live if k != "Arguments"]
    assert title == "Arguments" and order.index("tl-fields") < order.index("tl-args")
    assert ["name", "jit(step)/jvp()"] in args and ["hlo_op", "loop_convert_fusion.1"] in args
    assert [tuple(r) for r in fields + args] == pane_rows(live)


def test_details_show_the_event_then_its_arguments_live_and_offline(tmp_path):
    """A JAX kernel whose stats include one called "name": the pane names the kernel, its
    fields first (category from its HLO op), its stats under Arguments; in the notebook
    (Python answers) and on an offline page (the rows embedded) alike."""
    from ..reporting.offline_page import OfflinePage

    prof = tp.load(GPU)
    widget = TraceTimeline(prof)
    source = widget._timeline_source()
    event, row = _kernel_event(prof, source, "loop_convert_fusion_1")
    live = source.describe(row)
    assert live["category"] == "loop fusion" and live["name"] == "loop_convert_fusion_1"
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        page.push("view", source.window_of(event))
        page.page.wait_for_function(f"() => {TIMELINE}.view()[1] - {TIMELINE}.view()[0] < 100")
        page.page.mouse.click(*row_point(page.page, row))
        assert [v for k, v in page.changes() if k == "selected_index"][-1] == row
        widget.selected_index = row  # what the comm delivers; Python answers
        page.push("details", widget.details)
        page.page.wait_for_selector(".tl-details .tl-args tr")
        _check_pane(page.js(PANE, ".tfprof-timeline"), live)
        _shot(page.page, "trace_details")
        assert page.console_errors == []
    path = widget.to_html(tmp_path / "trace.html", title="trace")
    with OfflinePage(path, wait_for=".tfprof-timeline canvas") as page:
        page.page.evaluate(f"w => {TIMELINE}.setView(w[0], w[1])", source.window_of(event))
        page.page.mouse.click(*row_point(page.page, row))
        page.page.wait_for_selector(".tl-details .tl-args tr")
        _check_pane(page.page.evaluate(PANE, ".tfprof-timeline"), live)
        assert page.console_errors == []


def _search_hits(page, tlq: str) -> list[int]:
    """The rows the viewer's last search found, once the kernel answered."""
    page.page.wait_for_function(f"() => !{tlq}.search.pending && {tlq}.search.hits.length > 0")
    return page.js(f"() => {tlq}.search.hits.map(h => h.row)")


def test_typing_what_a_row_click_wrote_finds_the_same_events(tmp_path):
    """One search: a click on an op's row writes its query in the box and finds its events;
    typing that text finds the same ones; typing an op type finds events by their stats
    (no kernel's name has "dot_general"), as the kernel's search does."""
    prof = tp.load(GPU)
    dash = Dashboard(prof)
    source = dash._timeline_source()
    tlq = "document.querySelector(\"[data-pane='timeline'] .tfprof-timeline\").__timeline"
    box = "[data-pane='timeline'] .tl-search"
    with WidgetPage(dash, tmp_path, bundle("dashboard"), kernel=True) as page:
        page.page.click(".db-tab[data-tab='ops']")
        page.page.click("[data-pane='ops'] .tt-table tr.tp-row-link:has-text('dot_general')")
        page.page.wait_for_function(f"() => !!{tlq} && {tlq}.selected >= 0")
        clicked = _search_hits(page, tlq)
        query = page.page.input_value(box)
        assert query.startswith("device op: ") and query.endswith("dot_general")
        assert sorted(clicked) == source.find(query).tolist()
        page.page.fill(box, "")
        page.page.fill(box, query)  # typed: the same text
        assert _search_hits(page, tlq) == clicked
        page.page.fill(box, "dot_general")
        typed = _search_hits(page, tlq)
        assert sorted(typed) == source.find("dot_general").tolist()
        assert len(typed) > len(source.index.named("dot_general"))  # not by names alone
        assert set(clicked) < set(typed)
        assert page.console_errors == []


def test_keys_zoom_at_the_pointer_and_a_step_hides_the_tooltip(tmp_path):
    """W zooms around the time under the pointer (over the tracks); choosing a step moves the
    window and takes the hovered event's tooltip away."""
    widget = TraceTimeline(tp.load(GPU))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        x, y, _ = event_point(page.page)
        page.page.mouse.move(x, y)
        page.page.wait_for_selector(".tl-tip")
        left = page.page.locator(".tl-canvas").bounding_box()["x"]
        t = page.js(f"x => {TIMELINE}.tOf(x)", x - left)
        before = page.js(f"() => {TIMELINE}.view()")
        page.page.focus(".tl-canvas")
        page.page.keyboard.press("w")
        page.page.wait_for_function(f"s => {TIMELINE}.view()[1] - {TIMELINE}.view()[0] < s",
                                    arg=0.9 * (before[1] - before[0]))
        assert page.js(f"x => {TIMELINE}.tOf(x)", x - left) == pytest.approx(t, abs=1e-6)
        page.page.mouse.move(x, y + 1)  # the tooltip again, then a step chosen
        page.page.wait_for_selector(".tl-tip")
        page.page.select_option(".tl-steps", index=1)
        page.page.wait_for_selector(".tl-tip", state="detached")
        step = page.js(f"() => {TIMELINE}.data.steps[0]")
        assert page.js(f"() => {TIMELINE}.view()") == pytest.approx([step["start"], step["end"]])
        assert page.console_errors == []
