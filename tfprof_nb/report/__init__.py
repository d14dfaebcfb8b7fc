"""Offline outputs of a profile: one self-contained HTML report and a shareable notebook.

    tp.report(prof, "report.html")         # or prof.to_html("report.html")
    tp.export_notebook(prof, "report.ipynb")

Importing this package is light (``tfprof_nb`` imports it so that ``tp.report`` is the
function): the writers load the widgets only when called.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["export_notebook", "report"]


def report(source, path="tfprof_report.html", title: str | None = None) -> Path:
    """Write the offline HTML report of ``source`` (a Profile, or anything ``tp.load``
    accepts: logdir, run directory, file, list) to ``path``; returns the file's path.

    One self-contained file: the whole dashboard, interactive, rendered by the same JS
    modules as the notebook widgets, with no request to any network address.
    """
    from ..loading import load
    from ..profile import Profile
    from .html import write_report

    prof = source if isinstance(source, Profile) else load(source)
    return write_report(prof, path, title)


def export_notebook(prof, path, title: str | None = None) -> Path:
    """Write a small report notebook of ``prof`` (summary, dashboard, findings; the views
    rendered offline) to ``path``; returns the path."""
    from .notebook import export_notebook as write

    return write(prof, path, title)
