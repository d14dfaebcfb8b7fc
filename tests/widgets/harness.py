"""Render a widget's real ES module in headless Chromium from the widget's real state.

A tiny page stands in for the notebook's widget manager: it loads the bundle the Python
widget ships, gives it the widget's synced traits (binary traits as binary buffers, the rest
as JSON) and records what the view sends back.  Python pushes trait changes with ``push``.
Every request that does not go to the local test server is blocked and counted.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import re
import shutil
import socketserver
import threading
from pathlib import Path

from tfprof_nb.offline.bundles import bundle as static_bundle
from tfprof_nb.offline.payload import split_buffers, widget_state

from .browser import new_context

PAGE = """<!doctype html><html><head><meta charset="utf-8"><script src="offline.js"></script>
</head><body style="margin:0"><div id="root" style="width:1000px"></div>
<script type="module">
const state = await (await fetch("state.json")).json();
// binary buffers arrive apart (each its own ArrayBuffer, as a comm message's are split) and go
// back to their paths; one file holds them all (a request each made a view's page slow)
const packed = await (await fetch("buffers.bin")).arrayBuffer();
let start = 0;
const buffers = state.sizes.map(n => new DataView(packed.slice(start, start += n)));
window.tfprofOffline.putBuffers(state.json, state.paths, buffers);
window.__buffers = buffers;
const listeners = {};
window.__changes = [];
const model = {
  get: k => state.json[k],
  set: (k, v) => {  // like a Backbone model: local listeners hear the change
    state.json[k] = v; window.__changes.push([k, v]);
    (listeners["change:" + k] || []).forEach(f => f());
  },
  save_changes: () => {},
  on: (ev, cb) => { (listeners[ev] ||= []).push(cb); },
  off: (ev, cb) => { listeners[ev] = (listeners[ev] || []).filter(f => f !== cb); },
};
window.__push = (k, v) => {
  state.json[k] = v; (listeners["change:" + k] || []).forEach(f => f());
};
const bytesOf = b64 => b64.map(s => {
  const bin = atob(s); const u = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
  return new DataView(u.buffer);
});
window.__pushAll = (json, paths, b64) => {  // a kernel's update of several traits, as Backbone
  window.tfprofOffline.putBuffers(json, paths, bytesOf(b64));  // sets it: every value, then
  Object.assign(state.json, json);  // each key's change heard, in the update's order
  for (const k of Object.keys(json)) (listeners["change:" + k] || []).forEach(f => f());
};
window.__sent = [];
if (state.kernel) {  // custom messages go to the widget's Python answer and come back
  model.send = (content, callbacks, buffers) => {
    window.__sent.push(content);
    window.__kernel(JSON.stringify(content)).then(r => {
      if (r) setTimeout(() => window.__deliver(r[0], r[1]), r[2]);
    });
  };
  window.__deliver = (content, b64) => {
    (listeners["msg:custom"] || []).forEach(f => f(content, bytesOf(b64)));
  };
}
if (state.dark) document.body.style.setProperty("--jp-layout-color0", "#111111");
const mod = await import("./widget.js");
const el = document.getElementById("root");
const t = performance.now();
(mod.default.render || mod.render)({ model, el });
await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
window.__firstPaintMs = performance.now() - t;
window.__ready = true;
</script></body></html>"""


def outside(allowed: tuple[str, ...]) -> re.Pattern:
    """A pattern matching every URL that starts with none of ``allowed``."""
    return re.compile("^(?!" + "|".join(map(re.escape, allowed)) + ")")


def guard(page, allowed: tuple[str, ...], blocked: list, console_errors: list,
          dialogs: list) -> None:
    """Block and record every request not starting with one of ``allowed``; record console
    errors, page errors and dialogs (dismissed)."""

    def block(r):
        blocked.append(r.request.url)
        r.abort()

    # only the requests to block pass through Python: a regular expression is matched in the
    # browser, where a Python predicate had every request (JupyterLab's hundreds of chunks, a
    # view's hundreds of buffers) go through Playwright's driver and back
    page.route(outside(allowed), block)
    page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))


# pixels of a timeline canvas (past its labels and ruler) unlike its background
PAINTED = """sel => {
  const c = document.querySelector(sel);
  const d = c.getContext('2d').getImageData(200, 30, c.width - 200, c.height - 30).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4)
    if (Math.abs(d[i] - d[0]) + Math.abs(d[i+1] - d[1]) + Math.abs(d[i+2] - d[2]) > 30) n++;
  return n;
}"""


def painted(page, selector: str = ".tfprof-timeline canvas") -> int:
    """Pixels the timeline canvas at ``selector`` draws in its plot area (Playwright page)."""
    return page.evaluate(PAINTED, selector)


# true once the element's box has stayed the same for ``frames`` animation frames in a row
_SETTLED = """([sel, frames]) => {
  const el = document.querySelector(sel);
  if (!el) return false;
  const r = el.getBoundingClientRect(), key = [r.x, r.y, r.width, r.height].join();
  const seen = window.__tfpSettled || (window.__tfpSettled = {});
  seen[sel] = seen[sel] && seen[sel].key === key ? {key, n: seen[sel].n + 1} : {key, n: 0};
  return seen[sel].n >= frames;
}"""


def wait_settled(page, selector: str, frames: int = 10, timeout: float = 30000) -> None:
    """Waits until the element at ``selector`` stops moving: its box the same for ``frames``
    animation frames in a row (outputs above it laid out, the page done scrolling)."""
    page.wait_for_function(_SETTLED, arg=[selector, frames], polling="raf", timeout=timeout)


# [x, y] (whole pixels) of a point where the element itself is on top (not a toolbar over
# it, not out of the viewport); the element is brought to the viewport's middle when none is
_ON_TOP = """sel => {
  const el = document.querySelector(sel);
  if (!el) return null;
  const r = el.getBoundingClientRect(), x = Math.round(r.left + Math.min(500, r.width / 2));
  for (let y = Math.ceil(r.top) + 10; y < r.bottom - 10; y += 10)
    if (document.elementFromPoint(x, y) === el) return [x, y];
  el.scrollIntoView({block: 'center'});
  return null;
}"""


def point_on_top(page, selector: str, timeout: float = 30000) -> list:
    """[x, y] of a point of the element at ``selector`` that a pointer there would reach: the
    element settled (its box still for 10 frames), itself under the point, and the same point
    found again once settled (not one taken before it was scrolled into view)."""
    point = None
    for _ in range(10):
        wait_settled(page, selector, timeout=timeout)
        found = page.wait_for_function(_ON_TOP, arg=selector, timeout=timeout).json_value()
        if found == point:
            return point
        point = found
    raise AssertionError(f"{selector} kept moving: no point stayed on top of it")


def event_point(page, root: str = ".tfprof-timeline", timeout: float = 30000) -> list | None:
    """[x, y, row] of an event drawn by the timeline under ``root``: whole page coordinates
    to click (a click's coordinates are whole pixels: the point is checked to hit the event
    once rounded, inside where it is drawn, not at its edge) and its row in the timeline's
    order (the timeline is scrolled into view first).  Looked for until one is drawn (a view
    just set may paint its events a frame or a tile later), None after ``timeout`` ms."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return page.wait_for_function(_EVENT_POINT, arg=root, timeout=timeout).json_value()
    except PlaywrightTimeout:
        return None


