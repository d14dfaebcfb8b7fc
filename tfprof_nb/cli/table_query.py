"""Choosing rows of a table for the MCP server's ``table`` and ``counters`` tools: simple
conditions (``COLUMN OP VALUE``), a DuckDB WHERE clause run by ``prof.sql`` over the same
table, the columns to keep and the sort.  Values are the table's own (nothing is computed)."""

from __future__ import annotations

import re

import pandas as pd

from ._common import CliError

__all__ = ["OPERATORS", "match_columns", "parse_condition", "select_rows"]

OPERATORS = ("!=", ">=", "<=", "=", ">", "<", "~")
_CONDITION = re.compile(r"\s*([^!<>=~]+?)\s*(!=|>=|<=|==|=|>|<|~)\s*(.*?)\s*")


def parse_condition(text: str) -> tuple[str, str, str]:
    """``"total_self_time_us>100"`` as ``("total_self_time_us", ">", "100")``; CliError for
    text that is not ``COLUMN OP VALUE``."""
    match = _CONDITION.fullmatch(text)
    if not match:
        raise CliError(f"filter {text!r}: expected COLUMN OP VALUE with OP one of "
                       + " ".join(OPERATORS))
    column, op, value = match.groups()
    return column, "=" if op == "==" else op, value


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame.columns:
        raise CliError(f"no column {name!r}: the columns are "
                       + ", ".join(map(str, frame.columns)))
    return frame[name]


def _mask(values: pd.Series, op: str, text: str) -> pd.Series:
    """Which ``values`` meet ``op text``: numbers compared as numbers, anything else as
    text (``~``: contains, any case)."""
    if op == "~":
        return values.astype(str).str.contains(text, case=False, regex=False, na=False)
    if pd.api.types.is_bool_dtype(values.dtype):
        value = text.lower() in ("true", "1", "yes")
    elif pd.api.types.is_numeric_dtype(values.dtype):
        try:
            value = float(text)
        except ValueError:
            raise CliError(f"{values.name} holds numbers: {text!r} is not one") from None
    else:
        values, value = values.astype(str), text
    if op in ("=", "!="):
        equal = values == value
        return equal if op == "=" else ~equal
    compare = {">": values.gt, ">=": values.ge, "<": values.lt, "<=": values.le}[op]
    return compare(value).fillna(False).astype(bool)


def match_columns(frame: pd.DataFrame, wanted: dict) -> pd.DataFrame:
    """The rows of ``frame`` whose column equals each value of ``wanted`` ({column:
    text})."""
    for name, value in wanted.items():
        frame = frame[_mask(_column(frame, name), "=", str(value)).to_numpy()]
    return frame


def select_rows(prof, name: str, frame: pd.DataFrame, filters=(), where=None, sort=None,
                ascending: bool = False, columns=None) -> pd.DataFrame:
    """The rows of table ``name`` (``frame``) meeting every ``filters`` condition and the
    DuckDB clause ``where`` (``prof.sql`` over the same table: its columns, without those
    holding lists or dicts), sorted by ``sort`` (missing values last), with ``columns``
    only."""
    if where:
        from .sql_cmd import query_frame

        frame = query_frame(prof, f"SELECT * FROM {name} WHERE {where}")
    for text in filters or ():
        column, op, value = parse_condition(text)
        frame = frame[_mask(_column(frame, column), op, value).to_numpy()]
    if sort:
        _column(frame, sort)
        frame = frame.sort_values(sort, ascending=ascending, kind="stable",
                                  na_position="last")
    if columns:
        frame = frame[[_column(frame, c).name for c in columns]]
    return frame
