"""``tfprof capture --remote grpc://host:port[,...] --duration-ms N --logdir DIR``: trace
running workers through their profiler servers (``tp.capture_remote``; each worker called
``tp.start_server(port)``, ``tf.profiler.experimental.server.start`` or
``jax.profiler.start_server``) and say where the run was written.  Needs TensorFlow here."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from ._common import EXIT_OK, CliError, add_command, emit, note, progress_wanted

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = add_command(sub, "capture", "trace running workers over gRPC into a logdir",
                    inputs=False)
    p.add_argument("--remote", required=True, metavar="ADDRESSES",
                   help="the workers' profiler servers: grpc://host:port or host:port, "
                        "comma-separated for several")
    p.add_argument("--duration-ms", type=int, default=2000, metavar="N",
                   help="how long to trace (default 2000)")
    p.add_argument("--logdir", required=True, metavar="DIR",
                   help="where the run goes (DIR/plugins/profile/<run>/); a URL uploads it")
    p.add_argument("--host-tracer-level", type=int, default=2, choices=(0, 1, 2, 3))
    p.add_argument("--python-tracer-level", type=int, default=0, choices=(0, 1))
    p.add_argument("--device-tracer-level", type=int, default=1, choices=(0, 1))
    p.add_argument("--delay-ms", type=int, default=0, metavar="N",
                   help="wait this long before tracing (default 0)")
    p.add_argument("--timeout-s", type=float, default=None, metavar="S",
                   help="give up after S seconds (default: duration + delay + 60 s)")
    p.add_argument("--summary", action="store_true",
                   help="then print the run's summary (as tfprof summary does)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="say on stderr what is being captured (default: when stderr is a "
                        "terminal)")


def run(args) -> int:
    from ..capturing.remote import capture_remote, parse_addresses
    from .summary import summarise

    try:
        addresses = parse_addresses(args.remote)
    except ValueError as err:
        raise CliError(f"--remote: {err}") from err
    if args.duration_ms < 1 or args.delay_ms < 0:
        raise CliError("--duration-ms must be 1 or more and --delay-ms 0 or more")
    if progress_wanted(args):
        note(f"capturing {', '.join(addresses)} for {args.duration_ms} ms")
    with _stdout_on_stderr():
        prof = capture_remote(addresses, duration_ms=args.duration_ms, logdir=args.logdir,
                              host_tracer_level=args.host_tracer_level,
                              python_tracer_level=args.python_tracer_level,
                              device_tracer_level=args.device_tracer_level,
                              delay_ms=args.delay_ms, timeout_s=args.timeout_s)
    files = list(prof.source)
    doc = {"run": _run_dir(files), "files": files, "hosts": list(prof.hosts),
           "events": int(prof.n_events)}
    if args.summary:
        doc["summary"] = summarise(prof)
    emit(args, doc, _text)
    return EXIT_OK


def _text(doc: dict) -> str:
    n = len(doc["hosts"])
    head = f"captured {n} host{'s' * (n != 1)}, {doc['events']:,} events: {doc['run']}"
    if "summary" in doc:
        from .summary import summary_text

        return head + "\n\n" + summary_text(doc["summary"])
    return head + f"\nnext: tfprof summary {doc['run']}"


@contextlib.contextmanager
def _stdout_on_stderr():
    """Send what is written to file descriptor 1 meanwhile to stderr: TensorFlow's C++
    client prints "Starting to trace ..." there, and stdout holds only the command's
    output."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _run_dir(files: list[str]) -> str:
    """The run directory holding the captured files (their shared directory)."""
    import posixpath

    from .summary import run_location

    where = run_location(files)
    return posixpath.dirname(where) if len(files) == 1 else where
