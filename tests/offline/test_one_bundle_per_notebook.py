"""A notebook stores each view bundle once, however many views it shows: once in its widget
state (the kernel's shared model of the bundle, which each view's small ``_esm`` loads) and
once among its offline copies (the latest loader output of the bundle carries it, the others
name it).  So too each piece of the offline copies' data (a large trait packed alone, a trace
viewer's event details): the trace viewer and the dashboard's trace tab, the overview and the
dashboard's overview tab name the same pieces, carried once.  Executed by a real kernel
(nbclient), exported by nbconvert, opened in Chromium."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from tfprof_nb.offline.bundles import bundle_text, digest
from tfprof_nb.offline.loader import esm_b64
from tfprof_nb.offline.payload import PART_KEY

from ..reporting.offline_page import OfflinePage
from ..widgets.harness import painted

TEMPLATE_CDNS = {"cdnjs.cloudflare.com", "unpkg.com", "cdn.jsdelivr.net"}
STATE = "application/vnd.jupyter.widget-state+json"
# five views, four of them drawn by the shared chart bundle (views.js), the trace viewer by
# its own (timeline.js); the memory view last: its loader carries the chart bundle
VIEWS = ["tp.widgets.OverviewView(prof)", "tp.widgets.TraceView(prof)", "prof.show()",
         "tp.widgets.OpStatsView(prof)", "tp.widgets.MemoryTimelineView(prof)"]
ROOTS = [".tfprof-overview", ".tfprof-timeline", ".tfprof-dashboard", ".tfprof-opstats",
         ".tfprof-memory"]
ESM = re.compile(r'<script type="application/octet-stream" class="tfprof-esm"[^>]*'
                 r'data-digest="(\w+)">([^<]*)</script>')
PIECE = re.compile(r'<script type="application/octet-stream" class="(tfprof-part|tfprof-details)"'
                   r'[^>]*data-digest="(\w+)">([^<]*)</script>')
PAYLOAD = re.compile(r'class="tfprof-payload"[^>]*>([A-Za-z0-9+/=]+)</script>')


@pytest.fixture(scope="module")
def executed(gpu_fixture_file, tmp_path_factory) -> Path:
    """The notebook run by a real kernel, its widget state stored (as nbconvert --execute)."""
    nb = new_notebook(cells=[new_code_cell(
        f"import tfprof_nb as tp\nprof = tp.load({str(gpu_fixture_file)!r}, progress=False)\n"
        "None")] + [new_code_cell(v) for v in VIEWS],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}})
    NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=True).execute()
    path = tmp_path_factory.mktemp("one_bundle") / "views.ipynb"
    nbformat.write(nb, str(path))
    return path


def _html(nb: dict, path: Path) -> Path:
    """``nb`` exported by nbconvert (not executed again) to ``path``'s .html."""
    path.write_text(json.dumps(nb))
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(path)],
                   check=True, capture_output=True, timeout=300)
    return path.with_suffix(".html")


def _loaders(nb: dict) -> list[tuple[str, int]]:
    """(bundle digest, source length) of each view's module in the loader outputs, in order."""
    return [(m[0], len(m[1])) for cell in nb["cells"] for out in cell.get("outputs", [])
            for m in ESM.findall("".join(out.get("data", {}).get("text/html", "")))]


def test_each_bundle_is_stored_once_in_the_state_and_once_in_the_copies(executed):
    text = executed.read_text()
    nb = json.loads(text)
    charts, trace = (esm_b64(bundle_text(name)) for name in ("views", "timeline"))
    # the chart bundle (1.4 MB, 0.6 MB deflated) twice in a notebook of five views: in the
    # widget state's shared model and in the latest chart view's loader output
    assert text.count(charts[:4000]) == 2 and text.count(trace[:4000]) == 2
    state = nb["metadata"]["widgets"][STATE]["state"]
    shared = [m for m in state.values() if "digest" in m["state"]]
    assert sorted(m["state"]["digest"] for m in shared) == sorted(
        digest(bundle_text(name)) for name in ("views", "timeline"))
    views = [m["state"] for m in state.values() if m["state"].get("_tfprof_view")]
    assert len(views) == 5 and all(len(v["_esm"]) < 2000 for v in views)
    assert all(v["_tfprof_code"].startswith("IPY_MODEL_") for v in views)
    # the loaders: only the latest of each bundle carries its source, the others name it
    loaders = _loaders(nb)
    assert [d for d, _ in loaders] == [digest(bundle_text(n)) for n in
                                       ("views", "timeline", "views", "views", "views")]
    assert [n > 0 for _, n in loaders] == [False, True, False, False, True]
    # the notebook's JavaScript: each bundle twice and a loader of about 1 kB per view
    assert len(text) - len(_without_modules(nb)) < 2 * (len(charts) + len(trace)) + 5 * 2000


