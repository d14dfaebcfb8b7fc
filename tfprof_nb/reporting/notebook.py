"""A small report notebook to share: the summary and the dashboard, already rendered.

The outputs are written without a kernel: the summary as text and the dashboard as its
offline copy (its place, then the loader output with its packed state and JS module), so the
notebook shows its views in Jupyter once trusted, and in an HTML export, with no kernel and
no network.  Its code cells reload the profile, so running them with the profile at hand
gives the live widgets back.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["export_notebook"]


def _source_of(prof) -> str:
    """What to pass to ``tp.load`` to get ``prof`` back: its run directory, file or files
    (local paths or URLs)."""
    from ..xspace.stores import is_url

    paths = [str(p) if is_url(str(p)) else str(Path(p)) for p in prof.source]
    if not paths:
        return "'<path to the profile>'"
    if len(paths) == 1:
        return repr(paths[0])
    parents = {p.rsplit("/", 1)[0] if is_url(p) else str(Path(p).parent) for p in paths}
    return repr(parents.pop()) if len(parents) == 1 else repr(paths)


def export_notebook(prof, path, title: str | None = None) -> Path:
    """Write a report notebook of ``prof`` to ``path`` (``.ipynb`` is added when missing; a
    directory gets ``tfprof_report.ipynb``) and return the path.

    The dashboard is embedded as a report page embeds it (up to ``TFPROF_NB_MAX_REPORT_MB``,
    not the small copies of notebook outputs: it is what this notebook is for).  The notebook
    is signed on this machine (so Jupyter here trusts it and runs its views); elsewhere,
    Jupyter asks the reader to trust it.
    """
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from .._version import __version__
    from ..offline import display_outputs, write_page, written_at
    from ..offline.limits import page_limit
    from ..widgets.dashboard_view import DashboardView

    path = Path(path).expanduser()
    if path.is_dir():
        path = path / "tfprof_report.ipynb"
    elif path.suffix != ".ipynb":
        path = path.with_suffix(".ipynb")
    intro = new_markdown_cell(
        f"# {_markdown_text(title or 'Profile report')}\n\nWritten {written_at()} by tfprof_nb "
        f"{__version__}. The views below are embedded in the notebook: they work without a "
        "kernel and without a network (trust the notebook if Jupyter asks). Run the cells "
        "with the profile at hand for the live widgets.")
    load = new_code_cell(
        f"import tfprof_nb as tp\n\nprof = tp.load({_source_of(prof)})\nprint(prof.summary())",
        outputs=[new_output("stream", name="stdout", text=prof.summary() + "\n")])
    fallback, loader = display_outputs(DashboardView(prof), page_limit())
    view = new_code_cell("prof.show()", outputs=[
        new_output("display_data", data={"text/plain": "tfprof_nb Dashboard",
                                         "text/html": fallback}),
        new_output("display_data", data={"text/html": loader},
                   metadata={"tfprof_nb": "offline-loader"})])
    findings = [str(f) for f in prof.recommendations()]
    recs = new_code_cell(
        "findings = prof.recommendations()\nfor finding in findings:\n    print(finding)\n"
        "if not findings:\n    print('Nothing stands out.')",
        outputs=[new_output("stream", name="stdout",
                            text="\n".join(findings or ["Nothing stands out."]) + "\n")])
    nb = new_notebook(cells=[intro, load, view, recs], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(nb)
    write_page(nbformat.writes(nb), path)
    try:  # trusted here; a failure to sign only means Jupyter asks the reader to trust it
        _sign(nb)
    except Exception as exc:
        import warnings

        warnings.warn(f"{path}: not signed ({exc}); Jupyter will ask to trust it",
                      stacklevel=2)
    return path


def _sign(nb) -> None:
    """Record ``nb`` as trusted in this user's Jupyter signature store.  The store's folder is
    given: left to its default, the notary starts a Jupyter application whose logging set-up
    (``logging.config.dictConfig``) shuts down every logging handler of the caller's process.
    The folder is made where it is missing (a fresh machine, Jupyter never run): the notary
    writes its key there and does not make it."""
    import os

    from jupyter_core.paths import jupyter_data_dir
    from nbformat.sign import NotebookNotary

    data_dir = jupyter_data_dir()
    os.makedirs(data_dir, mode=0o700, exist_ok=True)  # (private, as Jupyter makes it)
    notary = NotebookNotary(data_dir=data_dir)
    try:
        notary.sign(nb)
    finally:
        notary.store.close()  # (what NotebookNotary.close does, since nbformat 5.11)


def _markdown_text(text: str) -> str:
    """``text`` with Markdown and HTML markup characters escaped (titles are user data)."""
    out = []
    for ch in text:
        if ch in "\\`*_{}[]()#+-.!<>&|":
            out.append("\\" + ch if ch not in "<>&" else {"<": "&lt;", ">": "&gt;",
                                                           "&": "&amp;"}[ch])
        else:
            out.append(ch)
    return "".join(out)
