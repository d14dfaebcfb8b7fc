"""The Source view in headless Chromium: the dashboard's tab on a real H200 capture (the code
of a readable file beside its device time), a TensorFlow profile (its ops outside XLA carry no
source), and a JAX program run in a real notebook kernel, whose cell's code the report carries."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.dashboard_view import Dashboard

from ..conftest import DATA
from ..reporting.offline_page import OfflinePage
from .harness import WidgetPage

GPU = DATA / "jax_h200_nocmdbuf.xplane.pb"
PANE = "[data-pane='source']"
SCREENSHOTS = os.environ.get("TFPROF_NB_SCREENSHOTS")  # make screenshots: docs/screenshots

_BLOCKS = """sel => Array.from(document.querySelectorAll(sel + ' .src-block')).map(b => ({
  head: b.querySelector('.src-head').textContent,
  note: (b.querySelector('.src-note, .src-origin') || {}).textContent || '',
  rows: Array.from(b.querySelectorAll('tr.src-line')).map(tr => Array.from(tr.children)
    .map(td => td.textContent))}))"""


def _open_tab(page, tab: str = "source") -> None:
    page.click(f".db-tab[data-tab='{tab}']")
    page.wait_for_function("sel => document.querySelector(sel + ' .src-block, ' + sel + "
                           "' .db-reason')", arg=f"[data-pane='{tab}']", timeout=60000)


def _time_text(us: float, pct: float) -> str:
    return f"{us / 1e3:,.3f} ms {pct:.1f}%"


def _shown_table(page) -> pd.DataFrame:
    text = page.js("sel => document.querySelector(sel + ' .tfprof-table').__table.csv()", PANE)
    return pd.read_csv(io.StringIO(text), keep_default_na=False)


def _screenshot(page, name: str) -> None:
    """The dashboard as docs/screenshots shows it (make screenshots)."""
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.evaluate("() => window.scrollTo(0, 0)")
        box = page.locator(".tfprof-dashboard").bounding_box()
        page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=True, clip={
            "x": box["x"], "y": box["y"], "width": box["width"],
            "height": min(box["height"], 1100)})


_WARNING = "sel => (document.querySelector(sel + ' .src-warning') || {}).textContent || ''"


def _check_code(blocks: list, lines: pd.DataFrame, moved: bool) -> None:
    """Each located line's time beside its code (the file's own lines, as text); where the
    script moved since the capture, every located line alone with its recorded function (the
    block's range and time are the page's table's: they were the 8 hottest lines')."""
    located = lines[lines.no_source == ""]
    shown = {int(r[1]): r for b in blocks for r in b["rows"]}
    if moved:
        hot = located.sort_values("line")
        assert len(blocks) == 1 and blocks[0]["note"].startswith(
            "Code not shown: the file changed since the capture: ")
        assert list(shown) == hot.line.tolist()
        for row in hot.itertuples():
            assert shown[row.line][0] == _time_text(row.self_time_us, row.self_time_pct)
            assert shown[row.line][2] == f"(no code shown) recorded in {row.function}"
        return
    code = Path(lines.file.iloc[0]).read_text().splitlines()
    for row in located.itertuples():  # every line's time beside it
        assert shown[row.line][0] == _time_text(row.self_time_us, row.self_time_pct)
    for n, (time, _, text) in shown.items():
        assert text == code[n - 1]  # the file's own lines, as text
        assert time or n not in set(lines.line)


@pytest.mark.parametrize("name,moved", [("jax_h100_nocmdbuf", False),
                                        ("jax_h200_nocmdbuf", True),
                                        ("jax_h200_transformer", True)])
def test_source_tab_of_a_real_gpu_capture(name, moved, tmp_path):
    """tests/make_jax_gpu_profile.py captured on an H100 as it reads now (its code beside the
    device time), and on an H200 with command buffers off and on (kernels inside buffers
    attributed to their ops by hlo_stats) before two lines were added above its model: there
    the attention call the profile names at line 52 reads 54 now and line 52 is a layer
    norm, so the tab warns first and shows those lines' time alone, never beside moved code."""
    prof = tp.load(DATA / f"{name}.xplane.pb")
    lines = prof.source_lines
    dash = Dashboard(prof)
    assert "source" not in dash.reasons
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        _open_tab(page.page)
        statements = page.js("sel => Array.from(document.querySelectorAll(sel + "
                             "' .db-statement')).map(p => p.textContent)", PANE)
        located = lines[lines.no_source == ""]
        top = located.iloc[0]
        assert statements[0].startswith(
            f"{lines.self_time_us.sum() / 1e3:,.3f} ms of device op time; "
            f"{located.self_time_pct.sum():.1f}% of it has a location in the code: 13 lines "
            f"in 1 file. Hottest: make_jax_gpu_profile.py:{top.line} (_model.<locals>.forward)"
            f", {top.self_time_pct:.1f}%")
        assert "located by the instructions fused into its ops" in statements[1]
        warning = page.js(_WARNING, PANE)
        if moved:
            assert top.line == 52 and "dot_product_attention" in Path(top.file).read_text(
                ).splitlines()[53]  # the attention call, two lines below where it was
            assert warning.startswith(
                "\u26a0 The code changed since the capture: 13 lines with "
                f"{located.self_time_us.sum() / 1e3:,.3f} ms (100.0%) of device op time "
                "could not be matched to the code as it reads now (make_jax_gpu_profile.py: ")
            assert page.js("sel => document.querySelector(sel + ' .tfprof-source')"
                           ".firstElementChild.className", PANE).startswith("src-warning")
        else:
            assert warning == ""
        _check_code(page.js(_BLOCKS, PANE), lines, moved)
        labels = page.js("sel => Array.from(document.querySelectorAll(sel + ' .src-flame "
                         "text')).map(t => t.textContent)", PANE)
        step_line = 68 if name == "jax_h100_nocmdbuf" else 66
        assert f"_model.<locals>.step (make_jax_gpu_profile.py:{step_line})" in labels  # text
        assert page.js("sel => document.querySelectorAll(sel + ' locals').length", PANE) == 0
        module_line = 131 if name == "jax_h100_nocmdbuf" else 125
        assert statements[2] == ("The icicle leaves out the 1 outer frame every stack shares "
                                 f"(<module> (make_jax_gpu_profile.py:{module_line})).")
        table = _shown_table(page)
        assert table.line.tolist() == lines.line.tolist()
        assert table.function.tolist() == lines.function.tolist()
        pd.testing.assert_series_equal(table.self_time_us, lines.self_time_us,
                                       check_names=False, rtol=1e-9)
        if name == "jax_h200_transformer":
            _screenshot(page.page, "source_command_buffers.png")
        # a click on a row shows its line (its code, or the line alone), marked and in view
        page.page.locator(f"{PANE} .tfprof-table tr.tp-row-link").nth(2).click()
        target = page.js("sel => { const t = document.querySelector(sel + ' .src-target'); "
                         "const r = t.getBoundingClientRect(); return [t.dataset.line, "
                         "r.top >= 0 && r.bottom <= window.innerHeight]; }", PANE)
        assert target == [str(table.line.iloc[2]), True]
        assert page.console_errors == [] and page.blocked == []


