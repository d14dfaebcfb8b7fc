"""The ``tfprof`` command: profiles from terminals, CI jobs and agents.

    tfprof summary PATH            hosts and devices, steps and their breakdown, verdicts,
                                   duty cycle, top ops, findings
    tfprof table NAME PATH         any table as CSV, JSON or Parquet (``tfprof table --list``)
    tfprof report PATH -o FILE     the offline HTML report
    tfprof export PATH --perfetto|--chrome -o FILE
    tfprof sql PATH "SELECT ..."   DuckDB over every event and table
    tfprof diff BASE NEW           tp.compare's tables and a verdict
    tfprof check PATH --max-...    performance limits: exit 1 when one fails
    tfprof capture --remote grpc://host:port --duration-ms N --logdir DIR

``python -m tfprof_nb`` is the same command.  Every command takes what ``tp.load`` takes
(local paths and URLs), ``--json`` prints one JSON document for scripts and agents, progress
goes to stderr.  Exit codes: 0 done, 1 a check failed, 2 unusable input (a bad path, URL,
file or option: one clear line on stderr).

Each command is a module of this package with ``add_parser(subparsers)`` and ``run(args) ->
int``; ``COMMANDS`` lists them in the order ``--help`` shows.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["COMMANDS", "main"]

COMMANDS = ("summary", "table", "report", "export", "sql", "diff", "check", "capture")


def _parser() -> argparse.ArgumentParser:
    from .._version import __version__

    parser = argparse.ArgumentParser(
        prog="tfprof", description="TensorFlow and JAX profiles from the terminal: "
        "summaries, tables, reports, exports, SQL, diffs, performance checks, capture.")
    parser.add_argument("--version", action="version", version=f"tfprof_nb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}_cmd").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``tfprof`` command with ``argv`` (default: the process's); returns its exit
    code."""
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    return importlib.import_module(f"{__name__}.{args.command}_cmd").run(args)
