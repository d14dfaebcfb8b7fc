"""The Source view: device time by the user's code (``prof.source_lines``,
``prof.source_stacks``): what the numbers cover, the Python stacks as an icicle, the hottest
locations with their code and device time beside its lines (notebook cells, readable files,
else the location alone), and every location in a table."""

from __future__ import annotations

import pandas as pd
import traitlets

from ..analysis.source_lines import stack_tree
from ._view import View, ViewState
from .source_code import code_blocks
from .traits import TableData, TableTrait

__all__ = ["SourceView"]

_TABLE_COLUMNS = ["rank", "file", "line", "function", "self_time_us", "self_time_pct",
                  "ops", "occurrences", "top_hlo_op", "no_source"]


def _located(lines: pd.DataFrame) -> pd.DataFrame:
    return lines[lines.no_source == ""]


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _summary(lines: pd.DataFrame) -> str:
    """What the located rows cover, and the hottest location."""
    total_ms = lines.attrs.get("device_op_time_us", 0.0) / 1e3
    located = _located(lines)
    top = located.iloc[0]
    where = f"{top.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{top.line}"
    files = located.file.nunique()
    return (f"{total_ms:,.3f} ms of device op time; {located.self_time_pct.sum():.1f}% of it "
            f"has a location in the code: {_count(len(located), 'line')} in "
            f"{_count(files, 'file')}. Hottest: {where}"
            + (f" ({top.function})" if top.function else "")
            + f", {top.self_time_pct:.1f}% ({top.self_time_us / 1e3:,.3f} ms).")


def _flame_rows(stacks: pd.DataFrame) -> pd.DataFrame:
    """The stack tree as the icicle reads it (the root left out: it is the whole width)."""
    tree = stack_tree(stacks)
    tree = tree[tree.depth > 0]
    parent = tree.parent.where(tree.parent != "0", None)
    return pd.DataFrame({"scope": tree.node.astype(str), "parent": parent,
                         "name": tree.name.astype(str), "value": tree.time_us.astype(float),
                         "time_pct": tree.time_pct.astype(float),
                         "self_time_us": tree.self_time_us.astype(float)})


class SourceView(View):
    """Device time by the user's code: where in the Python code the device ops come from
    (the HLO metadata's source lines and stacks), with the code of the hottest locations."""

    tab, title, bundle, position = "source", "Source", "source", 55
    statements = traitlets.List().tag(sync=True)
    flame = TableTrait()  # the stack tree: scope, parent, name, value (us) and more
    code = traitlets.List().tag(sync=True)  # code_blocks of the hottest locations
    table = TableTrait()

    @classmethod
    def reason(cls, prof) -> str | None:
        lines = prof.source_lines
        if len(_located(lines)):
            return None
        why = "; ".join(lines.attrs.get("reasons", [])) or "no XLA ops with a source location"
        eager = ("TensorFlow eager ops carry no source location (TensorFlow records none for "
                 "ops it runs outside XLA). " if prof.framework.name == "tensorflow" else "")
        return (f"{eager}No device time with a location in the code: {why}. Source lines "
                "come from XLA programs' metadata (JAX, tf.function(jit_compile=True), "
                "Keras 3).")

    @classmethod
    def state(cls, prof) -> ViewState:
        lines = prof.source_lines
        statements = [_summary(lines)] + [
            f"Note: {r}." for r in lines.attrs.get("reasons", [])]
        return ViewState({
            "statements": statements, "flame": _flame_rows(prof.source_stacks),
            "code": code_blocks(lines, captured=prof.stop_time),
            "table": TableData(lines[_TABLE_COLUMNS], "Device time by source line", "file")})