_EVENT_POINT = """sel => {
      const root = document.querySelector(sel);
      root.scrollIntoView();
      const t = root.__timeline, r = root.querySelector('canvas').getBoundingClientRect();
      const same = (x, y, row) => { const h = t.hit(x, y); return h && h.row === row; };
      // the canvas's rows in the viewport (a deep profile's tracks run past 500 px)
      const yEnd = Math.max(500, Math.min(r.height - 5, innerHeight - Math.max(r.top, 0) - 5));
      for (let y = 40; y < yEnd; y += 3)
        for (let x = 210; x < r.width - 5; x += 3) {
          const hit = t.hit(x, y);
          if (!hit) continue;
          let y1 = y, x1 = x;
          while (y1 < y + 40 && same(x, y1 + 1, hit.row)) y1++;
          while (x1 < r.width - 5 && x1 < x + 200 && same(x1 + 1, y, hit.row)) x1++;
          const px = Math.round((x + x1) / 2 + r.left), py = Math.round((y + y1) / 2 + r.top);
          if (same(px - r.left, py - r.top, hit.row)) return [px, py, hit.row];
        }
      return null;
    }"""


def row_point(page, row: int, root: str = ".tfprof-timeline") -> list | None:
    """[x, y] (whole page coordinates, as a click has them) nearest the middle of where the
    timeline under ``root`` draws timeline row ``row`` alone (its track scrolled into the
    viewer first), None when it is not drawn."""
    return page.evaluate("""([sel, row]) => {
      const root = document.querySelector(sel);
      root.scrollIntoView();
      const t = root.__timeline, r = root.querySelector('canvas').getBoundingClientRect();
      t.scrollToRow(row);
      const same = (x, y) => { const h = t.hit(x, y); return h && h.row === row; };
      const points = [];
      for (let y = 24; y < t.height; y += 1)
        for (let x = 192; x < r.width - 2; x += 1) {
          const px = Math.round(x + r.left), py = Math.round(y + r.top);
          if (same(px - r.left, py - r.top)) points.push([px, py]);
        }
      if (!points.length) return null;
      const mid = (k) => (Math.min(...points.map(p => p[k])) + Math.max(...points.map(p => p[k]))) / 2;
      const [mx, my] = [mid(0), mid(1)];
      points.sort((a, b) => Math.hypot(a[0] - mx, a[1] - my) - Math.hypot(b[0] - mx, b[1] - my));
      return points[0];
    }""", [root, row])


