"""``tfprof export PATH --perfetto|--chrome -o FILE``: every event as a trace for Perfetto's
UI or chrome://tracing (Chrome's JSON gzipped when FILE ends in ``.gz``).  Without either
flag the format follows FILE's extension (``.json``, ``.json.gz``: Chrome; ``.pftrace``,
``.perfetto-trace``, ``.pb``: Perfetto)."""

from __future__ import annotations

import os

from ._common import EXIT_OK, CliError, add_command, emit, load_profile

__all__ = ["add_parser", "export_trace", "run", "trace_kind"]

_BY_EXTENSION = {".json": "chrome", ".json.gz": "chrome", ".pftrace": "perfetto",
                 ".perfetto-trace": "perfetto", ".pb": "perfetto"}


def add_parser(sub) -> None:
    p = add_command(sub, "export", "every event as a Perfetto or Chrome trace file",
                    part=True)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a logdir (its newest run), a run directory, .xplane.pb files or URLs")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--perfetto", dest="kind", action="store_const", const="perfetto",
                      help="a Perfetto protobuf trace (ui.perfetto.dev)")
    kind.add_argument("--chrome", dest="kind", action="store_const", const="chrome",
                      help="Chrome Trace Event Format JSON (chrome://tracing, Perfetto)")
    p.add_argument("-o", "--output", metavar="FILE", required=True,
                   help="the trace file to write (.gz: gzipped Chrome JSON)")


def trace_kind(output, kind: str | None = None) -> str:
    """The trace format: ``kind`` ("perfetto" or "chrome") when given, else by ``output``'s
    extension; CliError when neither says."""
    if kind:
        if kind not in ("perfetto", "chrome"):
            raise CliError(f"format {kind!r}: choose perfetto or chrome")
        return kind
    name = str(output).lower()
    for ext, by_name in _BY_EXTENSION.items():
        if name.endswith(ext):
            return by_name
    raise CliError(f"-o {output}: say --perfetto or --chrome (or name the file .json, "
                   ".json.gz or .pftrace)")


def run(args) -> int:
    kind = trace_kind(args.output, args.kind)
    prof = load_profile(args, args.paths)
    emit(args, export_trace(prof, args.output, kind),
         lambda d: f"{d['format']} trace: {d['trace']} ({d['events']:,} events, "
                   f"{d['bytes'] / 1e6:.1f} MB)")
    return EXIT_OK


def export_trace(prof, output, kind: str) -> dict:
    """Write every event of ``prof`` to ``output`` as a ``kind`` trace ("perfetto" or
    "chrome"); returns the profile's location, the absolute path, format, size and event
    count."""
    from .summary import run_location

    path = prof.to_perfetto(output) if kind == "perfetto" else prof.to_chrome_trace(output)
    path = os.path.abspath(path)
    return {"profile": run_location(prof.source), "trace": path, "format": kind,
            "bytes": os.path.getsize(path), "events": int(prof.n_events)}
