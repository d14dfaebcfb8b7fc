"""The trace timeline in headless Chromium, from real profiles."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.timeline import TraceTimeline

from .harness import WidgetPage, color_pixels, event_point, painted, row_point

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
        page.page.mouse.wheel(0, -600)  # zoom in around the cursor
        page.page.wait_for_timeout(300)
        after = page.js(f"() => {TIMELINE}.view()")
        assert after[1] - after[0] < 0.5 * (before[1] - before[0])
        page.page.focus(".tl-canvas")
        page.page.keyboard.press("d")  # pan right
        panned = page.js(f"() => {TIMELINE}.view()")
        assert panned[0] > after[0]
        page.page.wait_for_timeout(400)
        assert any(k == "view" for k, _ in page.changes())
        page.push("view", [before[0], before[0] + 10.0])  # Python sets the window
        assert page.js(f"() => {TIMELINE}.view()") == pytest.approx([before[0],
                                                                      before[0] + 10.0])


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
        assert "matmul" in cpu_widget.meta["names"][name_code].lower()


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
        page.page.wait_for_timeout(200)
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
    launch, kernel = source.link_rows()
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
        page.push("view", [a - (b - a), b + (b - a)])  # the pair in the middle of the view
        assert color_pixels(page.page, LINK_RGB) == 0
        x, y = row_point(page.page, launch)
        page.page.mouse.click(x, y)
        assert [v for k, v in page.changes() if k == "selected_index"][-1] == launch
        widget.selected_index = launch  # what the comm delivers; Python answers
        page.push("details", widget.details)
        page.push("links", widget.links)
        page.page.wait_for_timeout(100)
        page.page.wait_for_function(f"() => {TIMELINE}.frame.arrows === 1", timeout=10000)
        assert color_pixels(page.page, LINK_RGB) > 60  # the arrow and the kernel's outline
        text = page.js("() => document.querySelector('.tl-links').textContent")
        assert "launches:" in text and index.names[index.name[kernel]] in text
        page.page.click(".tl-link")  # jump to the kernel
        assert [v for k, v in page.changes() if k == "selected_index"][-1] == kernel
        t0, t1 = page.js(f"() => {TIMELINE}.view()")
        assert t0 <= a and t1 >= b
        widget.selected_index = kernel
        page.push("links", widget.links)
        text = page.js("() => document.querySelector('.tl-links').textContent")
        assert "launched by:" in text and "hipModuleLaunchKernel" in text
        page.page.wait_for_function(f"() => {TIMELINE}.frame.arrows === 1", timeout=10000)
        assert page.console_errors == [] and page.blocked == []


def test_tpu_sections_are_drawn_devices_first(tmp_path):
    widget = TraceTimeline(tp.load(TPU))
    with WidgetPage(widget, tmp_path, bundle("timeline")) as page:
        rows = page.js(f"() => {TIMELINE}.rows.map(r => [r.kind, r.section, r.track])")
        sections = [s.split(" ", 1)[1] for kind, s, _ in rows if kind == "section"]
        assert sections == [f"/device:TPU:{i}" for i in range(4)] + ["/host:CPU"]
        tracks = widget.meta["tracks"]
        first = [tracks.name[t] for kind, s, t in rows if kind == "track"][:4]
        assert first == ["XLA Modules", "XLA Ops", "Async XLA Ops", "XLA TraceMe"]
        assert painted(page.page) > 2000 and page.console_errors == []
