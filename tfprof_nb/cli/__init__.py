"""The ``tfprof`` command: profiles from terminals, CI jobs and agents.

    tfprof summary PATH            hosts and devices, steps and their breakdown, verdicts,
                                   duty cycle, top ops, findings
    tfprof table NAME PATH         any table as CSV, JSON or Parquet (``tfprof table --list``)
    tfprof report PATH -o FILE     the offline HTML report
    tfprof export PATH --perfetto|--chrome -o FILE
    tfprof sql PATH "SELECT ..."   DuckDB over every event and table
    tfprof diff BASE NEW           tp.compare's tables and a verdict
    tfprof check PATH --max-...    performance limits: exit 1 when one fails
    tfprof what-if PATH --scale input=0.5   each step predicted with durations scaled
    tfprof capture --remote grpc://host:port --duration-ms N --logdir DIR
    tfprof mcp                     a Model Context Protocol server over stdio (the commands
                                   as tools for coding agents; needs tfprof-nb[mcp])
    tfprof agents                  a short guide for coding agents and the MCP client config

``python -m tfprof_nb`` is the same command.  Every command takes what ``tp.load`` takes
(local paths and URLs; ``--storage-option KEY=VALUE`` for their file systems), ``--json``
prints one JSON document for scripts and agents (an error past the options too:
``{"error": ..., "exit_code": ...}``), progress goes to stderr (``--progress``,
``--no-progress``; by default when stderr is a terminal); those that load one profile open a
part of each host with ``--window START_US:END_US`` and ``--lines PATTERN`` (``part_options``).
Exit codes: 0 done, 1 a check failed, 2 unusable input (a bad path, URL, file, option or
query: one clear line on stderr), 3 an internal error (a bug: one line, and the traceback
with ``--debug``), 130 interrupted.

Each command is a module of this package (``<name>_cmd``, a ``-`` in the name as ``_``) with
``add_parser(subparsers)`` and ``run(args) -> int``; ``COMMANDS`` lists them in the order
``--help`` shows.  ``_common`` holds what they share (options, loading, JSON, errors),
``summary`` the summary document and its text (the demo prints it too), ``tables`` the tables
``table`` writes, ``formats`` the writers.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

__all__ = ["COMMANDS", "main"]

COMMANDS = ("summary", "table", "report", "export", "sql", "diff", "check", "what-if",
            "capture", "mcp", "agents")


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error on one line (exit code 2), its subcommands alike."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _module(command: str):
    """The module of a command (``what-if``: ``what_if_cmd``)."""
    return importlib.import_module(f"{__name__}.{command.replace('-', '_')}_cmd")


def _parser() -> argparse.ArgumentParser:
    from .._version import __version__

    parser = _Parser(
        prog="tfprof", description="TensorFlow and JAX profiles from the terminal: "
        "summaries, tables, reports, exports, SQL, diffs, performance checks, capture.",
        epilog="Exit codes: 0 done, 1 a check failed, 2 unusable input (path, URL, file, "
        "option), 3 an internal error (a bug: --debug shows its traceback).")
    parser.add_argument("--version", action="version", version=f"tfprof_nb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        _module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``tfprof`` command with ``argv`` (default: the process's); returns its exit
    code."""
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    command = _module(args.command)
    with warnings.catch_warnings():
        if not getattr(args, "debug", False):
            warnings.showwarning = _warning_line
            _quiet_libraries()
        return _run(command, args)


# storage libraries that log their retries and failures with tracebacks (gcsfs: every retry
# of an unreachable bucket); their errors still reach the user as the command's one line
_LIBRARY_LOGGERS = ("gcsfs", "s3fs", "fsspec", "aiohttp", "aiobotocore", "botocore",
                    "google", "urllib3", "asyncio")


def _quiet_libraries() -> None:
    """Keep the storage libraries' log records off stderr (``--debug`` shows them)."""
    import logging

    for name in _LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _run(command, args) -> int:
    """``command.run(args)`` with errors turned into one line on stderr and an exit code:
    unusable input 2, an internal error 3 (``--debug`` adds the traceback), Ctrl-C 130."""
    from ..errors import CaptureError, ProfileFormatError
    from ._common import EXIT_INPUT, EXIT_INTERNAL, CliError, describe

    try:
        return command.run(args)
    except CliError as err:
        return _fail(args, str(err), err.code)
    except BrokenPipeError:  # the reader stopped reading (tfprof ... | head): not an error
        _silence_stdout()
        return 0
    except (ProfileFormatError, CaptureError, OSError, ImportError) as err:
        return _fail(args, describe(err), EXIT_INPUT)
    except KeyboardInterrupt:
        return _fail(args, "interrupted", 130)
    except Exception as err:  # a bug: said in one line, the traceback with --debug
        return _fail(args, f"internal error: {type(err).__name__}: {describe(err)} (a bug; "
                           "--debug shows the traceback)", EXIT_INTERNAL)


def _fail(args, message: str, code: int) -> int:
    """Say ``message`` as one line on stderr (and, with ``--json``, as a JSON document on
    stdout); the traceback first with ``--debug``.  Returns ``code``."""
    if getattr(args, "debug", False):
        import traceback

        traceback.print_exc()
    print(f"tfprof: error: {message}", file=sys.stderr, flush=True)
    if getattr(args, "json", False):
        from ._common import dumps

        try:
            print(dumps({"error": message, "exit_code": code}), flush=True)
        except BrokenPipeError:
            _silence_stdout()
    return code


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr: ``tfprof: warning: <message>``."""
    print(f"tfprof: warning: {' '.join(str(message).split())}", file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush of a closed pipe
    raises nothing."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
