"""Self-contained offline pages of views: the view's state packed, its ES module and the
offline host that renders it (the same code as the live widget).  A Content-Security-Policy
forbids every network request, so a page works from ``file://`` on an air-gapped machine and
cannot leak anything.  The report (``tfprof_nb.reporting``) is such a page of the dashboard.
"""

from __future__ import annotations

import datetime as _dt
import html
from pathlib import Path

from .limits import page_limit
from .loader import host_script, offline_box
from .payload import widget_payload

__all__ = ["widget_page", "write_page", "written_at"]

_CSP = ("default-src 'none'; script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; "
        "img-src data: blob:")

_STYLE = """
body { margin: 0; font: 13px system-ui, sans-serif; color: #222; background: #fff; }
header { padding: 10px 16px; border-bottom: 1px solid #ddd; }
header h1 { font-size: 18px; margin: 0 0 4px 0; }
header pre { margin: 0; color: #555; font: 12px ui-monospace, monospace; white-space: pre-wrap; }
main { padding: 8px 16px; }
.tfprof-offline-note { color: #666; }
@media (prefers-color-scheme: dark) {
  :root { --jp-layout-color0: #111; --jp-layout-color1: #1b1b1b; --jp-layout-color2: #262626;
          --jp-ui-font-color1: #ddd; --jp-ui-font-color2: #aaa; --jp-border-color1: #444;
          --jp-border-color2: #333; }
  body { color: #ddd; background: #111; }
  header { border-color: #333; }
  header pre, .tfprof-offline-note { color: #aaa; }
}
"""


def written_at() -> str:
    """Now, local time, as reports and report notebooks state it."""
    return _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")


def widget_page(widget, title: str, summary: str = "") -> str:
    """A self-contained offline page rendering ``widget`` (any tfprof_nb view)."""
    from .._version import __version__

    payload = widget_payload(widget, budget=page_limit())
    when = written_at()
    box = offline_box("Loading the profile…", payload=payload, module=widget._module_source)
    summary = f"{summary}\n" if summary else ""
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="tfprof_nb {html.escape(__version__)}">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>"
        f"<header><h1>{html.escape(title)}</h1>"
        f"<pre class=\"tfprof-summary\">{html.escape(summary)}"
        f"Written {html.escape(when)} by tfprof_nb {html.escape(__version__)}.</pre></header>"
        f"<main>{box}<noscript>This report needs JavaScript.</noscript></main>\n"
        + host_script("tfprofOffline.renderFallback(document.querySelector('.tfprof-offline'));")
        + "\n</body></html>\n")


def write_page(text: str, path, default_name: str = "tfprof_report.html") -> Path:
    """Write a page (or any text file) to ``path`` (a file, or a directory to put
    ``default_name`` in) through a temporary file, so a failure never leaves half a report;
    returns the file's path."""
    path = Path(path).expanduser()
    if path.is_dir():
        path = path / default_name
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
