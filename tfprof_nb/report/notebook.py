"""A small report notebook to share: the summary and the dashboard, already rendered.

The outputs are written without a kernel: the summary as text and the dashboard as its
offline fallback (packed state plus the same JS modules), so the notebook shows its views in
Jupyter once trusted, and in an HTML export, with no kernel and no network.  Its code cells
reload the profile, so running them with the profile at hand gives the live widgets back.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

__all__ = ["export_notebook"]


def _source_of(prof) -> str:
    """What to pass to ``tp.load`` to get ``prof`` back: its run directory, file or files."""
    paths = [Path(p) for p in prof.source]
    if not paths:
        return "'<path to the profile>'"
    if len(paths) == 1:
        return repr(str(paths[0]))
    parents = {p.parent for p in paths}
    return repr(str(parents.pop())) if len(parents) == 1 else repr([str(p) for p in paths])


def export_notebook(prof, path, title: str | None = None) -> Path:
    """Write a report notebook of ``prof`` to ``path`` and return the path.

    The notebook is signed on this machine (so Jupyter here trusts it and runs its views);
    elsewhere, Jupyter asks the reader to trust it before the views run.
    """
    import nbformat
    from nbformat.v4 import (new_code_cell, new_markdown_cell, new_notebook,
                             new_output)

    from .. import __version__
    from ..widgets._offline import loader_html
    from ..widgets.dashboard import Dashboard

    path = Path(path).expanduser()
    if path.suffix != ".ipynb":
        path = path.with_suffix(".ipynb")
    when = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    heading = title or "Profile report"
    intro = new_markdown_cell(
        f"# {_markdown_text(heading)}\n\nWritten {when} by tfprof_nb {__version__}. The views "
        "below are embedded in the notebook: they work without a kernel and without a network "
        "(trust the notebook if Jupyter asks). Run the cells with the profile at hand for "
        "the live widgets.")
    load = new_code_cell(
        f"import tfprof_nb as tp\n\nprof = tp.load({_source_of(prof)})\nprint(prof.summary())",
        outputs=[new_output("stream", name="stdout", text=prof.summary() + "\n")])
    dashboard = Dashboard(prof)
    data, _ = dashboard._repr_mimebundle_()
    view = new_code_cell("prof.show()", outputs=[
        new_output("display_data", data={"text/plain": "tfprof_nb Dashboard",
                                         "text/html": data["text/html"]}),
        new_output("display_data", data={"text/html": loader_html()},
                   metadata={"tfprof_nb": "offline-loader"})])
    findings = [f"- {f}" for f in prof.recommendations()] or ["- Nothing stands out."]
    recs = new_code_cell("for finding in prof.recommendations():\n    print(finding)",
                         outputs=[new_output("stream", name="stdout",
                                             text="\n".join(f[2:] for f in findings) + "\n")])
    nb = new_notebook(cells=[intro, load, view, recs], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(nb)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    try:  # trusted here; a failure to sign only means Jupyter asks the reader to trust it
        from nbformat.sign import NotebookNotary

        NotebookNotary().sign(nb)
    except Exception as exc:
        import warnings

        warnings.warn(f"{path}: not signed ({exc}); Jupyter will ask to trust it",
                      stacklevel=2)
    return path


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
