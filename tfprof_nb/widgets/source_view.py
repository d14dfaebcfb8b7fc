"""The Source view: device time by the user's code (``prof.source_lines``,
``prof.source_stacks``): what the numbers cover, the Python stacks as an icicle, the hottest
locations with their code and device time beside its lines (notebook cells, readable files,
else the location alone), and every location in a table."""

from __future__ import annotations

import pandas as pd
import traitlets

from .._words import counted
from ..analysis.xla.source_lines import frame_label, stack_tree
from ..plot.source_figures import summed_devices
from ._view import View, ViewState
from .graph_targets import line_targets
from .hlo_graph_view import GraphRequests
from .source_code import cell_label, code_blocks
from .source_match import moved_files
from .traits import TableData, TableTrait

__all__ = ["SourceView"]

_TABLE_COLUMNS = ["rank", "file", "line", "function", "self_time_us", "self_time_pct",
                  "ops", "occurrences", "top_hlo_op", "no_source"]


def _shown(lines: pd.DataFrame) -> pd.DataFrame:
    """The table's columns; a row with no location leaves its line blank (its -1 is no
    line: ``no_source`` says why)."""
    table = lines[_TABLE_COLUMNS].copy()
    table["line"] = table.line.where(lines.no_source == "")
    return table


def _located(lines: pd.DataFrame) -> pd.DataFrame:
    return lines[lines.no_source == ""]


def _cells(files) -> dict:
    """{file: "In[3]"} of the files that are cells of this kernel's notebook."""
    return {f: label for f in set(files) if f and (label := cell_label(f))}


def _summary(lines: pd.DataFrame, cells: dict, devices: int = 1) -> str:
    """What the located rows cover, and the hottest location (a cell by its name);
    ``devices``: how many devices' op time it sums (said where more than one: the sum runs
    past the profile's length, as the flame's title says)."""
    total_ms = lines.attrs.get("device_op_time_us", 0.0) / 1e3
    summed = f", summed over {devices} devices" if devices > 1 else ""
    located = _located(lines)
    top = located.iloc[0]
    where = frame_label(cells.get(top.file, top.file), int(top.line), "")
    files = located.file.nunique()
    return (f"{total_ms:,.3f} ms of device op time{summed}; "
            f"{located.self_time_pct.sum():.1f}% of it "
            f"has a location in the code: {counted(len(located), 'line')} in "
            f"{counted(files, 'file')}. Hottest: {where}"
            + (f" ({top.function})" if top.function else "")
            + f", {top.self_time_pct:.1f}% ({top.self_time_us / 1e3:,.3f} ms).")


def _moved_warning(lines: pd.DataFrame, moved: dict) -> list[str]:
    """The warning on the files whose code no longer matches the profile: how many lines and
    how much time the view does not place beside code (none moved: no warning)."""
    if not moved:
        return []
    rows = _located(lines)[_located(lines).file.isin(moved)]
    names = "; ".join(f"{f.replace(chr(92), '/').rsplit('/', 1)[-1]}: {m.why(1)}"
                      for f, m in moved.items())
    return [f"The code changed since the capture: {counted(len(rows), 'line')} with "
            f"{rows.self_time_us.sum() / 1e3:,.3f} ms ({rows.self_time_pct.sum():.1f}%) of "
            f"device op time could not be matched to the code as it reads now ({names}). "
            "Their time is shown without code, at the file:line and function the profile "
            "recorded; capture again to see it beside the code."]


def _left_out(tree: pd.DataFrame) -> list[str]:
    """A sentence on the outer frames the icicle leaves out (none: no sentence)."""
    frames = tree.attrs.get("left_out", [])
    if not frames:
        return []
    ends = f"from {frames[0]} to {frames[-1]}" if len(frames) > 1 else frames[0]
    return [f"The icicle leaves out the {counted(len(frames), 'outer frame')} every stack "
            f"shares ({ends})."]


def _flame_rows(tree: pd.DataFrame, cells: dict) -> pd.DataFrame:
    """The stack tree as the icicle reads it (the root left out: it is the whole width; a
    notebook's cells by their names)."""
    tree = tree[tree.depth > 0]
    parent = tree.parent.where(tree.parent != "0", None)
    names = [frame_label(cells[f], int(li), fn) if f in cells else n for f, li, fn, n in
             tree[["file", "line", "function", "name"]].itertuples(index=False)]
    return pd.DataFrame({"scope": tree.node.astype(str), "parent": parent,
                         "name": names, "value": tree.time_us.astype(float),
                         "time_pct": tree.time_pct.astype(float),
                         "self_time_us": tree.self_time_us.astype(float)})


class SourceView(View):
    """Device time by the user's code: where in the Python code the device ops come from
    (the HLO metadata's source lines and stacks), with the code of the hottest locations."""

    tab, title, bundle, position = "source", "Source", "source", 55
    statements = traitlets.List().tag(sync=True)
    warnings = traitlets.List().tag(sync=True)  # shown first, as warnings (moved code)
    flame = TableTrait()  # the stack tree: scope, parent, name, value (us) and more
    code = traitlets.List().tag(sync=True)  # code_blocks of the hottest locations
    table = TableTrait()
    graph_targets = traitlets.Dict().tag(sync=True)  # {"file:line": its HLO ops}

    @classmethod
    def reason(cls, prof) -> str | None:
        lines = prof.source_lines
        if len(_located(lines)):
            return None
        eager = ("TensorFlow ops run outside XLA (eagerly or in a tf.function graph) carry "
                 "no source location: TensorFlow records none for them. "
                 if prof.framework.name == "tensorflow" else "")
        if lines.empty:
            return (f"{eager}No XLA ops in this profile: device time by source line comes "
                    "from XLA programs' metadata (JAX, tf.function(jit_compile=True), Keras 3).")
        return (f"{eager}No device time has a location in the code: "
                + "; ".join(lines.attrs.get("reasons", [])) + ".")

    @classmethod
    def state(cls, prof) -> ViewState:
        lines = prof.source_lines
        tree = stack_tree(prof.source_stacks, all_frames=False)
        cells = _cells(tree.file)
        moved = moved_files(lines, prof.source_stacks, prof.stop_time)
        statements = [_summary(lines, cells, summed_devices(prof.duty_cycle))] + [
            f"Note: {r}." for r in lines.attrs.get("reasons", [])] + _left_out(tree)
        return ViewState({
            "statements": statements, "warnings": _moved_warning(lines, moved),
            "flame": _flame_rows(tree, cells),
            "code": code_blocks(lines, captured=prof.stop_time, moved=moved),
            "table": TableData(_shown(lines), "Device time by source line", "file"),
            "graph_targets": line_targets(prof)}, GraphRequests(prof))
