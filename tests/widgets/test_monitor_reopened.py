"""A notebook that ran a JAX loop under tp.Monitor, saved (without widget state, Lab's
default) and opened again in a real JupyterLab: its new kernel holds no widget, so Lab says
"model not found" where the view was; the view's offline copy, rewritten as the windows
arrived, shows them there: the windows' rows and the chart's points."""

from __future__ import annotations

import base64
import json
import os
import re
import zlib
from pathlib import Path

import pytest

from .harness import wait_for_plot
from .jupyter import jupyter_server, open_notebook

pytest.importorskip("jax")

SCREENSHOTS = os.environ.get("TFPROF_NB_SCREENSHOTS")

SHOW = """import itertools, time
import jax, jax.numpy as jnp
import tfprof_nb as tp

@jax.jit
def train_step(w, x):
    return w - 0.01 * jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)

w, x = jnp.ones((64, 64)), jnp.ones((32, 64))
mon = tp.Monitor(every_steps=10, steps=3, warmup=1, backend="jax")
mon.show()"""

# the windows are analysed while the loop runs and after it: the cell waits for them
LOOP = """end = time.monotonic() + 120
for _ in mon.iterate(itertools.count()):
    w = train_step(w, x).block_until_ready()
    if mon.counts["pending"]:
        mon.wait()  # no window is dropped: every row has its point
    if mon.counts["analysed"] >= 4 or time.monotonic() > end:
        break
mon.wait()
print(len(mon.history), "windows", mon.counts)"""

ROWS = "() => document.querySelectorAll('.tfprof-monitor .tt-table tr.tp-row-link').length"
POINTS = ("() => document.querySelector('.tfprof-monitor .js-plotly-plot')._fullData[0]"
          ".x.length")
# every output of the notebook rendered: none still says Lab's "Loading widget..."
SETTLED = ("() => document.querySelectorAll('.jp-OutputArea-output').length > 0 && "
           "!document.body.innerText.includes('Loading widget')")
# the outputs (their text) that say Lab's "model not found", anywhere in the page
NOT_FOUND = ("() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))"
             ".map(o => o.innerText).filter(t => /model not found/i.test(t))"
             ".concat(/model not found/i.test(document.body.innerText) ? ['(page)'] : [])")


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """(root, windows): the notebook run by nbclient, signed and saved under ``root``."""
    import nbformat
    from nbclient import NotebookClient
    from nbformat.sign import NotebookNotary

    root = tmp_path_factory.mktemp("monitor_nb")
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(SHOW), nbformat.v4.new_code_cell(LOOP)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}})
    NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(root)}}).execute()
    said = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    windows = int(said.split(" windows")[0].split()[-1])
    # what saving a notebook one ran does: it stays trusted (in the server's data dir)
    (root / ".jupyter-data").mkdir()
    NotebookNotary(data_dir=str(root / ".jupyter-data")).sign(nb)
    nbformat.write(nb, str(root / "x.ipynb"))
    return root, windows, nb


def _saved_state(html: str) -> dict:
    """The JSON part of the packed state a loader output carries."""
    b64 = re.search(r'class="tfprof-payload"[^>]*>([A-Za-z0-9+/=]+)</script>', html).group(1)
    blob = zlib.decompress(base64.b64decode(b64))
    return json.loads(blob[4:4 + int.from_bytes(blob[:4], "little")])["data"]["state"]


def test_saved_copy_is_the_last_state(ran):
    """The loader output of mon.show()'s cell was rewritten: it holds the run's windows, not
    the copy made when the view showed ("no window yet after 0 steps")."""
    _, windows, nb = ran
    assert windows >= 4
    loaders = [o for o in nb.cells[0].outputs
               if o.get("metadata", {}).get("tfprof_nb") == "offline-loader"]
    assert len(loaders) == 1
    state = _saved_state(loaders[0]["data"]["text/html"])
    assert state["status"].startswith(f"{windows} window{'s' * (windows != 1)} (")
    assert state["_tfprof_view"] == "MonitorView"


def test_reopened_notebook_shows_the_monitor_windows(ran):

    root, windows, _ = ran
    external: list = []
    with jupyter_server(root, "lab") as url, open_notebook(url, "lab", external) as page:
        try:
            page.wait_for_selector(".tfprof-offline-caption", timeout=120000)
            wait_for_plot(page, ".tfprof-monitor")
            page.wait_for_function(f"() => ({ROWS})() === {windows}", timeout=60000)
        except Exception:  # keep what the page showed for the failure report
            page.screenshot(path=str(root / "failure.png"))
            print("outputs:", page.evaluate(
                "() => Array.from(document.querySelectorAll('.jp-OutputArea'))"
                ".map(o => o.innerText.slice(0, 500))"))
            raise
        assert page.evaluate(POINTS) == windows
        status = page.evaluate("() => document.querySelector('.mon-status').textContent")
        said = f"{windows} window{'s' * (windows != 1)} ("
        assert status.startswith(said) and "no window yet" not in status
        # the view's place holds the saved view, not Lab's "model not found"
        assert page.evaluate("() => document.querySelector('.tfprof-offline-caption')"
                             ".closest('.jp-OutputArea-output').innerText"
                             ".includes('model not found')") is False
        # nor does any other output of the notebook: once every widget output settled
        # (Lab's "Loading widget..." gone), no "model not found" anywhere in the page
        page.wait_for_function(SETTLED, timeout=60000)
        assert page.evaluate(NOT_FOUND) == []
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.locator(".tfprof-monitor").screenshot(
                path=str(Path(SCREENSHOTS) / "monitor_reopened.png"))
    assert external == []