def _without_modules(nb: dict) -> str:
    """The notebook as nbformat writes it, without the views' modules (the shared models'
    sources, the loaders' copies, the views' ``_esm``)."""
    nb = json.loads(json.dumps(nb))
    for model in nb["metadata"]["widgets"][STATE]["state"].values():
        model["state"].pop("_esm", None)
        if "digest" in model["state"]:
            model["buffers"] = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if "text/html" in out.get("data", {}):
                html = "".join(out["data"]["text/html"])
                out["data"]["text/html"] = ESM.sub("", html)
    return nbformat.writes(nbformat.from_dict(nb))


def _check_views(page):
    """Each of the five views drawn once, from the page's data, without an error."""
    for root in ROOTS:
        page.page.wait_for_selector(root, timeout=60000)
    page.page.wait_for_selector(".tfprof-timeline canvas", timeout=60000)
    page.page.wait_for_selector(".tfprof-memory .js-plotly-plot .main-svg", timeout=60000)
    page.page.wait_for_selector(".tfprof-dashboard .db-card", timeout=60000)
    counts = page.js("roots => roots.map(r => Array.from(document.querySelectorAll(r))"
                     ".filter(e => !e.parentElement.closest('.tfprof-dashboard')).length)", ROOTS)
    assert counts == [1, 1, 1, 1, 1]
    assert painted(page.page) > 2000
    assert page.js("() => document.querySelectorAll('.tfprof-offline-error').length") == 0
    assert {u.split("/")[2] for u in page.blocked} <= TEMPLATE_CDNS
    assert [e for e in page.console_errors if "net::ERR_FAILED" not in e] == []


def test_the_html_export_of_the_executed_notebook_shows_every_view(executed, tmp_path):
    """nbconvert --to html: the views drawn from the saved state, each with its module from
    the bundle's one shared model."""
    with OfflinePage(_html(json.loads(executed.read_text()), tmp_path / "x.ipynb"),
                     wait_for=".tfprof-overview") as page:
        _check_views(page)
        assert page.js("() => document.querySelectorAll('.jupyter-widgets "
                       ".tfprof-offline-view').length") == 5


def test_without_state_and_reordered_the_copies_find_the_bundle(executed, tmp_path):
    """No widget state (JupyterLab's default save) and the cells in reverse: the output that
    carries the chart bundle comes first, the views naming it find it further up."""
    nb = json.loads(executed.read_text())
    del nb["metadata"]["widgets"]
    nb["cells"] = nb["cells"][:1] + nb["cells"][:0:-1]
    with OfflinePage(_html(nb, tmp_path / "x.ipynb"), wait_for=".tfprof-overview") as page:
        _check_views(page)
        assert page.js("() => document.querySelectorAll('.jupyter-widgets').length") == 0


def test_a_cleared_carrier_leaves_a_note_that_says_what_to_do(executed, tmp_path):
    """The output carrying the chart bundle cleared (no widget state to fall back on): the
    views that named it say so, and the trace viewer (its own bundle) still draws."""
    nb = json.loads(executed.read_text())
    del nb["metadata"]["widgets"]
    nb["cells"][-1]["outputs"] = []
    with OfflinePage(_html(nb, tmp_path / "x.ipynb"), wait_for=".tfprof-timeline") as page:
        page.page.wait_for_function("() => document.querySelectorAll('.tfprof-offline-error')"
                                    ".length === 3", timeout=60000)
        errors = page.js("() => Array.from(document.querySelectorAll('.tfprof-offline-error'))"
                         ".map(e => e.textContent)")
        assert all("cleared or deleted): run the cell again" in e for e in errors)
        page.page.wait_for_selector(".tfprof-timeline canvas", timeout=60000)


def test_the_executed_notebook_reopened_in_jupyterlab_shows_every_view(executed, tmp_path):
    """Saved without widget state (JupyterLab's default) and trusted, opened in a real
    JupyterLab whose kernel never made these widgets: each loader revives its widget output,
    the chart views finding their bundle in the last view's output."""
    from nbformat.sign import NotebookNotary

    from ..widgets.jupyter import jupyter_server, open_notebook

    nb = nbformat.read(str(executed), as_version=4)
    del nb.metadata["widgets"]
    (tmp_path / ".jupyter-data").mkdir()
    NotebookNotary(data_dir=str(tmp_path / ".jupyter-data")).sign(nb)
    nbformat.write(nb, str(tmp_path / "x.ipynb"))
    external: list = []
    with jupyter_server(tmp_path) as url, \
            open_notebook(url, "lab", external, viewport=(1400, 1200)) as page:
        page.wait_for_function("() => document.querySelectorAll("
                               "'.tfprof-offline-caption').length === 5", timeout=240000)
        for i, root in enumerate(ROOTS):  # each output scrolled in (Lab lays out lazily)
            page.evaluate("i => document.querySelectorAll('.jp-OutputArea-output"
                          ".jupyter-widgets')[i].scrollIntoView()", i)
            page.wait_for_function("([i, root]) => !!document.querySelectorAll("
                                   "'.jp-OutputArea-output.jupyter-widgets')[i]"
                                   ".querySelector(root)", arg=[i, root], timeout=60000)
        assert page.evaluate("() => document.querySelectorAll('.tfprof-offline-error')"
                             ".length") == 0
    assert external == []