def test_tensorflow_profile_says_eager_ops_carry_no_source(gpu_fixture_file, tmp_path):
    dash = Dashboard(tp.load(gpu_fixture_file))
    assert ("TensorFlow ops run outside XLA (eagerly or in a tf.function graph) carry no "
            "source location") in dash.reasons["source"]
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        _open_tab(page.page)
        reason = page.js("sel => document.querySelector(sel + ' .db-reason').textContent", PANE)
        assert reason == dash.reasons["source"]
        assert page.console_errors == []


CELL = '''import jax, jax.numpy as jnp

def forward(params, x):
    h = jnp.tanh(x @ params["w1"])
    h = h * jax.nn.sigmoid(h)
    return h @ params["w2"]

def loss(params, x, y):
    return ((forward(params, x) - y) ** 2).mean()

@jax.jit
def step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

key = jax.random.PRNGKey(0)
params = {"w1": jax.random.normal(key, (512, 512)), "w2": jax.random.normal(key, (512, 64))}
x, y = jax.random.normal(key, (1024, 512)), jax.random.normal(key, (1024, 64))
params = step(params, x, y)
jax.block_until_ready(params)
jax.profiler.start_trace(LOGDIR)
for _ in range(5):
    params = step(params, x, y)
jax.block_until_ready(params)
jax.profiler.stop_trace()'''


