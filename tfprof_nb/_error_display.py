"""How tfprof_nb's own errors show in IPython and Jupyter: their message and a hint of what to
do, the traceback folded away one click below, instead of 30 lines through the package.

:func:`register` (called when tfprof_nb is imported inside IPython) hands IPython a handler
for :class:`~tfprof_nb.errors.TfprofError` only (``set_custom_exc``): every other exception,
KeyboardInterrupt and a user's own ValueError among them, keeps IPython's display.  A shell
whose custom handler is someone else's is left as it is.  The handler shows:

- an error output (red, as any failing cell: the cell still fails, "Run all" stops there and
  papermill/nbclient see the error) of two lines, ``Name: message`` and ``Hint: ...``;
- a display of the full traceback: in HTML a collapsed ``<details>``, escaped (profile
  strings are never HTML); as plain text, where to find it (``%tb``).

``%tb`` and ``%debug`` work as after any error (``sys.last_*`` are set); with ``%pdb`` on, the
error shows as IPython shows any other.
"""

from __future__ import annotations

import html
import re
import sys

from .errors import TfprofError

__all__ = ["register", "short_lines", "traceback_bundle"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RED, _CYAN, _RESET = "\x1b[0;31m", "\x1b[0;36m", "\x1b[0m"


def register(shell=None) -> bool:
    """Show tfprof_nb's errors short in ``shell`` (default: the running IPython, if any);
    whether the handler is (now) installed."""
    if shell is None:
        ipython = sys.modules.get("IPython")  # never imported here: only where it runs
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    current = tuple(getattr(shell, "custom_exceptions", ()) or ())
    if any(c.__module__ != TfprofError.__module__ for c in current):
        return False  # another handler is installed: never replaced
    shell.set_custom_exc((TfprofError,), _handler)
    return True


def short_lines(value: BaseException, color: bool = False) -> list[str]:
    """``Name: message`` and, when the error has one, ``Hint: ...``."""
    name, hint = type(value).__name__, getattr(value, "hint", None)
    red, cyan, reset = (_RED, _CYAN, _RESET) if color else ("", "", "")
    lines = [f"{red}{name}{reset}: {value}"]
    if hint:
        lines.append(f"{cyan}Hint{reset}: {hint}")
    return lines


def traceback_bundle(traceback_text: str) -> dict:
    """The mime bundle of the folded traceback (HTML escaped; plain text: a pointer)."""
    n = traceback_text.count("\n") + 1
    body = html.escape(traceback_text)
    return {
        "text/plain": "(the full traceback: run %tb)",
        "text/html": ('<details class="tfprof-nb-traceback"><summary>Full traceback '
                      f'({n} lines)</summary><pre style="white-space:pre-wrap">{body}</pre>'
                      "</details>"),
    }


def _handler(shell, etype, value, tb, tb_offset=None):
    """IPython's custom handler: the short error, then the folded traceback."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    if sys.version_info >= (3, 12):
        sys.last_exc = value
    if not isinstance(value, TfprofError) or getattr(shell, "call_pdb", False):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    text = _ANSI.sub("", shell.InteractiveTB.stb2text(stb)).strip("\n")
    short = short_lines(value, color=True)
    shell._showtraceback(etype, value, short)
    from IPython.display import display

    display(traceback_bundle(text), raw=True)
    return short
