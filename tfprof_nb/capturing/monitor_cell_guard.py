"""A window opened by a notebook cell stops when the cell ends with it still open (a fit that
raised outside its train function, a loop abandoned without closing)."""

from __future__ import annotations

import sys

__all__ = ["CellGuard"]


class CellGuard:
    """In IPython, closes window ``index`` of ``driver`` (opened by this cell, on the main
    thread) when the cell ends; training on another thread is never guarded (the cells run
    meanwhile are not its end).  Outside IPython (not imported) it does nothing."""

    def __init__(self, driver):
        self._driver = driver
        self._index: int | None = None
        self._hook = None

    def guard(self, index: int) -> None:
        """Close window ``index`` when the running cell ends, if it is still open then."""
        self._index = index
        if self._hook is not None:
            return
        # (a shell has imported IPython: where it has not, no cell runs and IPython is not
        # imported here, on the training thread at its first window: 0.15-0.3 s)
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        if shell is None:
            return

        def after_cell(*_):
            self._driver.close("the cell ended", index=self._index)
            shell.events.unregister("post_execute", after_cell)
            self._hook = None

        shell.events.register("post_execute", after_cell)
        self._hook = after_cell