def _loader_pieces(nb: dict) -> list[dict]:
    """Per view's loader output, in order: its data pieces ({digest: text}, "" where it names
    a piece only) and its traits held in parts ({trait: digest})."""
    found = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            html = "".join(out.get("data", {}).get("text/html", ""))
            payload = PAYLOAD.search(html)
            if not payload:
                continue
            blob = zlib.decompress(base64.b64decode(payload.group(1)))
            state = json.loads(blob[4:4 + int.from_bytes(blob[:4], "little")])["data"]["state"]
            found.append({"pieces": {name: text for _, name, text in PIECE.findall(html)},
                          "details": [n for c, n, _ in PIECE.findall(html)
                                      if c == "tfprof-details"],
                          "parts": {k: v[PART_KEY] for k, v in state.items()
                                    if isinstance(v, dict) and PART_KEY in v}})
    return found


def test_each_piece_of_data_is_stored_once(executed):
    """Every piece of the copies' data carried by one output, the latest that uses it; the
    trace viewer's copy is the dashboard's trace tab's, the overview's its overview tab's."""
    text = executed.read_text()
    overview, trace, dashboard, opstats, memory = _loader_pieces(json.loads(text))
    views = [overview, trace, dashboard, opstats, memory]
    carried = [name for v in views for name, body in v["pieces"].items() if body]
    assert len(carried) == len(set(carried)) > 5
    assert {n for v in views for n in v["pieces"]} == set(carried)  # none named only
    for v in views:
        for name, body in v["pieces"].items():
            if body:  # the latest view naming it carries it
                assert not any(name in later["pieces"] for later in views[views.index(v) + 1:])
                assert text.count(body[:2000]) == 1
    assert {"tile", "meta"} <= trace["parts"].keys()  # (every event: no detail range)
    assert trace["parts"] == {k: dashboard["parts"][f"timeline__{k}"] for k in trace["parts"]}
    assert trace["details"] == dashboard["details"] and len(trace["details"]) == 1
    assert not any(trace["pieces"][n] for n in trace["parts"].values())
    assert overview["parts"]["step_figure"] == dashboard["parts"]["overview__step_figure"]
    assert overview["pieces"][overview["parts"]["step_figure"]] == ""


def _cleared_dashboard(executed: Path, tmp_path: Path, state: bool) -> Path:
    """The notebook's HTML export with the dashboard's outputs cleared (the carrier of the
    trace viewer's and the overview's data), with or without its widget state."""
    nb = json.loads(executed.read_text())
    if not state:
        del nb["metadata"]["widgets"]
    assert "".join(nb["cells"][3]["source"]) == "prof.show()"
    nb["cells"][3]["outputs"] = []
    return _html(nb, tmp_path / "x.ipynb")


def test_a_cleared_data_carrier_leaves_a_sentence_in_the_views_naming_it(executed, tmp_path):
    """Without widget state: the two views whose data the dashboard carried say so in their
    place (as text); the views carrying their own data still draw."""
    with OfflinePage(_cleared_dashboard(executed, tmp_path, False),
                     wait_for=".tfprof-opstats") as page:
        page.page.wait_for_function("() => document.querySelectorAll('.tfprof-offline-error')"
                                    ".length === 2", timeout=60000)
        errors = page.js("() => Array.from(document.querySelectorAll('.tfprof-offline-error'))"
                         ".map(e => [e.textContent, e.children.length])")
        assert all("this view's data was kept with another tfprof_nb output" in e
                   and "(cleared or deleted): run the cell again" in e and n == 0
                   for e, n in errors)
        page.page.wait_for_selector(".tfprof-memory .js-plotly-plot .main-svg", timeout=60000)
        drawn = page.js("roots => roots.map(r => document.querySelectorAll(r).length)", ROOTS)
        assert drawn == [0, 0, 0, 1, 1]


def test_with_widget_state_a_cleared_data_carrier_draws_from_the_state(executed, tmp_path):
    """With the widget state kept, the views whose copies name the cleared data draw from
    their saved widget state: all four left, without an error."""
    with OfflinePage(_cleared_dashboard(executed, tmp_path, True),
                     wait_for=".tfprof-overview") as page:
        for root in (".tfprof-timeline canvas", ".tfprof-opstats",
                     ".tfprof-memory .js-plotly-plot .main-svg"):
            page.page.wait_for_selector(root, timeout=60000)
        assert painted(page.page) > 2000
        drawn = page.js("roots => roots.map(r => document.querySelectorAll(r).length)", ROOTS)
        assert drawn == [1, 1, 0, 1, 1]
        assert page.js("() => document.querySelectorAll('.tfprof-offline-error').length") == 0
