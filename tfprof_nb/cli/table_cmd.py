"""``tfprof table NAME PATH``: any table of a profile as CSV (the default), JSON, Parquet or
aligned text, to stdout or ``-o FILE``; ``tfprof table --list`` names them all (the tables
``prof.sql`` queries, :mod:`tfprof_nb.cli.tables`)."""

from __future__ import annotations

from ._common import EXIT_OK, CliError, add_command, emit, load_profile, note
from .formats import FORMATS, check_format, format_for, write_frame

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = add_command(sub, "table", "any table as CSV, JSON, Parquet or text (tfprof table "
                    "--list names them)", part=True)
    p.add_argument("name", nargs="?", metavar="NAME", help="the table (see --list)")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="a logdir (its newest run), a run directory, .xplane.pb files or URLs")
    p.add_argument("--list", action="store_true", help="list the tables, one line each")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="csv (default), json (a list of records), parquet (needs pyarrow) or "
                        "text; default: by -o's extension, else csv")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--wide", action="store_true",
                   help="counters: one column per counter (its unit in the header) and one "
                        "row per host, device and time, as nvidia-smi --format=csv writes")
    p.add_argument("--raw", action="store_true",
                   help="CSV: write text cells as they are (no ' before a cell starting with "
                        "=, +, -, @, tab or CR, which spreadsheets run as formulas)")


def run(args) -> int:
    from .tables import table, table_names

    if args.list:
        return _list(args)
    if not args.name or not args.paths:
        raise CliError("give a table and a profile: tfprof table NAME PATH (tfprof table "
                       "--list names the tables)")
    if args.name not in table_names():
        raise CliError(f"unknown table {args.name!r}: choose from "
                       + ", ".join(table_names()))
    if args.wide and args.name != "counters":
        raise CliError("--wide lays out the counters table only")
    fmt = format_for(args, "csv")
    check_format(fmt, args.output)
    prof = load_profile(args, args.paths)
    frame = table(prof, args.name)
    if args.wide:
        from ..analysis.hardware.counters import wide_counters

        frame = wide_counters(frame)
    write_frame(frame, fmt, args.output, raw=args.raw)
    if args.output:
        note(f"wrote {len(frame):,} rows of {args.name} to {args.output} ({fmt})")
    return EXIT_OK


def _list(args) -> int:
    from .tables import table_list

    if args.name or args.paths:
        raise CliError("--list takes no table or path")
    rows = table_list()
    width = max(len(r["name"]) for r in rows)
    emit(args, rows,
         lambda rows: "\n".join(f"{r['name']:<{width}}  {r['description']}" for r in rows))
    return EXIT_OK
