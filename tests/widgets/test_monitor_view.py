"""The monitor's view in a real browser: drawn from a real monitored run's history, updated in
place when Python sets new values, a click on a window answered by the widget's own Python;
and in a real JupyterLab, the chart gaining points while the training cell runs, then a
window's dashboard shown under the view, inside its own element."""

from __future__ import annotations

import base64
import itertools
import time

import pytest

import tfprof_nb as tp
from tfprof_nb.offline.bundles import bundle
from tfprof_nb.offline.payload import split_buffers, widget_state
from tfprof_nb.widgets.monitor_view import MonitorView

from .harness import WidgetPage, wait_for_plot
from .jupyter import jupyter_server, open_notebook, run_first_cell, write_notebook

jax = pytest.importorskip("jax")


@pytest.fixture(scope="module")
def monitored():
    """A real monitored JAX loop: 6 windows analysed, the last ones with 5 ms slower steps
    (flagged as regressions)."""
    jnp = jax.numpy

    @jax.jit
    def train_step(w, x):
        return w - 0.01 * jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)

    w, x = jnp.ones((64, 64)), jnp.ones((32, 64))
    mon = tp.Monitor(every_steps=20, steps=5, warmup=2, backend="jax")
    end = time.monotonic() + 60
    for _ in mon.iterate(itertools.count()):
        w = train_step(w, x).block_until_ready()
        if mon.counts["pending"]:
            mon.wait()  # no window is dropped: every row has its point
        if mon.counts["analysed"] >= 3:
            time.sleep(0.005)
        if mon.counts["analysed"] >= 6 or time.monotonic() > end:
            break
    mon.wait()
    assert mon.history.regressed.any()
    return mon


def push_traits(page, view, names: list[str]) -> None:
    """Send ``view``'s current values of ``names`` to the page, as the comm would (binary
    buffers apart, put back at their paths)."""
    state = {k: v for k, v in widget_state(view).items() if k in names}
    plain, paths, buffers = split_buffers(state)
    b64 = [base64.b64encode(bytes(b)).decode("ascii") for b in buffers]
    page.js("""([plain, paths, b64]) => {
      const views = b64.map(s => {
        const bin = atob(s), u = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
        return new DataView(u.buffer);
      });
      window.tfprofOffline.putBuffers(plain, paths, views);
      for (const k of Object.keys(plain)) window.__push(k, plain[k]);
    }""", [plain, paths, b64])


ROWS = "() => document.querySelectorAll('.tfprof-monitor .tt-table tr.tp-row-link').length"
POINTS = ("() => document.querySelector('.tfprof-monitor .js-plotly-plot')._fullData[0]"
          ".x.length")
# {trace name: points} of the drawn figure (plotly keeps typed arrays decoded in _fullData)
TRACES = """() => Object.fromEntries(document.querySelector('.tfprof-monitor .js-plotly-plot')
  ._fullData.map(t => [t.name, t.visible === true ? t.x.length : 0]))"""


def _view(mon, rows: int, opened: list):
    hist = mon.history.iloc[:rows]
    base = mon.baseline

    def opener(i):
        opened.append(i)
        return mon.window(i)

    return MonitorView(hist, f"{rows} windows", mon.rule, base.median_ms, base.threshold_ms,
                       opener=opener)


def test_view_updates_in_place_and_opens_a_window(monitored, tmp_path):
    mon, opened = monitored, []
    view = _view(mon, 2, opened)
    hist = mon.history
    with WidgetPage(view, tmp_path, bundle("monitor"), kernel=True) as page:
        wait_for_plot(page.page, ".tfprof-monitor")
        assert page.js(POINTS) == 2 and page.js(ROWS) == 2
        assert page.js("() => document.querySelector('.mon-status').textContent") == \
            "2 windows"
        page.js("() => { document.querySelector('.tfprof-monitor .js-plotly-plot')"
                ".__same = true; }")
        view.update(hist, f"{len(hist)} windows", mon.rule, mon.baseline.median_ms,
                    mon.baseline.threshold_ms)
        push_traits(page, view, ["figure", "windows", "status", "rule"])
        page.page.wait_for_function(f"() => ({POINTS})() === {len(hist)}", timeout=30000)
        page.page.wait_for_function(f"() => ({ROWS})() === {len(hist)}", timeout=30000)
        traces = page.js(TRACES)
        assert traces["Regression"] == int(hist.regressed.sum()) > 0
        assert traces["Baseline"] == traces["Regression threshold"] == 2
        assert page.js("() => document.querySelector('.tfprof-monitor .js-plotly-plot')"
                       ".__same") is True  # redrawn in place
        assert page.js("() => document.querySelector('.mon-rule').textContent") == mon.rule
        page.page.locator(".tfprof-monitor .tt-table tr.tp-row-link").nth(3).click()
        page.page.wait_for_function("() => document.querySelector('.mon-note').textContent"
                                    ".includes('shown below')", timeout=30000)
        assert page.js("() => window.__sent") == [{"kind": "open", "window": 3}]
        assert opened == [3] and view.shown == 3
        first = view._board  # the window's dashboard widget, named by the view's trait
        first_id = first.model_id
        assert view.dashboard == first_id != ""
        assert widget_state(view)["dashboard"] == ""  # the offline copy names no live widget
        # the page has no widget manager (as offline): the named dashboard draws nothing
        page.push("dashboard", view.dashboard)
        assert page.js("() => document.querySelector('.mon-dashboard').children.length") == 0
        view.open_window(1)  # another window: its dashboard replaces the first, closed
        assert opened == [3, 1] and view.shown == 1 and first.comm is None
        assert view.dashboard == view._board.model_id != first_id
        view.close()
        assert view._board is None
        assert page.console_errors == [] and page.blocked == []


