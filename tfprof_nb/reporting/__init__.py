"""Offline outputs of a profile: one self-contained HTML report and a shareable notebook.

    tp.report(prof, "report.html")         # or prof.to_html("report.html")
    tp.export_notebook(prof, "report.ipynb")

Importing this package is light (``tfprof_nb`` imports it so that ``tp.report`` is the
function): the writers load the widgets only when called.  They take a loaded profile;
``tp.report`` (in ``tfprof_nb``) also loads one from a path.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["export_notebook", "report"]


def report(prof, path="tfprof_report.html", title: str | None = None) -> Path:
    """Write the offline HTML report of the profile ``prof`` to ``path``; returns the file's
    path.

    One self-contained file: the whole dashboard, interactive, rendered by the same JS
    modules as the notebook widgets, with no request to any network address.
    """
    from .html import write_report

    return write_report(prof, path, title)


def export_notebook(prof, path, title: str | None = None) -> Path:
    """Write a small report notebook of ``prof`` (summary, dashboard, findings; the views
    rendered offline) to ``path``; returns the path."""
    from .notebook import export_notebook as write

    return write(prof, path, title)