# pixels of a colour (r, g, b, within a tolerance) on the timeline canvas under a root
COLOR_PIXELS = """([sel, rgb]) => {
  const c = document.querySelector(sel + ' canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4)
    if (Math.abs(d[i] - rgb[0]) + Math.abs(d[i+1] - rgb[1]) + Math.abs(d[i+2] - rgb[2]) < 40) n++;
  return n;
}"""


def color_pixels(page, rgb: tuple[int, int, int], root: str = ".tfprof-timeline") -> int:
    """How many pixels of the timeline canvas under ``root`` have about the colour ``rgb``."""
    return page.evaluate(COLOR_PIXELS, [root, list(rgb)])


# --- waiting for what the page does (no fixed sleeps) ---------------------------------------

def frame_count(page, root: str = ".tfprof-timeline") -> int:
    """Frames the timeline under ``root`` has painted so far (its painter's counter)."""
    return page.evaluate("sel => document.querySelector(sel).__timeline.frame.count", root)


def when_drawn(page, measure: str = "() => null", arg=None, root: str = ".tfprof-timeline",
               after: int = 0, until: str = "t => true", timeout: float = 30000):
    """``measure(arg)`` (JS function text) evaluated on the page at the first moment the
    timeline under ``root`` has painted a frame numbered above ``after`` (so one painted after
    whatever changed when :func:`frame_count` said ``after``), ``until(timeline)`` holds and
    its canvas still holds a painted frame: a resize clears the canvas until the next frame,
    while a painted frame covers it with its opaque background.  The check and the measure
    run in one evaluation, so nothing repaints or clears the canvas between them."""
    ready = f"""([sel, after, arg]) => {{
      const root = document.querySelector(sel), t = root && root.__timeline;
      const c = root && root.querySelector('canvas');
      if (!t || !c || !c.width || t.frame.count <= after || !({until})(t)) return false;
      if (c.getContext('2d').getImageData(0, 0, 1, 1).data[3] !== 255) return false;
      return {{value: ({measure})(arg)}};
    }}"""
    return page.wait_for_function(ready, arg=[root, after, arg],
                                  timeout=timeout).json_value()["value"]


