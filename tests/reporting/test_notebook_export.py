"""Notebooks keep their views: nbconvert exports and tp.export_notebook, opened offline."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
from nbformat.sign import NotebookNotary
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import tfprof_nb as tp
from tfprof_nb.offline import limits
from tfprof_nb.widgets.table_view import KernelTable

from ..widgets.harness import event_point, painted
from .offline_page import OfflinePage

# Hosts nbconvert's own HTML template loads from (MathJax, require.js, the widget manager);
# an offline page blocks them, and the views must not need them.
TEMPLATE_CDNS = {"cdnjs.cloudflare.com", "unpkg.com", "cdn.jsdelivr.net"}


def _notebook(tmp_path: Path, profile: Path) -> Path:
    nb = new_notebook(cells=[
        new_code_cell(f"import tfprof_nb as tp\nprof = tp.load({str(profile)!r})\nprof"),
        new_code_cell("tp.widgets.TraceTimeline(prof)"),
        new_code_cell("tp.widgets.KernelTable(prof)"),
        new_code_cell("tp.widgets.MemoryTimeline(prof)"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})
    path = tmp_path / "views.ipynb"
    nbformat.write(nb, str(path))
    return path


def _nbconvert(path: Path, *extra: str, execute: bool = True) -> Path:
    cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(path)]
    if execute:
        cmd += ["--execute", "--ExecutePreprocessor.timeout=600"]
    subprocess.run(cmd + list(extra), check=True, capture_output=True, timeout=900)
    return path.with_suffix(".html")


def _check_views(page, prof):
    page.page.wait_for_selector(".tfprof-timeline canvas", timeout=60000)
    page.page.wait_for_selector(".tfprof-table .tt-table", timeout=60000)
    assert page.js("() => document.querySelectorAll('.tfprof-dashboard').length") == 1
    assert page.js("() => document.querySelectorAll('.tfprof-timeline').length") == 1
    assert painted(page.page) > 2000
    # plotly charts: the dashboard's overview and the standalone memory view (each output
    # carries its own module, plotly.js inside)
    page.page.wait_for_selector(".tfprof-overview .js-plotly-plot .main-svg", timeout=60000)
    page.page.wait_for_selector(".tfprof-memory .js-plotly-plot .main-svg", timeout=60000)
    assert page.js("() => document.querySelectorAll('.tfprof-memory .scatterlayer .point')"
                   ".length") > 100
    rows = page.js("() => Array.from(document.querySelectorAll('.tfprof-table'))"
                   ".filter(t => !t.closest('.tfprof-dashboard, .tfprof-memory'))"
                   ".map(t => t.querySelectorAll('.tt-table tr').length)")
    assert rows == [len(prof.kernel_stats) + 1]  # the standalone kernel table
    page.page.click(".db-tab[data-tab='kernels']")  # the dashboard's tabs work too
    assert page.js("() => document.querySelectorAll(\"[data-pane='kernels'] .tt-table tr\")"
                   ".length") - 1 == len(prof.kernel_stats)
    assert page.dialogs == []


def _click_timeline_event(page) -> str:
    """Click an event of the standalone timeline; its details once they show stats."""
    x, y, _ = event_point(page.page)
    page.page.mouse.click(x, y)
    page.page.wait_for_function("() => document.querySelector('.tfprof-timeline .tl-details')"
                                ".textContent.includes('event id')", timeout=30000)
    return page.js("() => document.querySelector('.tfprof-timeline .tl-details').textContent")


def _own_errors(page) -> list[str]:
    """Console errors other than the blocked template resources failing to load."""
    return [e for e in page.console_errors if "net::ERR_FAILED" not in e]


def test_nbconvert_execute_export_shows_the_views_offline(gpu_fixture_file, tmp_path):
    """The executed export stores the widget state; the loader renders it without a CDN."""
    html = _nbconvert(_notebook(tmp_path, gpu_fixture_file))
    executed = nbformat.read(str(tmp_path / "views.ipynb"), as_version=4)  # unchanged input
    assert not executed.cells[0].get("outputs")
    prof = tp.load(gpu_fixture_file)
    with OfflinePage(html) as page:
        _check_views(page, prof)
        # the views rendered from the saved widget state, not from the text/html fallback
        assert page.js("() => document.querySelectorAll('.jupyter-widgets "
                       ".tfprof-offline-view').length") == 4
        assert "duration" in _click_timeline_event(page)  # with the stats, from the loader
        assert {u.split("/")[2] for u in page.blocked} <= TEMPLATE_CDNS
        assert _own_errors(page) == []


def test_export_without_widget_state_uses_the_fallback(gpu_fixture_file, tmp_path):
    html = _nbconvert(_notebook(tmp_path, gpu_fixture_file),
                      "--ExecutePreprocessor.store_widget_state=False")
    prof = tp.load(gpu_fixture_file)
    with OfflinePage(html) as page:
        _check_views(page, prof)
        assert page.js("() => document.querySelectorAll('.jupyter-widgets').length") == 0
        # a click shows the event's stats, which the view's loader output carries
        assert "duration" in _click_timeline_event(page)
        assert {u.split("/")[2] for u in page.blocked} <= TEMPLATE_CDNS
        assert _own_errors(page) == []


def test_a_view_shown_twice_keeps_each_state(tmp_path):
    """One widget displayed, changed, displayed again: each output is its own snapshot, and
    each loader renders its own placeholder from its own data."""
    nb = new_notebook(cells=[new_code_cell(
        "import pandas as pd\nimport tfprof_nb as tp\n"
        "t = tp.widgets.TableView(pd.DataFrame({'x': [1, 2]}), title='first state')\n"
        "display(t)\n"
        "t.table = t.table.replace(title='second state')\n"
        "display(t)")], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                 "language": "python"}})
    path = tmp_path / "twice.ipynb"
    nbformat.write(nb, str(path))
    html = _nbconvert(path, "--ExecutePreprocessor.store_widget_state=False")
    with OfflinePage(html, wait_for=".tfprof-table") as page:
        page.page.wait_for_function(
            "() => document.querySelectorAll('.tfprof-table').length === 2", timeout=60000)
        titles = page.js("() => Array.from(document.querySelectorAll('.tfprof-table .tt-bar b'))"
                         ".map(b => b.textContent)")
        assert titles == ["first state", "second state"]
        assert page.js("() => document.querySelectorAll('.tfprof-offline-note').length") == 0
        assert {u.split("/")[2] for u in page.blocked} <= TEMPLATE_CDNS
        assert _own_errors(page) == [] and page.dialogs == []


def test_export_notebook_is_a_shareable_offline_report(gpu_fixture_file, tmp_path):
    prof = tp.load(gpu_fixture_file)
    path = tp.export_notebook(prof, tmp_path / "shared_report")
    assert path == tmp_path / "shared_report.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert NotebookNotary().check_signature(nb)  # trusted on this machine
    assert prof.summary() in "".join(o.get("text", "") for c in nb.cells
                                     for o in c.get("outputs", []))
    html = _nbconvert(path, execute=False)
    with OfflinePage(html) as page:
        page.page.click(".db-tab[data-tab='kernels']")
        rows = page.js("() => document.querySelectorAll(\"[data-pane='kernels'] "
                       ".tt-table tr\").length")
        assert rows - 1 == len(prof.kernel_stats)
        assert {u.split("/")[2] for u in page.blocked} <= TEMPLATE_CDNS
        assert _own_errors(page) == [] and page.dialogs == []
    # its code reloads the profile: run it, and it works (live outputs come back)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                    "--execute", "--inplace", str(path)], check=True, capture_output=True,
                   timeout=600)
    rerun = nbformat.read(str(path), as_version=4)
    # (a slow load, as on a busy machine, shows its progress line as an output too: the view's
    # is the first of the others)
    kinds = [set(o.get("data", {})) for o in rerun.cells[2].outputs
             if "tfprof-progress" not in o.get("data", {}).get("text/html", "")]
    assert "application/vnd.jupyter.widget-view+json" in kinds[0]


def test_export_notebook_signed_where_jupyter_never_ran(gpu_fixture_file, tmp_path,
                                                         monkeypatch):
    """A fresh machine has no Jupyter data folder: the notary writes its key there and does
    not make the folder (seen: "not signed ... notebook_secret", a warning, on a new VM)."""
    data_dir = tmp_path / "home" / ".local" / "share" / "jupyter"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data_dir))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = tp.export_notebook(tp.load(gpu_fixture_file), tmp_path / "fresh.ipynb")
    assert (data_dir / "notebook_secret").is_file()
    assert data_dir.stat().st_mode & 0o077 == 0  # private, as Jupyter makes it
    notary = NotebookNotary(data_dir=str(data_dir))
    try:
        assert notary.check_signature(nbformat.read(str(path), as_version=4))
    finally:
        notary.store.close()


def test_fallback_too_large_for_a_notebook_becomes_a_note(gpu_fixture_file, monkeypatch):
    monkeypatch.setattr(limits, "MAX_FALLBACK_BYTES", 1000)
    data, _ = KernelTable(tp.load(gpu_fixture_file))._repr_mimebundle_()
    assert "too large to keep in the notebook" in data["text/html"]
    assert "tfprof-payload" not in data["text/html"]
    monkeypatch.setenv("TFPROF_NB_MAX_FALLBACK_MB", "0")
    data, _ = KernelTable(tp.load(gpu_fixture_file))._repr_mimebundle_()
    assert "no offline copy" in data["text/html"] and "tfprof-payload" not in data["text/html"]
    monkeypatch.setenv("TFPROF_NB_MAX_FALLBACK_MB", "64")
    data, _ = KernelTable(tp.load(gpu_fixture_file))._repr_mimebundle_()
    assert "tfprof-payload" in data["text/html"]


def test_export_notebook_leaves_the_callers_logging_alone(gpu_fixture_file, tmp_path):
    """Signing the notebook starts no Jupyter application, whose logging set-up (dictConfig)
    shut every logging handler of the process down: a handler's stream was closed (absl's,
    which TensorFlow installs, closed pytest's own capture when a test ran ``tfprof report
    --notebook`` in-process).  The notebook is still trusted here."""
    class Recording(logging.Handler):
        closed = False

        def close(self):
            self.closed = True
            super().close()

    logger, handler = logging.getLogger("a_user_logger"), Recording()
    logger.addHandler(handler)
    try:
        path = tp.export_notebook(tp.load(gpu_fixture_file), tmp_path / "n.ipynb")
        assert not handler.closed and handler in logger.handlers
    finally:
        logger.removeHandler(handler)
    assert NotebookNotary().check_signature(nbformat.read(str(path), as_version=4))


@pytest.mark.parametrize("title", ["<b>bold</b> & *stars*"])
def test_export_notebook_title_is_text(gpu_fixture_file, tmp_path, title):
    path = tp.export_notebook(tp.load(gpu_fixture_file), tmp_path / "t.ipynb", title=title)
    source = nbformat.read(str(path), as_version=4).cells[0].source
    assert "<b>" not in source and "&lt;b&gt;bold&lt;/b&gt;" in source
