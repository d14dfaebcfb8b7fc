"""Text columns of many rows and few distinct values (the critical path's names, resources,
categories) built from the distinct strings and a code per row: with pandas' arrow-backed
``str`` dtype, the arrow buffers gathered once in C instead of a Python object per row that
pandas then converts (seconds for the millions of segments of a 1 GB host); the same column as
from the objects.  And back: :func:`text_codes`, a column's codes and distinct values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._native.kernels import take_text
from .distinct_codes import distinct_codes

__all__ = ["text_column", "text_codes"]

_TEXT = pd.Series(["x"]).dtype  # pandas' dtype for text: "str" (pandas 3), else object


def text_column(table, codes: np.ndarray):
    """``table[codes]`` as a column of pandas' text dtype (``table``: the distinct strings,
    ``codes``: an index into it per row); its arrow buffers gathered by ``take_text`` into
    numpy arrays (arrow's own take writes fresh allocator pages: seconds of page faults for
    the hundreds of MB of a large host's path, where numpy's large arrays take huge pages)."""
    table = np.asarray(table, object)
    codes = np.asarray(codes, np.int64)
    if getattr(_TEXT, "storage", None) != "pyarrow" or not len(codes):
        return table[codes]
    import pyarrow as pa

    if len(table) and not all(isinstance(t, str) for t in table):
        return table[codes]
    if len(table) > 4096:  # (only the strings the rows take are encoded)
        used, codes = distinct_codes(codes, len(table))
        table = table[used]
    encoded = [t.encode() for t in table.tolist()]
    t_off = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=t_off[1:])
    offsets, data = take_text(t_off, np.frombuffer(b"".join(encoded), np.uint8), codes)
    taken = pa.LargeStringArray.from_buffers(len(codes), pa.py_buffer(offsets),
                                             pa.py_buffer(data))
    return taken.to_pandas(types_mapper=lambda _: _TEXT).array


def text_codes(column: pd.Series, runs: bool = False) -> tuple[np.ndarray, pd.Index]:
    """(int64 code of each row among the column's distinct values, those values sorted, as an
    Index of the column's dtype): ``pd.factorize(column, sort=True)``, for an arrow-backed
    column by one arrow dictionary encoding (with ``runs``, of the first row of each run of
    equal rows only: a host column).  A missing value raises."""
    array = getattr(column.array, "_pa_array", None)
    if array is None or not len(column):
        codes, values = pd.factorize(column, sort=True)
        if (codes < 0).any():
            raise ValueError(f"rows without a {column.name}")
        return codes.astype(np.int64, copy=False), values
    import pyarrow as pa
    import pyarrow.compute as pc

    if array.null_count:
        raise ValueError(f"rows without a {column.name}")
    starts = None
    if runs and len(array) > 1:
        change = pc.not_equal(array.slice(1), array.slice(0, len(array) - 1))
        starts = np.flatnonzero(np.concatenate(([True], change.to_numpy())))
        array = array.take(pa.array(starts))
    encoded = pc.dictionary_encode(array)  # (one dictionary for every chunk)
    distinct = np.asarray(encoded.chunk(encoded.num_chunks - 1).dictionary.to_pylist(), object)
    order = np.argsort(distinct, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    codes = rank[np.concatenate([c.indices.to_numpy() for c in encoded.chunks])]
    if starts is not None:
        codes = np.repeat(codes, np.diff(np.append(starts, len(column))))
    return codes, pd.Index(distinct[order], dtype=column.dtype)
