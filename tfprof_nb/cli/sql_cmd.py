"""``tfprof sql PATH "SELECT ..."``: DuckDB over every event, stat and table of a profile
(``prof.sql``; ``tfprof table --list`` names the tables), printed as aligned text or written
as CSV, JSON or Parquet.  The query ``-`` is read from stdin."""

from __future__ import annotations

import sys

from ._common import EXIT_OK, CliError, add_command, describe, load_profile, note
from .formats import FORMATS, check_format, format_for, write_frame

__all__ = ["add_parser", "query_frame", "run"]


def add_parser(sub) -> None:
    p = add_command(sub, "sql", "DuckDB SQL over every event, stat and table (needs duckdb)",
                    part=True)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a logdir (its newest run), a run directory, .xplane.pb files or URLs")
    p.add_argument("query", metavar="QUERY",
                   help='the query, e.g. "SELECT name, count(*) FROM events GROUP BY 1" '
                        "(- reads it from stdin)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default), csv, json (a list of records) or parquet; default: "
                        "by -o's extension, else text")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--raw", action="store_true",
                   help="CSV: write text cells as they are (no ' before formula-like cells)")


def run(args) -> int:
    query = sys.stdin.read() if args.query == "-" else args.query
    if not query.strip():
        raise CliError("the query is empty")
    fmt = format_for(args, "text")
    check_format(fmt, args.output)
    prof = load_profile(args, args.paths)
    frame = query_frame(prof, query)
    write_frame(frame, fmt, args.output, raw=args.raw)
    if args.output:
        note(f"wrote {len(frame):,} rows to {args.output} ({fmt})")
    return EXIT_OK


def query_frame(prof, query: str):
    """``prof.sql(query)``; a query DuckDB refuses, or a table that cannot be queried here,
    raises CliError with DuckDB's words."""
    try:
        return prof.sql(query)
    except ImportError as err:
        raise CliError(describe(err)) from err
    except Exception as err:
        duckdb = sys.modules.get("duckdb")
        if duckdb is not None and isinstance(err, duckdb.Error):
            raise CliError(f"the query failed: {describe(err)}") from err
        if isinstance(err, ValueError):  # an events table of a profile on Dask workers
            raise CliError(describe(err)) from err
        raise
