"""Defaults a running ``%%tfprof`` cell gives to captures made inside it, and what they made."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CellContext", "current", "cell_context"]


@dataclass
class CellContext:
    steps: int
    warmup: int
    logdir: str
    tracer: dict
    progress: bool = True
    backend: str = "auto"  # "auto", "jax" or "tensorflow"
    source: str | None = None  # the cell's code (helps "auto" decide)
    runs: list = field(default_factory=list)  # run directories captured in the cell
    profiles: list = field(default_factory=list)
    every: int | None = None  # %%tfprof --every K: tp.Monitor windows every K steps
    monitors: list = field(default_factory=list)  # tp.Monitor objects made in the cell
    show_monitor: object = None  # called with each monitor made in the cell, to show it


_stack: list[CellContext] = []


def current() -> CellContext | None:
    """The innermost active cell context, if a ``%%tfprof`` cell is running."""
    return _stack[-1] if _stack else None


class cell_context:
    """``with cell_context(ctx):`` makes ``ctx`` the defaults of captures inside."""

    def __init__(self, ctx: CellContext):
        self.ctx = ctx

    def __enter__(self) -> CellContext:
        _stack.append(self.ctx)
        return self.ctx

    def __exit__(self, *exc) -> None:
        _stack.remove(self.ctx)
