"""Text columns of many rows and few distinct values (the critical path's names, resources,
categories) built from the distinct strings and a code per row: with pandas' arrow-backed
``str`` dtype, one arrow ``take`` instead of a Python object per row that pandas then converts
(seconds for the millions of segments of a 1 GB host); the same column as from the objects."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["text_column"]

_TEXT = pd.Series(["x"]).dtype  # pandas' dtype for text: "str" (pandas 3), else object


def text_column(table, codes: np.ndarray):
    """``table[codes]`` as a column of pandas' text dtype (``table``: the distinct strings,
    ``codes``: an index into it per row)."""
    table = np.asarray(table, object)
    codes = np.asarray(codes, np.int64)
    if getattr(_TEXT, "storage", None) != "pyarrow" or not len(codes):
        return table[codes]
    import pyarrow as pa

    if len(table) and not all(isinstance(t, str) for t in table):
        return table[codes]
    taken = pa.array(table.tolist(), pa.large_string()).take(pa.array(codes))
    return taken.to_pandas(types_mapper=lambda _: _TEXT).array
