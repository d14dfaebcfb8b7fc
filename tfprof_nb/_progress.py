"""Progress of long work: an ipywidgets bar in a notebook, a text line on stderr elsewhere.

:class:`ProgressLine` is the display (a bar and a label, or ``\\r``-rewritten text).
:class:`WorkProgress` reports a load or an analysis as "host: phase percent": it shows nothing
for work that ends within ``delay`` seconds, is off by default outside notebooks, and never
shows when disabled (``tp.load(..., progress=False)``).
"""

from __future__ import annotations

import sys
import time

__all__ = ["ProgressLine", "WorkProgress", "in_notebook", "DELAY_S"]

DELAY_S = 1.0  # work shorter than this shows no progress


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (so widgets can be displayed).  A kernel has
    imported IPython before any cell runs, so a process that has not is none (and is spared
    IPython's import, ~0.13 s)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    ip = ipython.get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


class ProgressLine:
    """A bar of ``total`` units with a label: an ipywidgets bar in a notebook (text when
    ipywidgets is missing), a line on stderr elsewhere.  Shown on the first update."""

    def __init__(self, total: int, description: str = "tfprof"):
        self.total, self.description = max(int(total), 1), description
        self._bar = self._label = None
        self._shown = False

    def show(self) -> None:
        """Display it now (it shows itself on the first update otherwise)."""
        if self._shown:
            return
        self._shown = True
        if not in_notebook():
            return
        try:
            import ipywidgets as w
            from IPython.display import display
        except ImportError:  # no widget support: text
            return
        self._bar = w.IntProgress(min=0, max=self.total, description=self.description)
        self._label = w.Label("")
        display(w.HBox([self._bar, self._label]))

    def update(self, value: int, text: str) -> None:
        self.show()
        if self._bar is not None:
            self._bar.value = min(max(int(value), 0), self.total)
            self._label.value = text
        else:
            print(f"\r[tfprof_nb] {text}   ", end="", file=sys.stderr, flush=True)

    def finish(self, text: str, ok: bool = True) -> None:
        if not self._shown:
            return
        if self._bar is not None:
            self._bar.value = self.total if ok else self._bar.value
            self._label.value = text
            self._bar.bar_style = "success" if ok else "danger"
        else:
            print(f"\r[tfprof_nb] {text}   ", file=sys.stderr, flush=True)


class WorkProgress:
    """Reports "``host``: ``phase`` ``percent``" for a load or an analysis.

    ``enabled``: True shows it (a bar in a notebook, text elsewhere), False never, None (the
    default) only in a notebook.  Nothing is shown until the work has run ``delay`` seconds
    (default :data:`DELAY_S`); updates are throttled to ``rate`` per second.
    """

    def __init__(self, enabled: bool | None = None, delay: float | None = None,
                 rate: float = 5.0):
        self.enabled = in_notebook() if enabled is None else bool(enabled)
        self.delay = DELAY_S if delay is None else delay
        self.interval = 1.0 / rate
        self.start = time.monotonic()
        self._line: ProgressLine | None = None
        self._last = 0.0

    def update(self, fraction: float, text: str) -> None:
        """Report ``fraction`` (0..1) done with ``text`` (e.g. "vm: decoding")."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self._last < self.interval:
            return
        self._last = now
        if self._line is None:
            self._line = ProgressLine(1000)
        pct = min(max(fraction, 0.0), 1.0)
        self._line.update(int(pct * 1000), f"{text} {pct:.0%}")

    def finish(self, text: str, ok: bool = True) -> None:
        """The work ended (``ok``: completed, else interrupted or failed)."""
        if self._line is not None:
            self._line.finish(f"{text} ({time.monotonic() - self.start:.1f} s)", ok)
