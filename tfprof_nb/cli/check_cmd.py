"""``tfprof check PATH --max-...``: performance limits for CI (``tp.check``).

    tfprof check logs/ --max-step-ms 120 --max-input-pct 10 --min-duty-cycle-pct 60
    tfprof check new/ --baseline old/ --max-regression-pct 5 --json

Prints one row per limit (measured value, PASS/FAIL/UNKNOWN, evidence) or, with ``--json``,
``tp.check(...).to_dict()``.  Exit code 0 when every limit passes, 1 when one fails (or its
measure is missing from the profile, unless ``--allow-missing``), 2 on unusable input (a bad
path, URL or file, no limit given, a limit that is not a number).
"""

from __future__ import annotations

import math
import re

from ._common import EXIT_FAILED, EXIT_OK, CliError, add_command, emit, load_profile

__all__ = ["LIMITS", "add_parser", "check_limits", "parse_bytes", "run", "run_check"]

# (option, tp.check keyword, help): the limits with a number (the MCP server's too)
LIMITS = [
    ("--max-step-ms", "max_step_ms", "the step time (its --step-statistic, default the "
     "median) may not exceed MS milliseconds"),
    ("--max-input-pct", "max_input_pct", "the share of step time waiting for input"),
    ("--min-duty-cycle-pct", "min_duty_cycle_pct", "the devices' busy time over their active "
     "spans must reach PCT"),
    ("--max-idle-pct", "max_idle_pct", "the devices' idle share of their step time"),
    ("--max-host-bound-pct", "max_host_bound_pct", "the GPUs' share of step time idle "
     "waiting for late launches from the host"),
    ("--max-kernel-launch-pct", "max_kernel_launch_pct", "the step breakdown's kernel-launch "
     "share"),
]
_UNITS = {"": 1, "b": 1, "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30,
          "gib": 2**30, "t": 2**40, "tib": 2**40, "kb": 10**3, "mb": 10**6, "gb": 10**9,
          "tb": 10**12}


def parse_bytes(text: str) -> float:
    """A byte count: a number with an optional unit (``8GiB``, ``8G``: 2**30 each; ``8GB``:
    10**9 each; ``8e9``).  Raises ValueError for anything else."""
    match = re.fullmatch(r"\s*([0-9.]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*", text.lower())
    if not match or match.group(2) not in _UNITS:
        raise ValueError(f"{text!r} is not a byte count (e.g. 8GiB, 500MB, 1e9)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _bytes(text: str) -> float:
    try:
        return parse_bytes(text)
    except ValueError as err:
        import argparse

        raise argparse.ArgumentTypeError(str(err)) from None


def add_parser(sub) -> None:
    p = add_command(sub, "check", "performance limits: exit 1 when one fails",
                    description="Check a profile against performance limits (tp.check): "
                    "exit 0 when all pass, 1 when one fails, 2 on unusable input.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a logdir (its newest run), a run directory, .xplane.pb files or URLs")
    for option, _, text in LIMITS:
        p.add_argument(option, type=float, metavar="MS" if option.endswith("ms") else "PCT",
                       help=text)
    p.add_argument("--step-statistic", default="median",
                   choices=["median", "mean", "p90", "p95", "p99", "max"],
                   help="the statistic of step time --max-step-ms limits (default median)")
    p.add_argument("--max-memory-peak", type=_bytes, metavar="BYTES",
                   help="the largest allocator's peak memory in use (8GiB, 500MB, 1e9)")
    p.add_argument("--baseline", metavar="OLD", help="a baseline profile (what PATH takes) "
                   "to compare the median step time with; needs --max-regression-pct")
    p.add_argument("--max-regression-pct", type=float, metavar="PCT",
                   help="the slowdown of the median step time from --baseline, beyond the "
                   "noise band of both profiles' step times")
    p.add_argument("--allow-missing", action="store_true",
                   help="a limit whose measure the profile lacks (no steps, no device) does "
                   "not fail the check (it is still listed as unknown)")


def _limits(args) -> dict:
    """The ``tp.check`` keywords the command line gives (see :func:`check_limits`)."""
    limits = {key: getattr(args, option[2:].replace("-", "_")) for option, key, _ in LIMITS}
    limits["max_memory_peak_bytes"] = args.max_memory_peak
    limits["max_regression_pct"] = args.max_regression_pct
    return check_limits(limits, args.baseline is not None)


def check_limits(limits: dict, baseline: bool) -> dict:
    """The ``tp.check`` keywords of ``limits`` that are set (None: not set), checked:
    CliError when none is set, one is not a finite number of 0 or more, or a baseline comes
    without its limit (or the reverse)."""
    limits = {k: v for k, v in limits.items() if v is not None}
    for key, value in limits.items():
        option = "--" + key.replace("_", "-").replace("-bytes", "")
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or (value < 0 and key != "max_regression_pct"):
            shown = f"{value:g}" if number else repr(value)
            raise CliError(f"{option} {shown}: expected a finite number, 0 or more")
    if baseline != ("max_regression_pct" in limits):
        raise CliError("--baseline and --max-regression-pct go together")
    if not limits:
        raise CliError("no limit given: pass at least one of "
                       + ", ".join(o for o, _, _ in LIMITS)
                       + ", --max-memory-peak, --baseline with --max-regression-pct")
    return limits


def run(args) -> int:
    limits = _limits(args)
    prof = load_profile(args, args.paths)
    base = load_profile(args, args.baseline) if args.baseline is not None else None
    result = run_check(prof, base, limits, args.step_statistic, args.allow_missing,
                       " ".join(args.paths), args.baseline)
    emit(args, result.to_dict(), lambda doc: repr(result))
    return EXIT_OK if result.ok else EXIT_FAILED


def run_check(prof, base, limits: dict, step_statistic: str = "median",
              allow_missing: bool = False, profile: str = "", baseline: str | None = None):
    """``tp.check(prof, ...)`` with ``limits`` (from :func:`check_limits`), its result
    naming ``profile`` and ``baseline`` as given; a limit ``tp.check`` refuses raises
    CliError."""
    from ..checks import CheckResult, check

    try:
        result = check(prof, baseline=base, step_statistic=step_statistic,
                       allow_missing=allow_missing, **limits)
    except ValueError as err:
        raise CliError(str(err)) from err
    return CheckResult(result.rows, result.allow_missing, profile, baseline)
