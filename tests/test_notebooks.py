"""Every notebook in notebooks/ runs top to bottom in a real kernel without errors."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks")
                   .glob("[0-9][0-9]_*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    except CellExecutionError as exc:  # say which cell and why, without the ANSI noise
        pytest.fail(f"{path.name}: {exc.ename}: {exc.evalue}\n{exc.traceback[-2000:]}")
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    # every tfprof_nb view shown keeps an offline copy (exports, reopened notebooks): its
    # place in the widget output, its data in the loader output right after it
    pairs = [(o, c.outputs[i + 1] if i + 1 < len(c.outputs) else None)
             for c in nb.cells if c.cell_type == "code" for i, o in enumerate(c.outputs)
             if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
             and 'class="tfprof-offline"' in o.data.get("text/html", "")]
    assert pairs
    for view, loader in pairs:
        model_id = view.data["application/vnd.jupyter.widget-view+json"]["model_id"]
        assert loader is not None and loader.metadata.get("tfprof_nb") == "offline-loader"
        assert f'class="tfprof-payload" data-model-id="{model_id}"' in loader.data["text/html"]
    if path.name == "01_quickstart.ipynb":  # the %%tfprof cell profiled batches 3..12
        assert any("profiled steps: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]" in o.get("text", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)
