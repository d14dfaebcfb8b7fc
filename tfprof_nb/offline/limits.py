"""How much data an offline copy of a view may carry in a notebook."""

from __future__ import annotations

import os

__all__ = ["MAX_FALLBACK_BYTES", "fallback_limit"]

# A fallback larger than this (packed) is replaced by a note: notebooks must stay shareable.
# The environment variable TFPROF_NB_MAX_FALLBACK_MB overrides it (0: never embed data).
MAX_FALLBACK_BYTES = 32 * 2**20


def fallback_limit() -> float:
    """Bytes a view's offline copy may take packed (TFPROF_NB_MAX_FALLBACK_MB, else
    :data:`MAX_FALLBACK_BYTES`)."""
    value = os.environ.get("TFPROF_NB_MAX_FALLBACK_MB")
    if value is None:
        return MAX_FALLBACK_BYTES
    try:
        mb = float(value)
    except ValueError:
        raise ValueError("TFPROF_NB_MAX_FALLBACK_MB must be a number of MB, "
                         f"got {value!r}") from None
    return mb * 2**20 if mb == mb else MAX_FALLBACK_BYTES  # nan: the default
