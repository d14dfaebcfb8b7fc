"""xprof (the reference converters) as a test oracle."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pandas as pd


def run_tool(xplane: Path | list, tool: str):
    """Run xprof's ``tool`` on a copy of ``xplane`` (xprof writes cache files beside it), or
    of each of a list of them (the hosts of one run, in that order)."""
    from xprof.convert.raw_to_tool_data import xspace_to_tool_data

    with tempfile.TemporaryDirectory() as tmp:
        copies = []
        for path in (xplane if isinstance(xplane, list) else [xplane]):
            copies.append(str(Path(tmp) / Path(path).name))
            shutil.copy(path, copies[-1])
        raw, _ = xspace_to_tool_data(copies, tool, {"use_saved_result": False})
    return json.loads(raw)


def gviz_frame(table: dict) -> pd.DataFrame:
    """A Google-Charts DataTable as a DataFrame (column ids as names)."""
    rows = [[c.get("v") if c else None for c in r["c"]] for r in table.get("rows", [])]
    return pd.DataFrame(rows, columns=[c["id"] for c in table["cols"]])


def step_table(xplane: Path | list) -> tuple[pd.DataFrame, dict]:
    tables = run_tool(xplane, "input_pipeline_analyzer")
    return gviz_frame(tables[1]), tables[1].get("p", {})
