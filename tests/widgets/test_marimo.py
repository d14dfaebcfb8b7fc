"""A marimo app shows the dashboard and prof.plot's figures (headless Chromium, offline).

marimo renders anywidgets inside a shadow root, which the document's styles do not reach: the
views must bring their stylesheet (and plotly's) into it.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import free_port
from .browser import new_context
from .harness import guard

APP = '''import marimo

app = marimo.App(width="full")


@app.cell
def _():
    import tfprof_nb as tp
    prof = tp.load({path!r})
    return (prof,)


@app.cell
def _(prof):
    prof.show()
    return


@app.cell
def _(prof):
    prof.plot.step_time()
    return


if __name__ == "__main__":
    app.run()
'''


@pytest.fixture()
def marimo_app(tmp_path, cpu_file):
    pytest.importorskip("marimo")  # in the test extra; the check below needs it
    app = tmp_path / "app.py"
    app.write_text(APP.format(path=str(cpu_file)))
    port = free_port()
    marimo = Path(sys.executable).with_name("marimo")
    proc = subprocess.Popen([str(marimo), "run", str(app), "--headless", "--port", str(port),
                             "--host", "127.0.0.1", "--no-token"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 180
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.time() < deadline, "marimo did not start within 180 s"
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_marimo_shows_the_dashboard_and_a_figure(marimo_app):

    blocked, errors, dialogs = [], [], []
    context = new_context(viewport={"width": 1300, "height": 900})
    with contextlib.closing(context):
        page = context.new_page()
        guard(page, (marimo_app,), blocked, errors, dialogs)
        page.goto(marimo_app, timeout=120000)
        dashboard = page.locator(".tfprof-dashboard")  # locators pierce shadow roots
        dashboard.wait_for(timeout=120000)
        assert dashboard.evaluate("e => e.getRootNode() instanceof ShadowRoot")
        tabs = dashboard.locator(".db-tab").all_text_contents()
        assert tabs[:3] == ["Overview", "Trace viewer", "TensorFlow stats"]
        card = dashboard.locator(".tp-card").first
        assert "Average step time" in card.text_content()
        # the shared stylesheet reached the shadow root: cards are styled, not plain divs
        assert card.evaluate("e => getComputedStyle(e).borderTopLeftRadius") == "6px"
        dashboard.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60000)
        bars = dashboard.locator(".trace.bars .point").count()
        assert bars > 0
        assert dashboard.evaluate(
            "e => e.getRootNode().querySelector('#tfprof-plotly-style') !== null")
        dashboard.locator(".db-tab[data-tab='timeline']").click()
        dashboard.locator(".tfprof-timeline canvas").wait_for(timeout=30000)
        # the prof.plot cell: marimo draws the plotly figure itself
        figures = page.locator(".js-plotly-plot")
        # the title drawn twice: in the dashboard's overview and in the prof.plot cell's figure
        page.locator(".gtitle", has_text="Step-time breakdown").nth(1).wait_for(timeout=60000)
        assert figures.count() >= 2
        titles = page.locator(".gtitle").all_text_contents()
        assert titles.count("Step-time breakdown (XProf's rule)") >= 2
    # marimo itself asks a CDN for MathJax (blocked here); nothing of ours goes out
    ours = [u for u in blocked if "plot" in u.lower() or "tfprof" in u.lower()]
    assert ours == [] and dialogs == []
    assert not [e for e in errors if "tfprof" in e.lower()]
