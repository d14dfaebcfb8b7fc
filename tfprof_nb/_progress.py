"""Progress of long work: a line updated in place in a notebook, a text line on stderr elsewhere.

:class:`ProgressLine` is the display: in a notebook, one output (an HTML ``<progress>`` bar and
a label, with a ``text/plain`` twin) that each update replaces through its display id, so a
saved notebook keeps the last state as plain output and never refers to a widget model that
is gone once the kernel is (which a reopened notebook shows as "Error displaying widget:
model not found"); elsewhere ``\\r``-rewritten text on stderr.
:class:`WorkProgress` reports a load or an analysis as "host: phase percent": it shows nothing
for work that ends within ``delay`` seconds, is off by default outside notebooks, and never
shows when disabled (``tp.load(..., progress=False)``).
"""

from __future__ import annotations

import html
import sys
import time

__all__ = ["ProgressLine", "WorkProgress", "in_notebook", "progress_bundle", "DELAY_S"]

DELAY_S = 1.0  # work shorter than this shows no progress
_COLOURS = {None: "", True: "accent-color:#2e7d32;", False: "accent-color:#c62828;"}


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (so rich outputs can be displayed).  A kernel
    has imported IPython before any cell runs, so a process that has not is none (and is
    spared IPython's import, ~0.13 s)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    ip = ipython.get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def progress_bundle(value: int, total: int, text: str, description: str = "tfprof",
                    ok: bool | None = None) -> dict:
    """The ``text/html`` and ``text/plain`` of a progress line (``ok``: None while running,
    then True or False); ``text`` is set as text, never markup."""
    label = html.escape(f"{description}: {text}" if text else description)
    bar = (f'<progress value="{value}" max="{total}" style="width:14em;{_COLOURS[ok]}">'
           f"</progress>")
    return {"text/html": f'<div class="tfprof-progress" style="display:flex;gap:0.6em;'
                         f'align-items:center">{bar}<span>{label}</span></div>',
            "text/plain": f"[tfprof_nb] {text or description}"}


class ProgressLine:
    """A bar of ``total`` units with a label: one output updated in place in a notebook, a
    line on stderr elsewhere.  Shown on the first update."""

    def __init__(self, total: int, description: str = "tfprof"):
        self.total, self.description = max(int(total), 1), description
        self._handle = None
        self._value, self._shown = 0, False

    def show(self) -> None:
        """Display it now (it shows itself on the first update otherwise)."""
        if self._shown:
            return
        self._shown = True
        if in_notebook():
            from IPython.display import display

            self._handle = display(self._bundle(""), raw=True, display_id=True)

    def _bundle(self, text: str, ok: bool | None = None) -> dict:
        return progress_bundle(self._value, self.total, text, self.description, ok)

    def update(self, value: int, text: str) -> None:
        self.show()
        self._value = min(max(int(value), 0), self.total)
        if self._handle is not None:
            self._handle.update(self._bundle(text), raw=True)
        else:
            print(f"\r[tfprof_nb] {text}   ", end="", file=sys.stderr, flush=True)

    def finish(self, text: str, ok: bool = True) -> None:
        if not self._shown:
            return
        if self._handle is not None:
            self._value = self.total if ok else self._value
            self._handle.update(self._bundle(text, ok), raw=True)
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
