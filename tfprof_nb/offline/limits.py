"""How much data an offline copy of a view may carry: in a notebook, and in a page.

A notebook output's copy is a preview that keeps the notebook small and the cell fast (a trace
viewer keeps its overview and one detailed range; ``prof.to_html`` writes the full copy); a
page (a report, an exported report notebook) is the copy, and may be large.
"""

from __future__ import annotations

import os

__all__ = ["MAX_FALLBACK_BYTES", "MAX_PAGE_BYTES", "TIMELINE_SHARE", "fallback_limit",
           "page_limit", "timeline_limit"]

# A notebook output's copy larger than this (packed) is replaced by a note: notebooks must
# stay shareable.  TFPROF_NB_MAX_FALLBACK_MB overrides it (0: never embed data).
MAX_FALLBACK_BYTES = 3 * 2**20
# A page's copy (reports, export_notebook): TFPROF_NB_MAX_REPORT_MB overrides it.
MAX_PAGE_BYTES = 32 * 2**20
# A trace viewer's copy in a notebook output (its overview, critical paths, one detailed range
# and that range's event details) keeps to this share of a view's, whatever else the view
# holds: the trace viewer and the dashboard's trace tab then make the same copy, which the
# notebook stores once; the executed notebook of five views (BENCHMARKS.md) stays under 4 MB
# plus its JavaScript.
TIMELINE_SHARE = 0.25


def _limit(variable: str, default: int) -> float:
    value = os.environ.get(variable)
    if value is None:
        return default
    try:
        mb = float(value)
    except ValueError:
        raise ValueError(f"{variable} must be a number of MB, got {value!r}") from None
    return mb * 2**20 if mb == mb else default  # nan: the default


def fallback_limit() -> float:
    """Bytes a view's offline copy in a notebook output may take packed
    (TFPROF_NB_MAX_FALLBACK_MB, else :data:`MAX_FALLBACK_BYTES`)."""
    return _limit("TFPROF_NB_MAX_FALLBACK_MB", MAX_FALLBACK_BYTES)


def page_limit() -> float:
    """Bytes a view's copy in a report page may take packed (TFPROF_NB_MAX_REPORT_MB, else
    :data:`MAX_PAGE_BYTES`)."""
    return _limit("TFPROF_NB_MAX_REPORT_MB", MAX_PAGE_BYTES)


def timeline_limit(limit: float) -> float:
    """Bytes a trace viewer's copy in a notebook output may take packed, for a view's
    ``limit`` (:data:`TIMELINE_SHARE` of it)."""
    return limit * TIMELINE_SHARE
