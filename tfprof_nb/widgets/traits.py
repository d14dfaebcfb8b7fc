"""Trait types that know how they go to the browser: tables as typed columns, charts as
plotly figure JSON.  A view declares ``table = TableTrait()`` and assigns a DataFrame; the
trait sends it (``tfprof_nb.offline.columns``), the page's one decoder reads it."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import pandas as pd
import traitlets

from ..offline.columns import encode_frame

__all__ = ["FigureTrait", "RecordTrait", "TableData", "TableTrait", "column_label",
           "figure_json", "record_wire", "rates_as_shown"]

_UNITS = {"us": "us", "ms": "ms", "bytes": "bytes", "pct": "%", "s": "s"}


# rate and ratio units named by the column's last words ("flop_rate_flops_per_s")
_RATES = (("_flops_per_s", "FLOP/s"), ("_bytes_per_s", "bytes/s"),
          ("_flops_per_byte", "FLOP/byte"))


def column_label(name: str) -> str:
    """A column name as a header: words, the unit in parentheses ("total_time_us" ->
    "total time (us)", "memory_bw_bytes_per_s" -> "memory bw (bytes/s)")."""
    for suffix, unit_text in _RATES:
        if str(name).endswith(suffix) and len(str(name)) > len(suffix):
            return f"{str(name)[:-len(suffix)].replace('_', ' ')} ({unit_text})"
    head, _, unit = str(name).rpartition("_")
    if not head and unit in _UNITS:  # a bare unit ("pct") still says what it is
        return f"share ({_UNITS[unit]})" if unit == "pct" else f"value ({_UNITS[unit]})"
    if head and unit in _UNITS:
        return f"{head.replace('_', ' ')} ({_UNITS[unit]})"
    return str(name).replace("_", " ")


# rates shown as XProf's tables show them: GFLOP/s and GiB/s (the DataFrames keep per second)
_SHOWN_RATES = (("_flops_per_s", 1e9, "GFLOP/s"), ("_bytes_per_s", 2.0**30, "GiB/s"))


def rates_as_shown(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """``frame`` with its FLOP/s columns in GFLOP/s and its bytes/s columns in GiB/s (as
    XProf's tables give them), and the headers that say so (``TableData.labels``)."""
    out, labels = frame, {}
    for column in frame.columns:
        for suffix, scale, unit in _SHOWN_RATES:
            if str(column).endswith(suffix):
                out = out.copy() if out is frame else out
                out[column] = pd.to_numeric(frame[column], errors="coerce") / scale
                labels[column] = f"{str(column)[:-len(suffix)].replace('_', ' ')} ({unit})"
    return out, labels


@dataclass(frozen=True, eq=False)
class TableData:
    """A table to show: a DataFrame (its index left out), a title, the column the filter box
    searches (default: the first text column) and the rows per page; ``labels``: headers of
    columns whose names :func:`column_label` would not say well; ``missing``: per column,
    what an empty cell means (its tooltip)."""

    frame: pd.DataFrame
    title: str = ""
    filter_column: str | None = None
    page_size: int = 100
    labels: dict = dataclasses.field(default_factory=dict)
    missing: dict = dataclasses.field(default_factory=dict)

    def replace(self, **changes) -> TableData:
        """A copy with ``changes`` (e.g. ``title=...``)."""
        return dataclasses.replace(self, **changes)

    def wire(self) -> dict:
        """The table as the browser receives it: typed columns with their labels."""
        wire = encode_frame(self.frame)
        for field in wire["schema"]:
            field["label"] = self.labels.get(field["name"]) or column_label(field["name"])
            if field["name"] in self.missing:
                field["missing_title"] = self.missing[field["name"]]
        return {"title": self.title, "filter_column": self.filter_column,
                "page_size": self.page_size, **wire}


class TableTrait(traitlets.TraitType):
    """A synced table: assign a :class:`TableData` or a DataFrame; it goes to the browser as
    typed columns with its schema (one buffer per column, no per-cell work)."""

    info_text = "a TableData or a pandas DataFrame"

    def __init__(self, **kwargs):
        super().__init__(default_value=TableData(pd.DataFrame()), **kwargs)
        self.tag(sync=True, to_json=lambda value, _widget: value.wire())

    def validate(self, obj, value):
        if isinstance(value, TableData):
            return value
        if isinstance(value, pd.DataFrame):
            return TableData(value)
        self.error(obj, value)


def record_wire(record: dict) -> dict:
    """A dict as :class:`RecordTrait` sends it: its tables typed, the rest as is."""
    return {k: encode_frame(v) if isinstance(v, pd.DataFrame) else v for k, v in record.items()}


class RecordTrait(traitlets.Dict):
    """A synced dict of JSON values and tables: each DataFrame value goes to the browser as
    typed columns (``{schema, buffers, rows}``), the rest as JSON."""

    info_text = "a dict of JSON values and DataFrames"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tag(sync=True, to_json=lambda value, _widget: record_wire(value))


def figure_json(fig) -> dict:
    """A plotly figure as the JSON the views draw (numeric arrays as base64 typed arrays)."""
    return json.loads(fig.to_json())


class FigureTrait(traitlets.Dict):
    """A synced plotly figure: assign a ``plotly.graph_objects.Figure`` (or its JSON); the
    trait holds the figure's JSON, drawn by the page's bundled plotly.js.  ``{}``: none."""

    info_text = "a plotly Figure or its JSON"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tag(sync=True)

    def validate(self, obj, value):
        if hasattr(value, "to_plotly_json"):
            value = figure_json(value)
        return super().validate(obj, value)
