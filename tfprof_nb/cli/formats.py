"""DataFrames out of the ``tfprof`` command: aligned text, CSV, JSON or Parquet, to stdout or a
file.

CSV is safe to open in a spreadsheet: a text cell starting with ``=``, ``+``, ``-``, ``@``, a
tab or a carriage return (a formula to Excel, LibreOffice, Google Sheets) gets a ``'`` in front
(OWASP's advice against CSV injection); numbers are written as Python writes them, so
``pandas.read_csv`` gives back exactly the same values.  ``raw=True`` writes text as it is.
JSON is a list of records, one per line (numbers as numbers, NaN as null).  Cells holding dicts
or lists become JSON text in CSV and Parquet, nested JSON in JSON.
"""

from __future__ import annotations

import json
import math
import sys

from ._common import CliError, to_jsonable

__all__ = ["FORMATS", "FORMULA_START", "check_format", "csv_safe", "format_for", "records",
           "write_frame"]

FORMATS = ("text", "csv", "json", "parquet")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as a formula
_EXTENSIONS = {".csv": "csv", ".json": "json", ".parquet": "parquet", ".pq": "parquet",
               ".txt": "text"}


def format_for(args, default: str) -> str:
    """The output format a command's options ask for: ``--format``, else ``--json``, else the
    ``-o`` file's extension, else ``default``.  ``--json`` with another ``--format`` is an
    error."""
    fmt, out = getattr(args, "format", None), getattr(args, "output", None)
    by_name = next((f for ext, f in _EXTENSIONS.items() if out and str(out).lower().endswith(ext)),
                   None)
    if getattr(args, "json", False):
        if fmt not in (None, "json"):
            raise CliError(f"--json and --format {fmt} ask for different formats")
        if by_name not in (None, "json"):
            raise CliError(f"--json writes JSON, but -o {out} names a {by_name} file: drop "
                           "--json or name the file .json")
        return "json"
    if fmt:
        return fmt
    return by_name or default


def _nested_as_text(df):
    """``df`` with dicts, lists and tuples in object columns as JSON text."""
    out = df
    for col in df.columns:
        if df[col].dtype == object:
            nested = df[col].map(lambda v: isinstance(v, (dict, list, tuple)))
            if nested.any():
                out = out.copy() if out is df else out
                out[col] = df[col].where(~nested, df[col][nested].map(
                    lambda v: json.dumps(to_jsonable(v), ensure_ascii=False)))
    return out


def csv_safe(df):
    """``df`` with a ``'`` before every text cell that starts like a formula (see the module's
    docstring); numbers and other cells unchanged."""
    import pandas as pd

    out = df
    for col in df.columns:
        dtype = df[col].dtype
        if not (dtype == object or isinstance(dtype, pd.CategoricalDtype)
                or pd.api.types.is_string_dtype(dtype)):
            continue
        values = df[col].astype(object)
        formula = values.map(lambda v: isinstance(v, str) and v.startswith(FORMULA_START))
        if formula.any():
            out = out.copy() if out is df else out
            out[col] = values.where(~formula, "'" + values[formula].astype(str))
    return out


def records(df) -> list[dict]:
    """``df``'s rows as dicts of plain JSON values, column by column (fast for wide and long
    tables): NaN and infinities None, numpy numbers Python numbers."""
    import numpy as np

    columns = {}
    for col in df.columns:
        values, dtype = df[col].tolist(), df[col].dtype
        numpy = isinstance(dtype, np.dtype)  # (pandas' nullable types hold pd.NA)
        if numpy and dtype.kind == "f":
            values = [v if math.isfinite(v) else None for v in values]
        elif not (numpy and dtype.kind in "iub"):
            values = [to_jsonable(v) for v in values]
        columns[str(col)] = values
    names = list(columns)
    return [dict(zip(names, row)) for row in zip(*columns.values())]


def write_frame(df, fmt: str, output=None, raw: bool = False) -> None:
    """Write ``df`` in ``fmt`` (one of :data:`FORMATS`) to the file ``output``, or stdout
    without one (Parquet only to a file or a pipe, never a terminal)."""
    if fmt == "parquet":
        return _write_parquet(df, output)
    if fmt == "csv":
        flat = _nested_as_text(df)
        text = (flat if raw else csv_safe(flat)).to_csv(index=False)
    elif fmt == "json":
        text = "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False, allow_nan=False)
                                  for r in records(df)) + ("\n]\n" if len(df) else "]\n")
    elif fmt == "text":
        text = (df.to_string(index=False, max_colwidth=80) if len(df.columns)
                else "(no columns)") + "\n"
    else:
        raise CliError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(output, "w", encoding="utf-8", newline="") as f:
            f.write(text)


def check_format(fmt: str, output=None) -> None:
    """Fail before any work when ``fmt`` cannot be written: Parquet without pyarrow, or to a
    terminal."""
    if fmt != "parquet":
        return
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise CliError('Parquet needs pyarrow: pip install "tfprof-nb[parquet]" (or write '
                       '--format csv or json)') from None
    if output is None and sys.stdout.isatty():
        raise CliError("Parquet is binary: write it to a file with -o FILE (or a pipe)")


def _write_parquet(df, output) -> None:
    check_format("parquet", output)
    frame = _nested_as_text(df)
    if output is None:
        frame.to_parquet(sys.stdout.buffer, engine="pyarrow", index=False)
        sys.stdout.buffer.flush()
    else:
        frame.to_parquet(output, engine="pyarrow", index=False)
