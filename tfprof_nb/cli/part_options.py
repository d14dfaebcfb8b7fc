"""``--window START_US:END_US`` and ``--lines PATTERN``: a part of each host, as
``tp.load(window=..., lines=...)`` opens it (a host bigger than memory).

* ``--window 2000000:2500000``: the events overlapping that time, in µs on the profile's
  axis (``prof.events.start_us``); either end may be left out (``:2500000``, ``2000000:``);
  a negative start after ``=`` (``--window=-5:100``), as argparse reads it.
* ``--lines PATTERN``: a line name or glob, matched against a line's name, its display name
  or ``"<plane>/<line>"``; repeatable, or a comma list (``[,]`` matches a comma itself).

A value that is not one of these is a usage error naming the option (exit code 2), as are a
``--lines`` matching no line and a profile too big for memory, whose message names these
options (:func:`part_error`).
"""

from __future__ import annotations

import argparse

__all__ = ["add_part_options", "parse_window", "part_error", "part_of_hosts"]


def parse_window(text: str) -> tuple[float | None, float | None]:
    """``"START_US:END_US"`` as ``(start_us, end_us)`` (an empty end: None, open); raises
    argparse.ArgumentTypeError (argparse names the option) for anything else."""
    lo, sep, hi = text.partition(":")
    if not sep or ":" in hi:
        raise argparse.ArgumentTypeError(f"expected START_US:END_US (µs, either end may be "
                                         f"left out), not {text!r}")
    try:
        ends = [None if not t.strip() else float(t) for t in (lo, hi)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"START_US and END_US must be numbers (µs), not "
                                         f"{text!r}") from None
    if any(e is not None and e != e for e in ends):  # NaN
        raise argparse.ArgumentTypeError(f"START_US and END_US must be numbers, not {text!r}")
    if None not in ends and ends[0] > ends[1]:
        raise argparse.ArgumentTypeError(f"{text!r} starts after it ends")
    return ends[0], ends[1]


def _line_patterns(text: str) -> list[str]:
    patterns = [p.strip() for p in text.split(",")]
    if not all(patterns):
        raise argparse.ArgumentTypeError(f"an empty line name or glob in {text!r}")
    return patterns


def add_part_options(p: argparse.ArgumentParser) -> None:
    """Add ``--window`` and ``--lines`` to the command parser ``p``."""
    p.add_argument("--window", type=parse_window, default=None, metavar="START_US:END_US",
                   help="only the events overlapping this time, in µs on the profile's axis "
                        "(prof.events.start_us; either end may be left out; a negative start: "
                        "--window=-5:100): a part of a host bigger than memory (tp.load's "
                        "window=)")
    p.add_argument("--lines", type=_line_patterns, action="append", default=None,
                   metavar="PATTERN",
                   help="only the events of these lines: a name or glob of a line, its "
                        "display name or PLANE/LINE (\"/device:GPU:0/*\"); repeatable or a "
                        "comma list (tp.load's lines=)")


def part_of_hosts(args) -> dict:
    """``tp.load``'s ``window=`` and ``lines=`` from the command's options (only those given)."""
    out = {}
    if getattr(args, "window", None) is not None:
        out["window"] = args.window
    if getattr(args, "lines", None) is not None:
        out["lines"] = [p for group in args.lines for p in group]
    return out


def part_error(message: str, part: dict) -> str:
    """A load error's ``message`` with tp.load's option names as the command line's."""
    said, sep, rest = message.partition(" matches no line")
    if said.startswith("lines=") and sep and "lines" in part:
        return f"--lines {', '.join(part['lines'])}: matches no line{rest}"
    message = message.replace("the window=/lines= chosen", "the --window/--lines chosen")
    message = message.replace("choose a narrower window= or fewer lines=",
                              "choose a narrower --window or fewer --lines")
    if "tp.load(path, window=" in message:
        message += ("; on the command line: --window START_US:END_US and/or --lines PATTERN")
    return message
