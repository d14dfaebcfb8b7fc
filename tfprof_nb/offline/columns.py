"""Typed columns: tables and arrays as the browser receives them, each with its dtype.

Every table or set of arrays a widget sends (a DataFrame in a table view, a trace viewer's
tile, a search answer, the event details an offline page embeds) goes as

    {"schema": [{"name": ..., "dtype": ..., "categories": [...]}, ...],
     "buffers": [one buffer per column]}

``dtype`` is one of :data:`DTYPES`: the buffer holds the column's values little-endian in that
type (``bool``: one byte each; ``string``: int32 codes into ``categories``, -1 for missing).
Missing numbers are NaN.  ``js/src/columns.ts`` is the one decoder; nothing guesses a layout.
No value is touched in Python: columns are converted with numpy and pandas, whole.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = ["DTYPES", "decode_columns", "encode_array", "encode_columns", "encode_frame"]

DTYPES = ("float64", "float32", "int32", "uint32", "int16", "uint16", "int8", "uint8", "bool",
          "string")
_NUMPY = {name: np.dtype(name).newbyteorder("<") for name in DTYPES[:-2]}
_EXACT = 2**53  # integers up to this magnitude are exact in a float64 (a JavaScript number)


def _buffer(values: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(values)).cast("B")


def encode_array(values: np.ndarray, name: str = "") -> tuple[dict, memoryview]:
    """(schema field, buffer) of a 1-D numpy array of one of the numeric :data:`DTYPES`."""
    values = np.asarray(values)
    if values.dtype == np.bool_:
        return {"name": name, "dtype": "bool"}, _buffer(values.view(np.uint8))
    dtype = values.dtype.name
    if dtype not in _NUMPY:
        raise TypeError(f"column {name!r}: {dtype} is not a wire dtype ({', '.join(DTYPES)})")
    return {"name": name, "dtype": dtype}, _buffer(values.astype(_NUMPY[dtype], copy=False))


def _strings(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """int32 codes (-1: missing) and the distinct values as text."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy()
        categories = series.cat.categories
    else:
        codes, categories = pd.factorize(series, use_na_sentinel=True)
    return codes.astype(np.int32, copy=False), [str(c) for c in categories]


def _numbers(series: pd.Series) -> np.ndarray:
    """A numeric column in the smallest exact wire dtype: int32 or uint32 when every value
    fits, else float64 (float32 stays float32); missing and infinite values become NaN."""
    dtype = series.dtype
    if dtype.kind in "iu" and len(series) and not series.hasnans:
        values = series.to_numpy(dtype=np.int64 if dtype.kind == "i" else np.uint64)
        lo, hi = values.min(), values.max()
        if lo >= -2**31 and hi < 2**31:
            return values.astype(np.int32)
        if lo >= 0 and hi < 2**32:
            return values.astype(np.uint32)
    wide = np.float32 if dtype == np.float32 else np.float64
    values = series.to_numpy(dtype=wide, na_value=np.nan)
    return np.where(np.isfinite(values), values, np.nan).astype(wide, copy=False)


def _beyond_doubles(series: pd.Series) -> bool:
    """Whether an integer column holds values a float64 (a JavaScript number) cannot hold
    exactly (64-bit ids: TPU program ids, fingerprints)."""
    if series.dtype.kind not in "iu" or not len(series):
        return False
    values = series.to_numpy()
    return bool(values.max() > _EXACT or (series.dtype.kind == "i" and values.min() < -_EXACT))


def encode_series(series: pd.Series, name: str) -> tuple[dict, memoryview]:
    """(schema field, buffer) of one DataFrame column; integers beyond 2**53 go as their
    decimal text (a float64 would change their last digits)."""
    kind = series.dtype
    if kind == np.bool_:
        return encode_array(series.to_numpy(), name)
    if _beyond_doubles(series):
        series = series.astype(str)
    elif pd.api.types.is_numeric_dtype(kind) and not isinstance(kind, pd.CategoricalDtype):
        return encode_array(_numbers(series), name)
    codes, categories = _strings(series)
    field, buf = encode_array(codes, name)
    return {**field, "dtype": "string", "categories": categories}, buf


def encode_columns(columns: Mapping[str, np.ndarray | pd.Series]) -> dict:
    """``{"schema", "buffers"}`` of named columns (numpy arrays keep their dtype; Series go
    through :func:`encode_series`).  Columns may differ in length."""
    schema, buffers = [], []
    for name, values in columns.items():
        if isinstance(values, pd.Series):
            field, buf = encode_series(values, str(name))
        else:
            field, buf = encode_array(values, str(name))
        schema.append(field)
        buffers.append(buf)
    return {"schema": schema, "buffers": buffers}


def encode_frame(df: pd.DataFrame) -> dict:
    """``{"schema", "buffers", "rows"}`` of a DataFrame's columns (its index left out)."""
    wire = encode_columns({str(c): df.iloc[:, i] for i, c in enumerate(df.columns)})
    return {**wire, "rows": len(df)}


def decode_columns(wire: Mapping, buffers=None) -> dict[str, np.ndarray | list]:
    """The columns of ``wire`` (buffers inside it, or given apart as a message carries them):
    numpy arrays, and lists of str or None for strings."""
    buffers = wire["buffers"] if buffers is None else buffers
    out: dict[str, np.ndarray | list] = {}
    for field, buf in zip(wire["schema"], buffers):
        dtype = field["dtype"]
        if dtype == "bool":
            out[field["name"]] = np.frombuffer(buf, np.uint8).astype(bool)
        elif dtype == "string":
            codes = np.frombuffer(buf, "<i4")
            table = np.array(list(field["categories"]) + [None], dtype=object)
            out[field["name"]] = table[codes].tolist()
        else:
            out[field["name"]] = np.frombuffer(buf, _NUMPY[dtype])
    return out
