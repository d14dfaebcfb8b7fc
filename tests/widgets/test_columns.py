"""Typed columns: what a table or tile becomes on the wire, column by column, read back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tfprof_nb.offline.columns import decode_columns, encode_columns, encode_frame
from tfprof_nb.widgets.traits import FigureTrait, TableData, TableTrait


def _round_trip(df: pd.DataFrame) -> tuple[dict, dict]:
    wire = encode_frame(df)
    return {f["name"]: f["dtype"] for f in wire["schema"]}, decode_columns(wire)


def test_each_kind_of_column_keeps_its_values():
    df = pd.DataFrame({
        "small_int": np.array([1, -5, 2**31 - 1], np.int64),
        "unsigned": np.array([0, 2**32 - 1, 7], np.uint64),
        "big_int": np.array([2**40, -1, 3], np.int64),
        "nullable": pd.array([1, None, 3], dtype="Int64"),
        "x_us": [1.5, np.inf, np.nan],
        "single": np.array([0.25, 1, 2], np.float32),
        "flag": [True, False, True],
        "name": ["MatMul", None, "MatMul"],
        "kind": pd.Categorical(["a", "b", None]),
        "mixed": [1, "two", 3.5],
    })
    dtypes, cols = _round_trip(df)
    assert dtypes == {"small_int": "int32", "unsigned": "uint32", "big_int": "float64",
                      "nullable": "float64", "x_us": "float64", "single": "float32",
                      "flag": "bool", "name": "string", "kind": "string", "mixed": "string"}
    assert cols["small_int"].tolist() == [1, -5, 2**31 - 1]
    assert cols["unsigned"].tolist() == [0, 2**32 - 1, 7]
    assert cols["big_int"].tolist() == [2**40, -1, 3]
    assert cols["nullable"][0] == 1 and np.isnan(cols["nullable"][1])
    assert cols["x_us"][0] == 1.5 and np.isnan(cols["x_us"][1:]).all()  # inf: missing
    assert cols["single"].tolist() == [0.25, 1, 2]
    assert cols["flag"].tolist() == [True, False, True]
    assert cols["name"] == ["MatMul", None, "MatMul"]
    assert cols["kind"] == ["a", "b", None]
    assert cols["mixed"] == ["1", "two", "3.5"]


def test_integers_beyond_doubles_go_as_their_exact_text():
    tpu_id = 12190760917235803885  # a TPU program id: 64 bits, not a float64
    assert float(tpu_id) != tpu_id
    df = pd.DataFrame({"program_id": np.array([tpu_id, 5], np.uint64),
                       "negative": np.array([-(2**53) - 1, 1], np.int64),
                       "edge": np.array([2**53, -(2**53)], np.int64)})
    dtypes, cols = _round_trip(df)
    assert dtypes == {"program_id": "string", "negative": "string", "edge": "float64"}
    assert cols["program_id"] == [str(tpu_id), "5"]
    assert cols["negative"] == [str(-(2**53) - 1), "1"]
    assert cols["edge"].tolist() == [2**53, -(2**53)]  # still exact: numbers


def test_strings_go_once_and_codes_are_int32():
    df = pd.DataFrame({"op": ["a", "b", "a", "a"] * 1000})
    wire = encode_frame(df)
    (field,), (buf,) = wire["schema"], wire["buffers"]
    assert field["categories"] == ["a", "b"] and buf.nbytes == 4 * 4000


def test_empty_tables_and_arrays():
    dtypes, cols = _round_trip(pd.DataFrame({"a_us": pd.Series([], dtype=float),
                                             "n": pd.Series([], dtype=np.int64),
                                             "s": pd.Series([], dtype=object)}))
    assert dtypes == {"a_us": "float64", "n": "float64", "s": "string"}
    assert all(len(c) == 0 for c in cols.values())
    assert encode_frame(pd.DataFrame())["schema"] == []


def test_arrays_keep_their_dtype_and_refuse_others():
    wire = encode_columns({"start": np.array([1.0, 2.0]), "name": np.array([3], np.uint32)})
    assert [f["dtype"] for f in wire["schema"]] == ["float64", "uint32"]
    with pytest.raises(TypeError, match="column 'when'.*datetime64"):
        encode_columns({"when": np.array(["2024-01-01"], "datetime64[D]")})


def test_table_trait_takes_a_frame_or_table_data():
    import traitlets

    class Holder(traitlets.HasTraits):
        table = TableTrait()
        figure = FigureTrait()

    h = Holder()
    h.table = pd.DataFrame({"total_time_us": [1.0]})
    assert isinstance(h.table, TableData) and h.table.title == ""
    wire = h.table.replace(title="t").wire()
    assert wire["title"] == "t" and wire["rows"] == 1
    assert wire["schema"][0]["label"] == "total time (us)"
    with pytest.raises(traitlets.TraitError):
        h.table = {"columns": []}
    import plotly.graph_objects as go

    h.figure = go.Figure(go.Bar(x=[1], y=[2]))
    assert h.figure["data"][0]["type"] == "bar"
