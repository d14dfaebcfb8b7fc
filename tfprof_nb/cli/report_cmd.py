"""``tfprof report PATH -o FILE``: the offline HTML report (the whole dashboard in one file
that opens in any browser with no network), and with ``--notebook`` a report notebook."""

from __future__ import annotations

import os

from ._common import EXIT_OK, add_command, emit, load_profile

__all__ = ["add_parser", "run", "write_report"]


def add_parser(sub) -> None:
    p = add_command(sub, "report", "the offline HTML report (one self-contained file)",
                    part=True)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a logdir (its newest run), a run directory, .xplane.pb files or URLs")
    p.add_argument("-o", "--output", metavar="FILE", default="tfprof_report.html",
                   help="the HTML file to write (default tfprof_report.html)")
    p.add_argument("--title", help="the page's title (default: the profile's run)")
    p.add_argument("--notebook", metavar="FILE",
                   help="also write a report notebook (.ipynb) rendered offline")


def run(args) -> int:
    prof = load_profile(args, args.paths)
    emit(args, write_report(prof, args.output, args.title, args.notebook), _text)
    return EXIT_OK


def write_report(prof, output, title=None, notebook=None) -> dict:
    """Write ``prof``'s offline HTML report to ``output`` (and a report notebook to
    ``notebook``); returns the profile's location, the absolute paths written and their
    sizes in bytes."""
    from .summary import run_location

    written = {"report": os.path.abspath(prof.to_html(output, title))}
    if notebook:
        written["notebook"] = os.path.abspath(prof.export_notebook(notebook, title))
    return {"profile": run_location(prof.source), **written,
            "bytes": {k: os.path.getsize(v) for k, v in written.items()}}


def _text(doc: dict) -> str:
    return "\n".join(f"{kind}: {path} ({doc['bytes'][kind] / 1e6:.1f} MB)"
                     for kind, path in doc.items() if kind in ("report", "notebook"))
