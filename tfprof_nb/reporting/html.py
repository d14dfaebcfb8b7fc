"""The offline report of a profile: one self-contained HTML page of its whole dashboard.

The page embeds the dashboard's state (and every trace event's stats) as a packed payload, the
dashboard's own ES module and the offline host that renders it: the same code as the live
widget (``tfprof_nb.offline.page`` writes such pages of any view).  A Content-Security-Policy
forbids every network request, so the report works from ``file://`` on an air-gapped machine
and cannot leak anything.
"""

from __future__ import annotations

from pathlib import Path

from ..offline import widget_page, write_page

__all__ = ["report_html", "write_report"]


def report_html(prof, title: str | None = None) -> str:
    """The report page of ``prof`` (its whole dashboard) as a string."""
    from ..widgets.dashboard_view import DashboardView

    title = title or f"tfprof_nb report: {', '.join(prof.hosts) or 'profile'}"
    return widget_page(DashboardView(prof), title, prof.summary())


def write_report(prof, path, title: str | None = None) -> Path:
    """Write the report of ``prof`` to ``path`` (a file, or a directory to put
    ``tfprof_report.html`` in) and return the file's path."""
    return write_page(report_html(prof, title), path)