@pytest.fixture(scope="module")
def notebook_run(tmp_path_factory):
    """A JAX program profiled in a real notebook kernel; the report written there."""
    pytest.importorskip("jax")
    import nbformat
    from nbclient import NotebookClient

    tmp = tmp_path_factory.mktemp("source_cell")
    report = tmp / "report.html"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in [
        f"LOGDIR = {str(tmp / 'logdir')!r}",
        CELL,
        f"import tfprof_nb as tp\nprof = tp.load(LOGDIR)\nprof.to_html({str(report)!r})\n"
        "import json; print(json.dumps({'file': prof.source_lines.file.iloc[0], "
        "'lines': prof.source_lines.to_dict('list')}))"]]
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp)}}).execute()
    out = "".join(o.text for o in nb.cells[2].outputs if o.output_type == "stream")
    return json.loads(out.strip().splitlines()[-1]), report


def test_code_of_a_notebook_cell_beside_its_device_time(notebook_run):
    """XLA:CPU ops of a jitted function defined in a cell: the cell is found through
    IPython's linecache entries (the file JAX records does not exist), its lines shown with
    their device time, in the report the kernel wrote."""
    result, report = notebook_run
    lines = pd.DataFrame(result["lines"])
    located = lines[lines.no_source == ""]
    assert len(located) >= 3 and "ipykernel" in result["file"]
    assert not Path(result["file"]).exists()  # the cell's name: no file of that name
    assert set(located.function) <= {"forward", "loss", "step", "step.<locals>.<lambda>"}
    cell = CELL.splitlines()
    with OfflinePage(report) as page:
        _open_tab(page.page)
        blocks = page.js(_BLOCKS, PANE)
        assert blocks and all(b["note"].startswith("Code: notebook cell In[2]") for b in blocks)
        labels = page.js("sel => Array.from(document.querySelectorAll(sel + ' .src-flame "
                         "title')).map(t => t.textContent)", PANE)
        assert any(t.startswith(f"{located.function.iloc[0]} (In[2]:{located.line.iloc[0]})")
                   for t in labels)  # the cell by its name, as the notebook shows it
        statements = page.js("sel => Array.from(document.querySelectorAll(sel + "
                             "' .db-statement')).map(p => p.textContent)", PANE)
        assert f"Hottest: In[2]:{located.line.iloc[0]} ({located.function.iloc[0]})" \
            in statements[0]
        assert "outer frames every stack shares (from _run_module_as_main" in statements[-1]
        assert all(b["head"].startswith("In[2]:") for b in blocks)
        shown = {int(r[1]): r for b in blocks for r in b["rows"]}
        for row in located.head(8).itertuples():
            assert shown[row.line][0] == _time_text(row.self_time_us, row.self_time_pct)
        for n, (_, _, text) in shown.items():
            assert text == cell[n - 1]
        for row in located.itertuples():  # the function is the def the line is in
            defs = [t.split("def ")[1].split("(")[0] for t in cell[:row.line]
                    if t.startswith("def ")]
            assert row.function.split(".")[0] == defs[-1]
        _screenshot(page.page, "source_view.png")
        assert page.console_errors == [] and page.blocked == []


def test_tpu_capture_shows_its_locations_alone(tmp_path):
    """The TPU script's files are not on this machine: the hottest locations stand alone with
    their device time, and the block says why; 96.5 % of the time (host-offload copies) has
    no source and the view says so."""
    from tfprof_nb.widgets.source_view import SourceView

    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    lines = prof.source_lines
    with WidgetPage(SourceView(prof), tmp_path, bundle("source")) as page:
        page.page.wait_for_selector(".src-block")
        blocks = page.js(_BLOCKS, "body")
        assert len(blocks) == 1 and blocks[0]["note"].startswith(
            "Code not shown: no such file on this machine (nor a cell of this notebook).")
        located = lines[lines.no_source == ""].sort_values("line")
        assert [r[1] for r in blocks[0]["rows"]] == [str(n) for n in located.line]
        assert [r[0] for r in blocks[0]["rows"]] == [
            _time_text(us, pct) for us, pct in zip(located.self_time_us, located.self_time_pct)]
        text = page.js("() => document.body.textContent")
        assert "96.5%) of device op time has no source location" in text
        # its 315 s of op time is 4 TPUs' in a 90 s profile: the summary says so
        total_ms = lines.attrs["device_op_time_us"] / 1e3
        assert f"{total_ms:,.3f} ms of device op time, summed over 4 devices;" in text
        assert page.console_errors == []


