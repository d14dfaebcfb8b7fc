"""The trace timeline in headless Chromium, from real profiles."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.trace_view import TraceTimeline

from .harness import (COLOR_PIXELS, WidgetPage, event_point, frame_count, painted, row_point,
                      settle_images, when_drawn)

TIMELINE = "document.querySelector('.tfprof-timeline').__timeline"
DATA = Path(__file__).resolve().parents[1] / "data"
AMD = DATA / "mi300x_jax08_gemm.xplane.pb"  # JAX on ROCm: launches with correlation ids
TPU = DATA / "tpu_v6e_jax_inference.xplane.pb"


@pytest.fixture(scope="module")
def cpu_widget(cpu_logdir):
    return TraceTimeline(tp.load(cpu_logdir))


def test_draws_tracks_and_events_offline(cpu_widget, tmp_path):
    with WidgetPage(cpu_widget, tmp_path, bundle("timeline")) as page:
        assert painted(page.page) > 2000
        rows = page.js(f"() => {TIMELINE}.rows")
        assert sum(r["kind"] == "track" for r in rows) == len(cpu_widget.meta["tracks"])
        assert page.blocked == [] and page.console_errors == []
    # 16 bytes per event on the wire plus the names, once
    n = len(cpu_widget.tile.columns["start"])
    names = sum(len(s.encode()) + 3 for s in cpu_widget.meta["names"])
    assert (page.payload_bytes + names) / n <= 24


def test_zoom_pan_and_view_sync(cpu_widget, tmp_path):
    with WidgetPage(cpu_widget, tmp_path, bundle("timeline")) as page:
        before = page.js(f"() => {TIMELINE}.view()")
        page.page.mouse.move(600, 200)
        page.page.keyboard.down("Control")  # Ctrl+wheel zooms around the cursor
        page.page.mouse.wheel(0, -600)
        page.page.keyboard.up("Control")
        page.page.wait_for_function(f"w => {TIMELINE}.view()[1] - {TIMELINE}.view()[0] < w / 2",
                                    arg=before[1] - before[0])
        after = page.js(f"() => {TIMELINE}.view()")
        page.page.focus(".tl-canvas")
        page.page.keyboard.press("d")  # pan right
        panned = page.js(f"() => {TIMELINE}.view()")
        assert panned[0] > after[0]
        page.page.wait_for_function("() => window.__changes.some(([k]) => k === 'view')")
        page.push("view", [before[0], before[0] + 10.0])  # Python sets the window
        assert page.js(f"() => {TIMELINE}.view()") == pytest.approx([before[0],
                                                                      before[0] + 10.0])


def _tall_page(page) -> None:
    """Room below the viewer, so that the page itself can scroll."""
    page.js("() => { const d = document.createElement('div'); d.style.height = '3000px';"
            " document.body.append(d); }")


def test_the_wheel_scrolls_the_page_until_the_viewer_has_focus(tmp_path):
    """A notebook scrolls past a trace: over an unfocused viewer the wheel scrolls the page;
    Ctrl+wheel zooms without scrolling it; once a click gives the viewer focus, the wheel
    scrolls its tracks (the page again once they end) and sideways scroll pans."""
    widget = TraceTimeline(tp.load(TPU))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        _tall_page(page)
        view = page.js(f"() => {TIMELINE}.view()")
        page.page.mouse.move(600, 300)
        page.page.mouse.wheel(0, 200)
        page.page.wait_for_function("() => window.scrollY > 0")
        assert page.js(f"() => {TIMELINE}.view()") == view  # no zoom
        assert page.js(f"() => {TIMELINE}.scrollY") == 0
        page.js("() => window.scrollTo(0, 0)")
        page.page.wait_for_function("() => window.scrollY === 0")
        page.page.keyboard.down("Control")
        page.page.mouse.wheel(0, -300)
        page.page.keyboard.up("Control")
        page.page.wait_for_function(f"w => {TIMELINE}.view()[1] - {TIMELINE}.view()[0] < w",
                                    arg=view[1] - view[0])
        assert page.js("() => window.scrollY") == 0
        box = page.page.locator(".tl-canvas").bounding_box()
        page.page.mouse.click(box["x"] + 200, box["y"] + box["height"] - 3)  # focus it
        assert page.js("() => document.activeElement.classList.contains('tl-canvas')")
        page.page.mouse.wheel(0, 300)
        page.page.wait_for_function(f"() => {TIMELINE}.scrollY > 0")
        assert page.js("() => window.scrollY") == 0
        zoomed = page.js(f"() => {TIMELINE}.view()")
        page.page.mouse.wheel(200, 0)  # a trackpad's sideways scroll pans
        page.page.wait_for_function(f"t => {TIMELINE}.view()[0] > t", arg=zoomed[0])
        page.page.mouse.wheel(0, 10**6)  # to the end of the tracks, then the page scrolls
        page.page.wait_for_function(f"() => {TIMELINE}.scrollY >= {TIMELINE}.contentH - "
                                    f"{TIMELINE}.viewH() - 1")
        page.page.mouse.wheel(0, 200)
        page.page.wait_for_function("() => window.scrollY > 0")
        assert page.console_errors == []


def test_the_viewer_resizes_and_its_rows_have_a_scrollbar(tmp_path):
    """140 rows of a TPU capture: a scrollbar whose thumb scrolls them, and a grip that makes
    the viewer taller (the height syncs to Python)."""
    widget = TraceTimeline(tp.load(TPU))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        thumb = page.page.locator(".tl-thumb").bounding_box()
        assert thumb["height"] > 10
        page.page.mouse.move(thumb["x"] + 4, thumb["y"] + 4)
        page.page.mouse.down()
        page.page.mouse.move(thumb["x"] + 4, thumb["y"] + 200, steps=4)
        page.page.mouse.up()
        page.page.wait_for_function(f"() => {TIMELINE}.scrollY > 1000")
        height = page.js(f"() => {TIMELINE}.height")
        grip = page.page.locator(".tl-grip").bounding_box()
        page.page.mouse.move(grip["x"] + 50, grip["y"] + 2)
        page.page.mouse.down()
        page.page.mouse.move(grip["x"] + 50, grip["y"] + 302, steps=4)
        page.page.mouse.up()
        page.page.wait_for_function(f"h => {TIMELINE}.height >= h + 250", arg=height)
        canvas = page.page.locator(".tl-canvas").bounding_box()
        assert canvas["height"] >= height + 250
        assert [v for k, v in page.changes() if k == "height"][-1] >= height + 250
        assert page.console_errors == []


def test_click_shows_details_from_python(cpu_widget, tmp_path):
    with WidgetPage(cpu_widget, tmp_path, bundle("timeline")) as page:
        x, y, index = event_point(page.page)
        page.page.mouse.click(x, y)
        sent = [v for k, v in page.changes() if k == "selected_index"]
        assert sent and sent[-1] == index
        cpu_widget.selected_index = index  # what the comm delivers to Python
        assert cpu_widget.details["name"]
        page.push("details", cpu_widget.details)
        text = page.js("() => document.querySelector('.tl-details').textContent")
        assert cpu_widget.details["name"] in text and "duration" in text


def test_search_finds_a_known_op(cpu_widget, tmp_path):
    with WidgetPage(cpu_widget, tmp_path, bundle("timeline")) as page:
        page.page.fill(".tl-search", "matmul")
        found = page.js("() => document.querySelector('.tl-found').textContent")
        assert int(found.split()[0]) > 0
        page.page.press(".tl-search", "Enter")
        sent = [v for k, v in page.changes() if k == "selected_index"]
        name_code = cpu_widget.tile.columns["name"][sent[-1]]
        # (its label, or the full name of an event labelled by its display name: searched too)
        meta = cpu_widget.meta
        said = meta["names"][name_code] + "\n" + meta["long_names"].get(str(name_code), "")
        assert "matmul" in said.lower()


def test_steps_selector_zooms_to_a_step(cpu_widget, tmp_path):
    steps = cpu_widget.meta["steps"]
    assert len(steps)
    with WidgetPage(cpu_widget, tmp_path, bundle("timeline")) as page:
        page.page.select_option(".tl-steps", "0")
        view = page.js(f"() => {TIMELINE}.view()")
        assert view == pytest.approx([steps.start.iloc[0], steps.end.iloc[0]])


def test_steps_that_fail_are_said_not_hidden(cpu_file, tmp_path, monkeypatch):
    """The trace viewer works without steps, and says why they are missing."""
    prof = tp.load(cpu_file)

    def broken(self):
        raise ValueError("no step markers <i>here</i>")

    monkeypatch.setattr(type(prof), "steps", property(broken))
    widget = TraceTimeline(prof)
    (note,) = widget.meta["notes"]
    assert "ValueError: no step markers <i>here</i>" in note
    assert len(widget.meta["steps"]) == 0
    assert "step" not in widget._timeline_source().describe(0)
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        assert page.js("() => document.querySelector('.tl-notes').textContent") == note
        assert page.js("() => document.querySelectorAll('.tl-steps option').length") == 1
        assert page.js("() => [document.querySelector('.tl-steps').disabled, "
                       "document.querySelector('.tl-steps option').textContent]") \
            == [True, "no steps"]  # (not an empty "zoom to step" menu)
        assert painted(page.page) > 2000 and page.console_errors == []


def test_gpu_fixture_renders(gpu_fixture_file, tmp_path):
    widget = TraceTimeline(tp.load(gpu_fixture_file))
    sections = set(widget.meta["tracks"].section)
    assert any("/device:GPU:4" in s for s in sections)
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        assert painted(page.page) > 2000 and page.console_errors == []


def test_html_in_names_is_text(cpu_html_logdir, tmp_path):
    widget = TraceTimeline(tp.load(cpu_html_logdir))
    evil = "<img src=x onerror=alert(1)>"
    assert evil in widget.meta["names"]
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        page.page.fill(".tl-search", "<img")
        page.page.press(".tl-search", "Enter")
        index = [v for k, v in page.changes() if k == "selected_index"][-1]
        widget.selected_index = index
        page.push("details", widget.details)
        text = page.js("() => document.querySelector('.tl-details').textContent")
        assert evil in text
        assert page.js("() => document.querySelectorAll('img').length") == 0
        # an <img src=x onerror=...> made from a name would have had its answer (and shown its
        # dialog) before a probe image loaded from the same server after it
        settle_images(page.page, "index.html?probe")
        assert page.dialogs == [] and page.blocked == []


@pytest.mark.parametrize("dark", [False, True])
def test_light_and_dark_themes(cpu_widget, tmp_path, dark):
    with WidgetPage(cpu_widget, tmp_path, bundle("timeline"), dark=dark) as page:
        r, g, b = page.js("""() => {
          const c = document.querySelector('.tfprof-timeline canvas');
          return Array.from(c.getContext('2d').getImageData(c.width - 2, c.height - 2, 1, 1)
                            .data.slice(0, 3));
        }""")
        assert (r + g + b < 200) == dark
        assert painted(page.page) > 2000


LINK_RGB = (0xE6, 0x51, 0x00)  # the links' colour on a light page (timeline/arrows.ts)


def _launch_and_kernel(source) -> tuple[int, int]:
    """Rows of a kernel launch (hipModuleLaunchKernel) and of the kernel it started."""
    src, dst, kind = source.link_rows()
    launch, kernel = src[kind == 0], dst[kind == 0]
    names = [source.index.names[source.index.name[r]] for r in launch.tolist()]
    i = next(k for k, n in enumerate(names) if n == "hipModuleLaunchKernel")
    return int(launch[i]), int(kernel[i])


def test_a_selected_launch_draws_an_arrow_to_its_kernel(tmp_path):
    widget = TraceTimeline(tp.load(AMD))
    source = widget._timeline_source()
    launch, kernel = _launch_and_kernel(source)
    index = source.index
    a = min(index.start[launch], index.start[kernel])
    b = max(index.start[launch] + index.dur[launch], index.start[kernel] + index.dur[kernel])
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        before = frame_count(page.page)
        page.push("view", [a - (b - a), b + (b - a)])  # the pair in the middle of the view
        assert when_drawn(page.page, COLOR_PIXELS, [".tfprof-timeline", list(LINK_RGB)],
                          after=before) == 0  # drawn at that view: no link yet
        x, y = row_point(page.page, launch)
        page.page.mouse.click(x, y)
        assert [v for k, v in page.changes() if k == "selected_index"][-1] == launch
        widget.selected_index = launch  # what the comm delivers; Python answers
        before = frame_count(page.page)
        page.push("details", widget.details)
        page.push("links", widget.links)
        # a frame painted after the links came, with the arrow: the arrow and kernel's outline
        pixels = when_drawn(page.page, COLOR_PIXELS, [".tfprof-timeline", list(LINK_RGB)],
                            after=before, until="t => t.frame.arrows === 1", timeout=10000)
        assert pixels > 60
        text = page.js("() => document.querySelector('.tl-links').textContent")
        assert f"→ kernel {index.names[index.name[kernel]]}" in text
        page.page.click(".tl-link")  # jump to the kernel
        assert [v for k, v in page.changes() if k == "selected_index"][-1] == kernel
        t0, t1 = page.js(f"() => {TIMELINE}.view()")
        assert t0 <= a and t1 >= b
        widget.selected_index = kernel
        page.push("links", widget.links)
        text = page.js("() => document.querySelector('.tl-links').textContent")
        assert "← launch hipModuleLaunchKernel" in text
        page.page.wait_for_function(f"() => {TIMELINE}.frame.arrows === 1", timeout=10000)
        assert page.console_errors == [] and page.blocked == []


def test_tpu_sections_are_drawn_devices_first(tmp_path):
    widget = TraceTimeline(tp.load(TPU))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        rows = page.js(f"() => {TIMELINE}.rows.map(r => [r.kind, r.section, r.track])")
        sections = [s.split(" ", 1)[1] for kind, s, _ in rows if kind == "section"]
        # the memory counters between the devices and the host's threads
        assert sections == [f"/device:TPU:{i}" for i in range(4)] + ["Counters", "/host:CPU"]
        counters = [t for kind, s, t in rows if kind == "counter"]
        assert len(counters) == len(widget.meta["counter_tracks"]) == 4
        tracks = widget.meta["tracks"]
        first = [tracks.name[t] for kind, s, t in rows if kind == "track"][:4]
        assert first == ["XLA Modules", "XLA Ops", "Async XLA Ops", "XLA TraceMe"]
        assert painted(page.page) > 2000 and page.console_errors == []
