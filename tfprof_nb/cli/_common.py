"""What every ``tfprof`` command shares: its common options, loading a profile, JSON output,
errors as one line and exit codes.

A command module (``<name>_cmd.py``: ``add_parser(subparsers)`` and ``run(args) -> int``) uses
these helpers like this::

    from ._common import add_command, emit, load_profile

    def add_parser(sub):
        p = add_command(sub, "thing", "one line for --help", inputs=True)
        p.add_argument("paths", nargs="+", metavar="PATH")

    def run(args) -> int:
        prof = load_profile(args, args.paths)        # progress on stderr, errors -> CliError
        emit(args, {"events": prof.n_events}, lambda doc: f"{doc['events']} events")
        return EXIT_OK

* :func:`add_command` adds a subcommand with ``--json`` and ``--debug`` (every command) and,
  with ``inputs=True``, ``--storage-option KEY=VALUE`` (repeatable) and
  ``--progress/--no-progress``; with ``part=True`` also ``--window START_US:END_US`` and
  ``--lines PATTERN`` (:mod:`.part_options`: ``tp.load``'s ``window=`` and ``lines=``).
* :func:`load_profile` is ``tp.load`` with those options; a path that cannot be used raises
  :class:`CliError`, which :func:`tfprof_nb.cli.main` prints as one line, exit code 2.
* :func:`emit` prints one JSON document (``--json``; :func:`to_jsonable`: numbers stay numbers,
  NaN and infinities become null) or the text a function makes of it.
* Exit codes: :data:`EXIT_OK` 0, :data:`EXIT_FAILED` 1 (a check failed), :data:`EXIT_INPUT` 2
  (unusable input: path, URL, file, option), :data:`EXIT_INTERNAL` 3 (a bug; ``--debug`` shows
  the traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import math
import os
import sys
from pathlib import PurePath

__all__ = ["CliError", "EXIT_FAILED", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_OK", "add_command",
           "describe", "dumps", "emit", "load_profile", "note", "parse_storage_options",
           "progress_wanted", "source_arg", "to_jsonable"]

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class CliError(Exception):
    """Input the command cannot use (a path, URL, file, option or query): ``main`` prints
    ``tfprof: error: <message>`` on one line and exits with ``code`` (2 by default)."""

    def __init__(self, message: str, code: int = EXIT_INPUT):
        super().__init__(message)
        self.code = code


def add_command(sub, name: str, help_text: str, inputs: bool = True,
                description: str | None = None, part: bool = False) -> argparse.ArgumentParser:
    """A subcommand parser with ``--json`` and ``--debug``; with ``inputs``, also the options
    of :func:`load_profile` (``--storage-option``, ``--progress``; with ``part``,
    ``--window`` and ``--lines``: a part of each host)."""
    p = sub.add_parser(name, help=help_text, description=description or help_text)
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (numbers as numbers, NaN as null)")
    p.add_argument("--debug", action="store_true",
                   help="show the traceback of an error")
    if inputs:
        p.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                       dest="storage_options",
                       help="an fsspec storage option for URLs (repeatable; VALUE is read as "
                            "JSON when it parses: true, 30, {\"a\": 1}, else as text)")
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show loading progress on stderr (default: when stderr is a "
                            "terminal)")
    if part:
        from .part_options import add_part_options

        add_part_options(p)
    return p


def parse_storage_options(items: list[str] | None) -> dict | None:
    """``["key=VALUE", ...]`` as a dict (VALUE parsed as JSON when it parses, else text);
    None when there are none.  Raises CliError for an item without ``=``."""
    out: dict = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--storage-option {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out or None


def progress_wanted(args) -> bool:
    """Whether to show progress: ``--progress``/``--no-progress``, else when stderr is a
    terminal.  Progress only ever goes to stderr."""
    flag = getattr(args, "progress", None)
    return sys.stderr.isatty() if flag is None else bool(flag)


def source_arg(paths):
    """What ``tp.load`` takes for the command line's ``paths``: one path or URL as itself,
    several as a list."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    return paths[0] if len(paths) == 1 else paths


def load_profile(args, paths):
    """``tp.load(paths)`` with the command's ``--storage-option``, ``--progress`` and, where
    it has them, ``--window`` and ``--lines``.  A missing path, an unreadable file, a URL
    that cannot be read, a missing package for it, ``--lines`` matching no line or a profile
    too big for memory raises :class:`CliError` saying so (exit code 2)."""
    from ..errors import ProfileFormatError
    from ..loading import load
    from .part_options import part_error, part_of_hosts

    options = parse_storage_options(getattr(args, "storage_options", None))
    part = part_of_hosts(args)
    try:
        return load(source_arg(paths), storage_options=options,
                    progress=progress_wanted(args), **part)
    except (OSError, ProfileFormatError, ValueError, ImportError, MemoryError) as err:
        raise CliError(part_error(describe(err), part)) from err


def describe(err: BaseException) -> str:
    """An exception as one line: its message on one line (its kind when it has none)."""
    return " ".join(str(err).split()) or type(err).__name__


def to_jsonable(value):
    """``value`` as plain JSON types: DataFrames as lists of records, Series and arrays as
    lists, numpy scalars as Python numbers, NaN and infinities as None, timestamps as ISO
    text, dataclasses as dicts, paths as text, bytes as hex."""
    import numpy as np
    import pandas as pd

    if isinstance(value, float) or isinstance(value, np.floating):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, pd.DataFrame):
        return [to_jsonable(r) for r in value.to_dict("records")]
    if isinstance(value, (pd.Series, pd.Index, np.ndarray, list, tuple, set)):
        return [to_jsonable(v) for v in (sorted(value) if isinstance(value, set) else value)]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return _jsonable_other(value)


def _jsonable_other(value):
    """:func:`to_jsonable` for the rarer types (timestamps, dataclasses, paths, bytes,
    missing values); anything else as its text."""
    import pandas as pd

    if isinstance(value, (pd.Timestamp, _dt.datetime, _dt.date)):
        return None if pd.isna(value) else value.isoformat()
    if isinstance(value, pd.Timedelta):
        return None if pd.isna(value) else value.total_seconds()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable({f.name: getattr(value, f.name)
                            for f in dataclasses.fields(value)})
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, PurePath):
        return str(value)
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


def dumps(document) -> str:
    """``document`` as JSON text (:func:`to_jsonable` first; strict JSON: no NaN)."""
    return json.dumps(to_jsonable(document), ensure_ascii=False, allow_nan=False, indent=1)


def emit(args, document, text=None) -> None:
    """Print ``document`` as one JSON document with ``--json``, else ``text(document)`` (a
    function) or, without one, the JSON anyway."""
    if getattr(args, "json", False) or text is None:
        print(dumps(document))
    else:
        print(text(document))


def note(message: str) -> None:
    """A line for the person at the terminal, on stderr (stdout stays the output)."""
    print(f"tfprof: {message}", file=sys.stderr, flush=True)
