"""The code beside the Source view's hottest locations, with device time beside its lines.

Code is found where the kernel can read it: a notebook cell through :mod:`linecache` (IPython
caches every cell it runs there under the cell's file name, the name JAX records, with no
modification time), else the file at its path when it is readable; else the location stands
alone and the block says why.  Read when the view is built (in the kernel), so an offline
report carries the lines it shows.
"""

from __future__ import annotations

import linecache
import sys
from pathlib import Path

import pandas as pd

__all__ = ["read_code", "code_blocks", "cell_label", "is_cell"]

_MAX_FILE_BYTES = 4 << 20  # a source file larger than this is not read
_SOURCE_SUFFIXES = (".py", ".pyw", ".pyx", ".pxd", ".pyi")  # what is read as source


def is_cell(file: str) -> bool:
    """Whether ``file`` names code cached in memory (IPython's cells), not a file."""
    entry = linecache.cache.get(file)
    return entry is not None and len(entry) == 4 and entry[1] is None


def cell_label(file: str) -> str | None:
    """IPython's name of the cell cached under ``file`` ("In[3]"), None when it is no cell
    of this kernel's notebook or IPython does not say."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and is_cell(file) else None
    compiler = getattr(shell, "compile", None)
    named = compiler.format_code_name(file) if hasattr(compiler, "format_code_name") else None
    return named[1] if named else None


def _label(file: str) -> str:
    """How a block names its code: a cell by its name ("In[3]"), a file by its path."""
    return cell_label(file) or file


def _cell_name(file: str) -> str:
    """How the view names the cell cached under ``file`` ("notebook cell In[3]")."""
    label = cell_label(file)
    return f"notebook cell {label}" if label else "notebook cell"


def read_code(file: str, captured=None) -> tuple[list[str] | None, str]:
    """(the lines of ``file``, where they come from) or (None, why they cannot be shown);
    a file modified after ``captured`` (a UTC timestamp: the profile's end) says so."""
    if is_cell(file):
        return [line.rstrip("\r\n") for line in linecache.cache[file][2]], _cell_name(file)
    if not file:
        return None, "no file name"
    path = Path(file)
    if path.suffix not in _SOURCE_SUFFIXES or path.parts[1:2] in (("proc",), ("sys",), ("dev",)):
        # a profile names any path it likes: only Python sources are read (and so embedded
        # in reports), never another file of this machine
        return None, "not a Python source file (only .py files are read)"
    try:
        if not path.is_file():
            return None, "no such file on this machine (nor a cell of this notebook)"
        if path.stat().st_size > _MAX_FILE_BYTES:
            return None, f"the file is larger than {_MAX_FILE_BYTES >> 20} MB"
        text = path.read_bytes().decode("utf-8", errors="replace")
        changed = captured is not None and path.stat().st_mtime > captured.timestamp()
    except OSError as exc:
        return None, f"the file cannot be read ({exc.strerror or exc})"
    return text.splitlines(), ("the file as it reads now: modified after the capture (by "
                               "its date), its lines may have moved" if changed else
                               "the file as it reads now")


def _windows(lines: list[int], context: int) -> list[tuple[int, int]]:
    """Line ranges around ``lines`` (1-based, ``context`` lines each side), merged."""
    out: list[list[int]] = []
    for line in sorted(set(lines)):
        lo, hi = max(1, line - context), line + context
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def _block(file: str, origin: str, lo: int, hi: int, code: list[str],
           times: pd.DataFrame) -> dict:
    """One window of a file: its lines with the device time of each (None where none)."""
    hi = min(hi, len(code))
    inside = times[(times.line >= lo) & (times.line <= hi)]
    by_line = {int(r.line): (float(r.self_time_us), float(r.self_time_pct))
               for r in inside.itertuples(index=False)}
    rows = [[n, code[n - 1], *by_line.get(n, (None, None))] for n in range(lo, hi + 1)]
    functions = list(dict.fromkeys(f for f in inside.sort_values(
        "self_time_us", ascending=False).function if f))
    return {"file": file, "label": _label(file), "origin": origin, "first_line": lo,
            "last_line": hi,
            "functions": functions, "time_us": float(inside.self_time_us.sum()),
            "time_pct": float(inside.self_time_pct.sum()), "note": "", "moved": False,
            "lines": rows}


def _unshown(file: str, why: str, times: pd.DataFrame, moved: bool = False) -> dict:
    """A file whose code is not shown: its hottest locations alone (line, time, the function
    the profile recorded there), and why; ``moved``: its code no longer matches the profile."""
    return {"file": file, "label": file, "origin": "", "first_line": int(times.line.min()),
            "last_line": int(times.line.max()),
            "functions": list(dict.fromkeys(f for f in times.function if f)),
            "time_us": float(times.self_time_us.sum()),
            "time_pct": float(times.self_time_pct.sum()),
            "note": f"Code not shown: {why}. The location alone.", "moved": moved,
            "lines": [[int(r.line), "", float(r.self_time_us), float(r.self_time_pct),
                       str(r.function)]
                      for r in times.sort_values("line").itertuples(index=False)]}


# the most locations a file whose code is not shown lists (its hottest)
UNSHOWN_LINES = 100


def _located(every: pd.DataFrame) -> pd.DataFrame:
    """The locations an unshown file lists: all of its located lines (its block's range and
    time are theirs, as the page's table counts them), its hottest UNSHOWN_LINES where more."""
    return every.nlargest(UNSHOWN_LINES, "self_time_us") if len(every) > UNSHOWN_LINES \
        else every


def _file_blocks(file: str, hot: pd.DataFrame, every: pd.DataFrame, context: int,
                 captured, moved=None) -> list:
    if moved is not None:  # its lines may have moved: no time beside any of them
        return [_unshown(file, f"the file changed since the capture: {moved.why()}",
                         _located(every), moved=True)]
    code, origin = read_code(file, captured)
    if code is None:
        return [_unshown(file, origin, _located(every))]
    blocks = []
    past = hot[hot.line > len(code)]
    for lo, hi in _windows(hot.line[hot.line <= len(code)].tolist(), context):
        blocks.append(_block(file, origin, lo, hi, code, every))
    if len(past):
        blocks.append(_unshown(file, f"line {int(past.line.max())} is past the end of the "
                                     f"file ({len(code)} lines): it changed since the "
                                     "capture", past))
    return blocks


def code_blocks(lines: pd.DataFrame, top: int = 8, context: int = 3,
                captured=None, moved: dict | None = None) -> list[dict]:
    """The code around the ``top`` hottest locations of ``prof.source_lines`` (``context``
    lines each side; windows that touch are merged), hottest first: per block its file, its
    label (a notebook cell's name, else the file), where the code comes from, its lines
    ``[number, text, device time us, share %]`` (time None where a line has none) and the functions in it; a note where code is not shown.
    ``captured``: when the profile ended (files modified later say so); ``moved``: {file:
    why its code no longer matches the profile} (source_match): those files' locations
    stand alone, ``moved`` True, the function the profile recorded fifth in each line."""
    located = lines[(lines.no_source == "") & (lines.line >= 0)]
    hot = located.head(top)
    blocks = []
    for file in dict.fromkeys(hot.file):
        blocks += _file_blocks(file, hot[hot.file == file], located[located.file == file],
                               context, captured, (moved or {}).get(file))
    return sorted(blocks, key=lambda b: -b["time_us"])
