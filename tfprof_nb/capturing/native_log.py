"""Keeping the profilers' own log lines out of a cell's output while a session starts or stops.

TensorFlow's and JAX's C++ runtimes log every profiler session to file descriptor 2
("I0000 ... profiler_session.cc:117] Profiler session initializing.", five lines a capture),
which a Jupyter kernel shows as a red stderr box, and their Python sides log through the
``tensorflow``, ``absl`` and ``jax`` loggers.  :func:`quiet_profiler_log` holds both around a
profiler's start or stop: fd 2 goes to a temporary file and those loggers' records are held
back.  Afterwards the lines are kept (``into``), a line of fd 2 that is not a log line (a
user's or a library's own C-level output in that moment) is written back to fd 2, and
only what matters is said, in one line on ``sys.stderr``: the first warning or error, shortened
("[tfprof_nb] TensorFlow's profiler warned: ... (+2 more)").  INFO lines are dropped.
Python-level writes to ``sys.stderr`` (a cell's own prints) never pass through fd 2 in a
kernel and are not touched.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile

__all__ = ["LogLine", "parse_native_log", "quiet_profiler_log", "what_matters"]

_LOGGERS = ("tensorflow", "absl", "jax._src.profiler")
# absl ("W0000 00:00:1795875245.063956   30079 file.cc:117] message") and TensorFlow's older
# format ("2024-01-02 03:04:05.678901: W file.cc:117] message")
_ABSL = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ ([^\s\]]+)\] ?(.*)$")
_TF = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+: ([IWEF]) ([^\s\]]+)\] ?(.*)$")
_BANNER = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
_LEVELS = {"I": "info", "W": "warning", "E": "error", "F": "fatal"}
_PY_LEVELS = {logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E",
              logging.CRITICAL: "F"}
MAX_CHARS = 160


class LogLine:
    """One log record: ``severity`` ("I", "W", "E" or "F"), ``source`` (file:line or the
    logger's name) and ``message`` (continuation lines joined)."""

    def __init__(self, severity: str, source: str, message: str):
        self.severity, self.source, self.message = severity, source, message

    def __repr__(self) -> str:
        return f"{self.severity} {self.source}] {self.message}"


def parse_native_log(text: str) -> tuple[list[LogLine], str]:
    """(the log records of ``text``, the rest: lines that are no log's, to pass on)."""
    records: list[LogLine] = []
    rest: list[str] = []
    last = None
    for line in text.splitlines():
        match = _ABSL.match(line) or _TF.match(line)
        if match:
            last = LogLine(*match.groups())
            records.append(last)
        elif line.strip() == _BANNER:
            continue
        elif last is not None and line.strip():
            last.message += " " + line.strip()  # a record's continuation
        else:
            rest.append(line)
    return records, "".join(f"{line}\n" for line in rest if line.strip())


def what_matters(records: list[LogLine], who: str) -> str | None:
    """One line on the warnings and errors of ``records`` (None when there are none)."""
    serious = [r for r in records if r.severity != "I"]
    if not serious:
        return None
    first = serious[0]
    message = first.message if len(first.message) <= MAX_CHARS \
        else first.message[:MAX_CHARS - 3] + "..."
    verb = "warned" if first.severity == "W" else f"logged an {_LEVELS[first.severity]}" \
        if first.severity == "E" else "logged a fatal error"
    more = f" (+{len(serious) - 1} more)" if len(serious) > 1 else ""
    return f"[tfprof_nb] {who} {verb}: {message} ({first.source}){more}"


class _Hold(logging.Filter):
    """Holds back a logger's records (kept as LogLine)."""

    def __init__(self):
        super().__init__()
        self.records: list[LogLine] = []

    def filter(self, record: logging.LogRecord) -> bool:
        severity = _PY_LEVELS.get(record.levelno, "I" if record.levelno < logging.WARNING
                                  else "W")
        self.records.append(LogLine(severity, record.name, record.getMessage()))
        return False


@contextlib.contextmanager
def quiet_profiler_log(who: str, into: list | None = None):
    """Hold the profiler's log lines while inside (see the module's docstring); ``who``
    names the profiler in the one line said afterwards; ``into`` receives every record."""
    hold = _Hold()
    loggers = [logging.getLogger(name) for name in _LOGGERS]
    for logger in loggers:
        logger.addFilter(hold)
    redirected = _redirect_fd2()
    try:
        yield
    finally:
        text = _restore_fd2(redirected)
        for logger in loggers:
            logger.removeFilter(hold)
        records, rest = parse_native_log(text)
        records += hold.records
        if into is not None:
            into.extend(records)
        _say(rest, what_matters(records, who))


def _say(rest: str, line: str | None) -> None:
    if rest:
        with contextlib.suppress(OSError):
            os.write(2, rest.encode("utf-8", "replace"))
    if line is not None:
        print(line, file=sys.stderr, flush=True)


def _redirect_fd2():
    """Point fd 2 at a temporary file: (the saved fd 2, the file), or None where fd 2 cannot
    be moved (no fd 2, say)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        sys.stderr.flush()  # (where sys.stderr is fd 2, its buffer goes out first)
    try:
        saved = os.dup(2)
    except OSError:
        return None
    try:
        held = tempfile.TemporaryFile()
        os.dup2(held.fileno(), 2)
    except OSError:
        os.close(saved)
        return None
    return saved, held


def _restore_fd2(redirected) -> str:
    """Put fd 2 back; what was written to it meanwhile."""
    if redirected is None:
        return ""
    saved, held = redirected
    with contextlib.suppress(AttributeError, OSError, ValueError):
        sys.stderr.flush()
    os.dup2(saved, 2)
    os.close(saved)
    with held:
        held.seek(0)
        return held.read().decode("utf-8", "replace")
