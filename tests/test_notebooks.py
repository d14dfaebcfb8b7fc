"""Every notebook in notebooks/ runs top to bottom in a real kernel without errors."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    if path.name == "01_quickstart.ipynb":  # the %%tfprof cell profiled batches 3..12
        assert any("profiled steps: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]" in o.get("text", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)
