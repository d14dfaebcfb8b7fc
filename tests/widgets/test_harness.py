"""The browser harness itself: a page's requests outside its allowed prefixes are blocked and
recorded (the pattern is matched in the browser, not in Python), and a widget's binary traits
reach the page byte for byte, each in a buffer of its own."""

from __future__ import annotations

import tfprof_nb as tp
from tfprof_nb.offline.payload import split_buffers, widget_state
from tfprof_nb.widgets import TraceView

from .harness import WidgetPage, outside


def test_outside_matches_only_what_no_prefix_starts():
    pattern = outside(("http://127.0.0.1:8000/", "data:", "blob:"))
    assert pattern.search("https://cdn.example.com/require.js")
    assert pattern.search("http://127.0.0.1:8001/x.js")  # another port is another server
    assert pattern.search("http://127.0.0.1.example.com/x")
    assert not pattern.search("http://127.0.0.1:8000/index.html")
    assert not pattern.search("data:image/png;base64,AAAA")
    assert not pattern.search("blob:http://127.0.0.1:8000/1234")


def test_a_page_request_leaving_the_machine_is_blocked_and_recorded(gpu_fixture_file, tmp_path):
    viewer = TraceView(tp.load(gpu_fixture_file))
    with WidgetPage(viewer, tmp_path, viewer._module_source) as page:
        status = page.js("""async () => {
            const local = (await fetch('state.json')).status;
            let outside = 'fetched';
            try { await fetch('https://cdn.example.com/x.js'); } catch (e) { outside = 'failed'; }
            return [local, outside];
        }""")
        assert status == [200, "failed"]
        assert page.blocked == ["https://cdn.example.com/x.js"]
        # every binary trait arrived whole, each in an ArrayBuffer of its own
        _, _, buffers = split_buffers(widget_state(viewer))
        shown = page.js("""() => window.__buffers.map(d => [d.byteOffset,
            d.byteLength === d.buffer.byteLength,
            Array.from(new Uint8Array(d.buffer), b => String.fromCharCode(b)).join('')])""")
    assert len(shown) == len(buffers) > 0
    for (offset, own, text), value in zip(shown, buffers):
        assert offset == 0 and own
        assert text.encode("latin-1") == bytes(value)
