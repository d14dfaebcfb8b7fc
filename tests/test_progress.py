"""tfprof_nb._progress outside a notebook, and in a saved notebook (run in a real kernel,
reopened in JupyterLab); the stop button during a load is in tests/analysis/test_interrupt.py."""

import subprocess
import sys

import pytest


def test_plain_process_is_no_notebook_and_never_imports_ipython():
    code = ("import sys; from tfprof_nb._progress import in_notebook, WorkProgress; "
            "print(in_notebook(), WorkProgress().enabled, 'IPython' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "False"]


def test_ipython_shell_without_a_kernel_is_no_notebook():
    code = ("import sys; from IPython.testing.globalipapp import start_ipython; "
            "start_ipython(); from tfprof_nb._progress import in_notebook; "
            "print('IPython' in sys.modules, in_notebook())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-2:] == ["True", "False"]


# ---- in a notebook: one output updated in place, nothing left that needs a live kernel -------
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@pytest.fixture(scope="module")
def saved_notebook(tmp_path_factory, cpu_file):
    """A notebook run in a real kernel (nbclient) that loads and analyses a profile, captures
    JAX steps and shows a progress line fed markup, saved as a user would save it."""
    import nbformat
    from nbclient import NotebookClient

    root = tmp_path_factory.mktemp("progress_nb")
    cells = [
        "import tfprof_nb as tp, tfprof_nb._progress as p\np.DELAY_S = 0",
        f"prof = tp.load({str(cpu_file)!r}, progress=True).analyse()",
        "import jax\nf = jax.jit(lambda x: x * 2)\n"
        "cap = tp.capture(f, [jax.numpy.ones(4)] * 6, steps=2, warmup=1, backend='jax')",
        "shown = p.WorkProgress(True, delay=0, rate=1e9)\n"
        "shown.update(0.5, 'loading <b>vm</b>: decoding')\nshown.finish('loaded <i>1</i> host')",
    ]
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(root)}}).execute()
    path = root / "progress.ipynb"
    nbformat.write(nb, str(path))
    return path


def _outputs(path):
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    return nb, [o for cell in nb.cells for o in cell.outputs]


def _progress_lines(outputs) -> list[str]:
    return [o.data["text/plain"] for o in outputs if o.output_type == "display_data"
            and o.data.get("text/plain", "").startswith("[tfprof_nb]")]


def test_saved_notebook_refers_to_no_widget_model_it_lacks(saved_notebook):
    nb, outputs = _outputs(saved_notebook)
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    referenced = {o.data[WIDGET_VIEW]["model_id"] for o in outputs
                  if WIDGET_VIEW in o.get("data", {})}
    assert referenced <= set(state)
    # and none at all: JupyterLab saves no widget state unless asked, so a reopened notebook
    # would show "model not found" for any widget view left in an output
    assert referenced == set()
    assert [o for o in outputs if o.output_type == "error"] == []


def test_progress_outputs_keep_their_last_state(saved_notebook):
    _, outputs = _outputs(saved_notebook)
    lines = _progress_lines(outputs)
    # each display replaced in place: one output per progress line, holding its end
    assert any(t.startswith("[tfprof_nb] loaded 1 host (") for t in lines), lines
    assert any(t.startswith("[tfprof_nb] analysed ") for t in lines), lines
    assert any("profiled 2 steps with JAX's profiler" in t for t in lines), lines
    assert "[tfprof_nb] loaded <i>1</i> host (" in "".join(lines)
    html = "".join(o.data["text/html"] for o in outputs if "text/html" in o.get("data", {}))
    assert "&lt;b&gt;" not in html and "<i>" not in html and "&lt;i&gt;1&lt;/i&gt;" in html
    assert 'value="1000" max="1000"' in html  # finished bars are full


def test_reopened_notebook_shows_no_widget_error(saved_notebook):
    """The saved notebook opened in JupyterLab (Chromium), no cell run: the progress lines
    show their last text, and no "model not found"."""
    from .widgets.jupyter import jupyter_server, open_notebook

    root = saved_notebook.parent
    with jupyter_server(root, "lab") as url, \
            open_notebook(url, "lab", [], name=saved_notebook.name) as page:
        page.wait_for_selector(".jp-OutputArea-output", timeout=120000)
        # every cell's progress lines shown, the last cell's included
        page.wait_for_function(
            """() => ['analysed', 'loaded 1 host', 'profiled 2 steps',
                      'loaded <i>1</i> host'].every(s => document.querySelector(
                      '.jp-Notebook')?.innerText.includes(s))""", timeout=60000)
        text = page.evaluate("() => document.querySelector('.jp-Notebook').innerText")
        # what draws each output: a widget view would be drawn by the widget renderer,
        # which says "Loading widget..." at once and has no data-mime-type, and only later
        # "model not found"; every output drawn by a mime renderer never shows that
        mimes = page.evaluate("""() => Array.from(document.querySelectorAll(
          '.jp-Notebook .jp-OutputArea-output')).map(o => o.dataset.mimeType || null)""")
    assert mimes and None not in mimes and WIDGET_VIEW not in mimes, mimes
    assert "model not found" not in text and "Error displaying widget" not in text
    assert "Loading widget" not in text
    assert "loaded 1 host" in text and "profiled 2 steps" in text
