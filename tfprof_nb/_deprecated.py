"""Names kept for one release after a rename: each use warns (``DeprecationWarning``) and
says the new name.  The names DESIGN.md's contract lists never come here: they stay without
a warning (see docs/API.md)."""

from __future__ import annotations

import warnings

__all__ = ["renamed"]


def renamed(old: str, new: str, value=None, stacklevel: int = 3):
    """``value`` (what ``old`` is now, under the name ``new``), after a DeprecationWarning
    saying so; ``stacklevel`` 3 points at the caller of the function calling this."""
    warnings.warn(f"{old} is deprecated and goes in the next release: use {new}",
                  DeprecationWarning, stacklevel=stacklevel)
    return value