def test_code_blocks_say_why_code_is_missing(tmp_path):
    """A cell cached by IPython (no modification time) is read from linecache; a file with
    fewer lines than the profile names says it changed; a missing file stands alone."""
    import linecache

    from tfprof_nb.widgets.source_code import code_blocks

    short = tmp_path / "short.py"
    short.write_text("a = 1\nb = 2\n")
    cell = str(tmp_path / "ipykernel_1" / "123.py")  # no such file: IPython's cache has it
    linecache.cache[cell] = (20, None, ["x = 1\n", "y = f(x)\n", "z = 3\n"], cell)
    try:
        lines = pd.DataFrame({
            "file": [cell, str(short), "/nowhere/gone.py", ""],
            "line": [2, 9, 4, -1], "function": ["f", "g", "h", ""],
            "self_time_us": [40.0, 30.0, 20.0, 10.0], "self_time_pct": [40.0, 30.0, 20.0, 10.0],
            "no_source": ["", "", "", "XLA op without source metadata"]})
        blocks = code_blocks(lines, context=1)
    finally:
        del linecache.cache[cell]
    assert [b["file"] for b in blocks] == [cell, str(short), "/nowhere/gone.py"]
    assert blocks[0]["origin"] == "notebook cell" and blocks[0]["lines"] == [
        [1, "x = 1", None, None], [2, "y = f(x)", 40.0, 40.0], [3, "z = 3", None, None]]
    assert "line 9 is past the end of the file (2 lines)" in blocks[1]["note"]
    assert blocks[2]["note"].startswith("Code not shown: no such file")
    assert blocks[2]["lines"] == [[4, "", 20.0, 20.0, "h"]]


def test_only_python_sources_are_read(tmp_path):
    """A profile may name any path: a file that is not Python source (a key, /proc) is never
    read, so never shown nor embedded in a report."""
    from tfprof_nb.widgets.source_code import read_code

    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    for path in (str(secret), "/proc/self/environ", "/etc/passwd"):
        assert read_code(path) == (None, "not a Python source file (only .py files are read)")
    script = tmp_path / "train.py"
    script.write_text("x = 1\n")
    assert read_code(str(script)) == (["x = 1"], "the file as it reads now")


def test_reason_when_no_op_has_a_location():
    """XLA ops, none located (e.g. kernels of a command buffer nothing could attribute): the
    tab says how much time and why."""
    from types import SimpleNamespace

    from tfprof_nb.analysis.xla.source_lines import Functions, source_lines_table
    from tfprof_nb.widgets.source_view import SourceView

    stats = pd.DataFrame({"program_id": [5], "resolved": [False], "source": [""],
                          "source_stack": [""], "occurrences": [3],
                          "hlo_op_name": ["command_buffer_1"], "total_self_time_us": [2e3]})
    lines = source_lines_table(stats, Functions(pd.DataFrame(
        columns=["file", "line", "column", "function"])))
    prof = SimpleNamespace(source_lines=lines, framework=SimpleNamespace(name="jax"))
    assert SourceView.reason(prof) == (
        "No device time has a location in the code: 2.000 ms (100.0%) of device op time has "
        "no source location: op not in the profile's HLO protos (1 op: command_buffer_1); "
        "without an HLO instruction there is no metadata to read.")


def test_a_row_without_a_location_shows_no_line():
    """TPU: the time of XLA ops without source metadata is one row with no file; its line is
    left blank (the -1 of prof.source_lines is no line: its no_source column says why), and
    every located row keeps its line."""
    from tfprof_nb.widgets.source_view import SourceView

    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    lines = prof.source_lines
    table = SourceView.state(prof).values["table"].frame
    unlocated = (lines.no_source != "").to_numpy()
    assert unlocated.any() and (lines.line[unlocated] == -1).all()
    assert table.line[unlocated].isna().all()
    assert (table.line[~unlocated] == lines.line[~unlocated]).all()
