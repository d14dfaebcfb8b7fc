"""``tfprof summary PATH``: hosts and devices, steps and their step-time breakdown, the
input-bound verdict, the devices' duty cycle, the top ops and the findings with their
evidence (``--json``: the same as one document; see :mod:`tfprof_nb.cli.summary`)."""

from __future__ import annotations

from ._common import EXIT_OK, CliError, add_command, emit, load_profile

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = add_command(sub, "summary", "hosts and devices, steps and their breakdown, verdicts, "
                    "duty cycle, top ops, findings", part=True)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a logdir (its newest run), a run directory, .xplane.pb files or URLs")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="how many host and device ops to list (default 10)")


def run(args) -> int:
    if args.top < 0:
        raise CliError(f"--top {args.top}: expected 0 or more")
    from .summary import summarise, summary_text

    prof = load_profile(args, args.paths)
    emit(args, summarise(prof, top=args.top), summary_text)
    return EXIT_OK