def settle_images(page, src: str) -> None:
    """Load a probe image from ``src`` (an address the page may load) and return once its
    load or error event has fired and two more frames have passed: an image the page made
    earlier has had its answer by then (and its onload or onerror handlers have run), so a
    test can then assert what did not happen (no dialog, no request)."""
    page.evaluate("""src => new Promise(done => {
      const probe = new Image();
      probe.onload = probe.onerror = () =>
        requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0)));
      probe.src = src;
    })""", src)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class WidgetPage:
    """Serve and open one widget; use as a context manager."""

    def __init__(self, widget, tmp_path: Path, bundle: Path, dark: bool = False,
                 kernel: bool = False, live: bool = False):
        """``kernel``: the page's model can send custom messages, answered by the widget's
        own Python code (``widget._answer``) as a kernel would, after ``delay_ms``.
        ``live``: the widget's traits as a live widget syncs them (a dashboard's other tabs
        built when asked; see ``push_state``), not as an offline page holds them."""
        self.dir = tmp_path
        self.widget = widget
        self.kernel = kernel
        self.answered: list[float] = []  # seconds the Python side took per request
        self.delay_ms = 0
        if isinstance(bundle, Path):
            shutil.copy(bundle, tmp_path / "widget.js")
        else:  # a widget's module source (its _module_source): its text
            (tmp_path / "widget.js").write_text(str(bundle))
        plain, paths, buffers = split_buffers(widget_state(widget, live=live))
        (tmp_path / "buffers.bin").write_bytes(b"".join(bytes(b) for b in buffers))
        (tmp_path / "state.json").write_text(json.dumps({
            "json": plain, "dark": dark, "paths": paths, "kernel": kernel,
            "sizes": [memoryview(b).nbytes for b in buffers]}))
        (tmp_path / "index.html").write_text(PAGE)
        shutil.copy(static_bundle("offline"), tmp_path / "offline.js")
        self.payload_bytes = sum(v.nbytes for v in buffers)
        self.blocked: list[str] = []
        self.console_errors: list[str] = []
        self.dialogs: list[str] = []

    def __enter__(self):
        handler = functools.partial(_Quiet, directory=str(self.dir))
        self.server = socketserver.TCPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/index.html"
        self.context = new_context(viewport={"width": 1100, "height": 800})
        self.page = self.context.new_page()
        local = f"http://127.0.0.1:{self.server.server_address[1]}/"
        guard(self.page, (local,), self.blocked, self.console_errors, self.dialogs)
        if self.kernel:
            self.page.expose_function("__kernel", self._kernel)
        self.page.goto(self.url, timeout=120000)
        self.page.wait_for_function("window.__ready === true", timeout=60000)
        return self

    def __exit__(self, *exc):
        self.context.close()
        self.server.shutdown()
        self.server.server_close()

    def _kernel(self, text: str):
        import time

        t = time.perf_counter()
        reply = self.widget._answer(json.loads(text), [])
        self.answered.append(time.perf_counter() - t)
        if reply is None:
            return None
        content, buffers = reply
        b64 = [base64.b64encode(bytes(b)).decode("ascii") for b in buffers]
        return [content, b64, self.delay_ms]  # delivered later, as a kernel's reply

    def js(self, code: str, arg=None):
        return self.page.evaluate(code, arg)

    def push(self, key: str, value) -> None:
        self.js("([k, v]) => window.__push(k, v)", [key, value])

    def push_state(self, keys: list[str]) -> None:
        """Send the widget's traits ``keys`` to the page as one update, in this order (a
        kernel's ``hold_sync`` update: its keys come in no set order)."""
        live = self.widget.get_state()
        plain, paths, buffers = split_buffers({k: live[k] for k in keys})
        b64 = [base64.b64encode(bytes(b)).decode("ascii") for b in buffers]
        self.js("([s, p, b]) => window.__pushAll(s, p, b)", [plain, paths, b64])

    def changes(self) -> list:
        return self.js("() => window.__changes")


# --- plotly figures drawn by the views -------------------------------------------------------

def wait_for_plot(page, root: str = "body", count: int = 1) -> None:
    """Wait until ``count`` plotly figures under ``root`` are drawn (Playwright page)."""
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel + ' .js-plotly-plot .main-svg').length"
        " >= n", arg=[root, count], timeout=60000)


def plot_traces(page, root: str = "body", index: int = 0) -> list[dict]:
    """Name, type, visibility and point count of each trace of a drawn figure."""
    return page.evaluate("""([sel, i]) => {
      const gd = document.querySelectorAll(sel + ' .js-plotly-plot')[i];
      return gd.data.map(t => ({name: t.name, type: t.type, visible: t.visible ?? true,
        n: (t.x || t.values || []).length, labels: t.labels ? Array.from(t.labels) : null}));
    }""", [root, index])


_INSIDE = """sel => {  // a point of the page where the element at sel is the one hit
  const el = document.querySelector(sel);
  el.scrollIntoView({block: "center"});
  const r = el.getBoundingClientRect();
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
  if (el.contains(document.elementFromPoint(cx, cy))) return [cx, cy];
  for (let fy = 0.05; fy < 1; fy += 0.05)
    for (let fx = 0.05; fx < 1; fx += 0.05) {
      const x = r.left + fx * r.width, y = r.top + fy * r.height;
      if (el.contains(document.elementFromPoint(x, y))) return [x, y];
    }
  return [cx, cy];
}"""


def hover_label(page, selector: str) -> str:
    """Move the mouse onto the element at ``selector`` and return the text of the hover
    label plotly shows in that element's figure."""
    x, y = page.evaluate(_INSIDE, selector)
    page.mouse.move(x, y)
    label = """sel => {
      const gd = document.querySelector(sel).closest('.js-plotly-plot');
      return gd.querySelector('.hoverlayer').textContent;
    }"""
    page.wait_for_function(label, arg=selector, timeout=10000)
    return page.evaluate(label, selector)


def click_center(page, selector: str) -> None:
    """Click the element at ``selector`` (plotly hears clicks on its drag layer, under the
    point)."""
    page.locator(selector).first.scroll_into_view_if_needed()
    box = page.locator(selector).first.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def overview_budget(prof) -> int:
    """A state budget under which ``prof``'s trace viewer starts as an overview, as a large
    profile's does: 20 kB, or just under every event's bytes for a capture smaller than
    that (the Python tracer's capture has about 14 k events)."""
    from tfprof_nb.widgets.timeline_lod import FULL_EVENT_BYTES

    return min(20_000, FULL_EVENT_BYTES * len(prof.events) - 1)