def test_every_step_is_drawn_with_its_windows(monitored, tmp_path):
    """The monitor's own view draws the step timer's rows: every step of the run, the
    windows' steps marked, the spikes' period in the panel's title (when found)."""
    mon = monitored
    st = mon.step_times
    view = mon.show()
    with WidgetPage(view, tmp_path, bundle("monitor")) as page:
        wait_for_plot(page.page, ".tfprof-monitor")
        traces = page.js(TRACES)
        assert traces["Median step time"] == int((mon.history.status == "analysed").sum())
        assert traces["Step time"] == len(st) == mon.steps_run
        assert traces["Steps in windows"] == int(st.in_window.sum()) > 0
        titles = page.js("() => Array.from(document.querySelectorAll("
                         "'.tfprof-monitor .annotation-text')).map(t => t.textContent)")
        assert titles[0].startswith("Every step's time")
        assert page.console_errors == [] and page.blocked == []
    view.close()


def test_profile_strings_stay_text(monitored, tmp_path):
    """A top op named like markup shows as those characters, in the table and the chart's
    hover label; nothing is parsed as HTML."""
    hist = monitored.history
    hist["top_op"] = "<img src=x onerror=window.__xss=1><b>op</b>"
    view = MonitorView(hist, "<b>status</b>", "rule")
    with WidgetPage(view, tmp_path, bundle("monitor")) as page:
        wait_for_plot(page.page, ".tfprof-monitor")
        cells = page.js("() => Array.from(document.querySelectorAll('.tfprof-monitor td'))"
                        ".map(td => td.textContent)")
        assert hist.top_op.iloc[0] in cells
        assert page.js("() => document.querySelector('.mon-status').textContent") == \
            "<b>status</b>"
        custom = page.js("() => document.querySelector('.tfprof-monitor .js-plotly-plot')"
                         ".data[0].customdata[0][3]")
        assert custom == "&lt;img src=x onerror=window.__xss=1&gt;&lt;b&gt;op&lt;/b&gt;"
        assert page.js("() => document.querySelectorAll('.tfprof-monitor img').length") == 0
        assert page.js("() => window.__xss === undefined")
        assert page.console_errors == [] and page.blocked == []


NOTEBOOK = """
import os, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, keras
import tfprof_nb as tp
x = np.random.rand(640, 8).astype("float32"); y = np.random.rand(640, 1).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(64), keras.layers.Dense(1)])
model.compile("sgd", "mse")
mon = tp.Monitor(every_steps=20, steps=4, warmup=2)
display(mon.show())

class Hold(keras.callbacks.Callback):  # 3 windows analysed, then 4 s more of training
    done = None
    def on_train_batch_end(self, batch, logs=None):
        if mon.counts["pending"]:
            mon.wait()  # no window dropped: the table stays short
    def on_epoch_end(self, epoch, logs=None):
        if self.done is None and mon.counts["analysed"] >= 3:
            self.done = time.monotonic()
        if self.done is not None and time.monotonic() > self.done + 4:
            self.model.stop_training = True

model.fit(x, y, batch_size=32, epochs=100000, verbose=0, callbacks=[mon, Hold()])
"""

BUSY_WITH_POINTS = """n => {
  const gd = document.querySelector('.tfprof-monitor .js-plotly-plot');
  const running = document.querySelector('.jp-InputPrompt').innerText.includes('*');
  return !!gd && !!gd._fullData && gd._fullData.length > 0 && gd._fullData[0].x.length >= n
    && running;
}"""


@pytest.mark.parametrize("app", ["lab"])
def test_monitor_in_jupyterlab(tmp_path, app):
    """The chart gains points while the training cell still runs (traits set from the
    monitor's thread reach the page); once it ends, a click on a window's row shows that
    window's dashboard under the view."""

    write_notebook(tmp_path, NOTEBOOK)
    external: list = []
    with jupyter_server(tmp_path, app) as url, open_notebook(url, app, external) as page:
        run_first_cell(page)
        try:
            page.wait_for_function(BUSY_WITH_POINTS, arg=2, timeout=180000)
            page.wait_for_function("() => /\\[[0-9]+\\]/.test(document.querySelector("
                                   "'.jp-InputPrompt').innerText)", timeout=120000)
            rows = page.locator(".tfprof-monitor .tt-table tr.tp-row-link")
            assert rows.count() >= 3
            rows.first.click()
            # drawn inside the view's own element, under its table: no other output
            page.wait_for_selector(".jp-OutputArea .mon-dashboard .tfprof-dashboard .db-card",
                                   timeout=120000)
            page.wait_for_function("() => document.querySelector('.mon-note').textContent"
                                   ".includes(\"Window 0's dashboard\")", timeout=30000)
        except Exception:  # keep what the page showed for the failure report
            page.screenshot(path=str(tmp_path / "failure.png"))
            print("outputs:", page.evaluate(
                "() => Array.from(document.querySelectorAll('.jp-OutputArea'))"
                ".map(o => o.innerText.slice(0, 500))"))
            raise
        # the one dashboard of the page is the view's (no output area beneath it shows one)
        assert page.evaluate("() => [document.querySelectorAll('.tfprof-dashboard').length, "
                             "document.querySelectorAll('.mon-dashboard .tfprof-dashboard')"
                             ".length]") == [1, 1]
    assert external == []
