"""Whether a file still reads as the profile recorded it, before the Source view puts device
time beside its lines.

A profile names the frames of the code that made its ops: file, line, column and the function
running there (the HLO protos' stack frame index).  A script edited after the capture (two
lines added at its top) shifts those lines: the time of an attention call then lands on the
layer norm two lines above it.  Each recorded frame is checked against the file as it reads
now: the line must hold code (not a blank line, nor a comment), reach the recorded column,
and lie in the recorded function (the scopes enclosing it, found with :mod:`ast`).  One frame
that does not match and the file's lines are not trusted: every line may have moved.
Notebook cells are not checked: IPython caches each run under a name of its own, so a cell's
code is the code that ran.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import pandas as pd

from ..analysis.xla.source_lines import parse_frame
from .source_code import is_cell, read_code

__all__ = ["Moved", "moved_files", "recorded_frames", "scopes_of", "frame_mismatch"]

# scopes Python names in a frame's function (comprehensions: before 3.12, and generators)
_COMPREHENSIONS = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                   ast.DictComp: "<dictcomp>", ast.GeneratorExp: "<genexpr>"}


@dataclass(frozen=True)
class Scope:
    """A scope of a file: where it starts and ends (line, column) and its qualified name."""

    start: tuple[int, int]
    end: tuple[int, int]
    name: str
    is_def: bool  # a function or class (a frame's function is one, or a comprehension in one)


def _scope_name(node) -> tuple[str | None, bool]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name, True
    if isinstance(node, ast.Lambda):
        return "<lambda>", True
    return _COMPREHENSIONS.get(type(node)), False


def scopes_of(text: str) -> list[Scope] | None:
    """Every scope of the module ``text`` (None: it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: list[Scope] = []

    def walk(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name, is_def = _scope_name(child)
            if name is None:
                walk(child, prefix)
                continue
            qual = prefix + name
            out.append(Scope((child.lineno, child.col_offset),
                             (child.end_lineno or child.lineno, child.end_col_offset or 0),
                             qual, is_def))
            walk(child, qual + ("." if isinstance(child, ast.ClassDef) else ".<locals>."))
    walk(tree, "")
    return out


def _names_at(scopes: list[Scope], line: int, column: int) -> list[str]:
    """The names a frame at ``line``:``column`` may carry: the scopes enclosing it, innermost
    first, up to the first function or class (else ``<module>``); on a def's own line also
    the scope around it (its default values run there)."""
    def inside(s: Scope) -> bool:
        if column < 0:
            return s.start[0] <= line <= s.end[0]
        return s.start <= (line, column) <= s.end
    enclosing = sorted((s for s in scopes if inside(s)), key=lambda s: s.start, reverse=True)
    names = []
    for s in enclosing:
        names.append(s.name)
        if s.is_def and s.start[0] != line:
            return names
    return names + ["<module>"]


def _same_function(recorded: str, names: list[str]) -> bool:
    """Whether ``recorded`` (a qualified name, or a bare one as older Pythons record) is one
    of ``names``."""
    return any(recorded in (n, n.rsplit(".", 1)[-1]) for n in names)


def frame_mismatch(code: list[str], scopes: list[Scope] | None, line: int, column: int,
                   function: str) -> str | None:
    """Why the frame ``line``:``column`` in ``function`` does not match ``code`` (None: it
    does, or nothing says otherwise)."""
    if line < 1:
        return None
    if line > len(code):
        return f"line {line} is past the end of the file ({len(code)} lines)"
    text = code[line - 1]
    if not text.strip() or text.lstrip().startswith("#"):
        return f"line {line} is {'blank' if not text.strip() else 'a comment'} now"
    if column >= 0 and column >= len(text.encode()):
        return f"line {line} is shorter than the recorded column {column} now"
    if function and scopes is not None:
        names = _names_at(scopes, line, column)
        if not _same_function(function, names):
            return f"line {line} ran in {function}, it is in {names[0]} now"
    return None


def recorded_frames(lines: pd.DataFrame, stacks: pd.DataFrame) -> pd.DataFrame:
    """file, line, column, function of every frame the profile names (each stack's frames,
    each located line), once each."""
    rows = [(f, li, -1, fn) for f, li, fn in
            lines.loc[lines.no_source == "", ["file", "line", "function"]].itertuples(
                index=False)]
    located = stacks[(stacks.no_source == "") & (stacks["stack"] != "")]
    for stack, functions in located[["stack", "functions"]].itertuples(index=False):
        for frame, function in zip(stack.split("\n"), functions.split("\n")):
            rows.append((*parse_frame(frame), function))
    return pd.DataFrame(rows, columns=["file", "line", "column", "function"]).drop_duplicates()


@dataclass(frozen=True)
class Moved:
    """A file whose current code contradicts the frames the profile recorded in it."""

    file: str
    frames: int  # frames recorded in it
    mismatches: tuple[str, ...]  # why, one per frame that does not match

    def why(self, shown: int = 2) -> str:
        more = len(self.mismatches) - shown
        first = "; ".join(self.mismatches[:shown]) + (f"; and {more} more" if more > 0 else "")
        return (f"{len(self.mismatches)} of the {self.frames} frames the profile recorded in "
                f"it do not match its code now: {first}")


def _check(file: str, frames: pd.DataFrame, captured) -> Moved | None:
    code, _ = read_code(file, captured)
    if code is None:
        return None
    scopes = scopes_of("\n".join(code))
    found = [frame_mismatch(code, scopes, int(li), int(col), fn) for li, col, fn in
             frames[["line", "column", "function"]].itertuples(index=False)]
    bad = tuple(dict.fromkeys(w for w in found if w))
    return Moved(file, len(frames), bad) if bad else None


def moved_files(lines: pd.DataFrame, stacks: pd.DataFrame, captured=None) -> dict[str, Moved]:
    """{file: Moved} of the files (not notebook cells) whose code no longer reads as the
    profile recorded it."""
    frames = recorded_frames(lines, stacks)
    frames = frames[(frames.file != "") & (frames.line >= 1)]
    out = {}
    for file, group in frames.groupby("file", sort=False):
        if not is_cell(file) and (moved := _check(file, group, captured)) is not None:
            out[file] = moved
    return out
