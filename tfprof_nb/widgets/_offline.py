"""Offline fallbacks for notebooks: what a widget output shows where no kernel runs.

A displayed tfprof_nb widget carries, next to the widget view, a ``text/html`` fallback: its
state packed into the output plus the offline host, so a front-end without the widget (an
nbconvert export, a notebook saved without widget state, Colab without the custom widget
manager) renders the very same view from the embedded data, with no network.  A second output
(the loader, invisible) renders widgets from the widget state an executed export stores
(``jupyter nbconvert --execute`` keeps the state and picks the widget view over the
fallback), and carries the view's trace-event details, which both ways read on the first
click.
Profile strings only ever reach the page as data, never as markup.
"""

from __future__ import annotations

import base64
import html
import os
import re
from functools import lru_cache

from ._base import bundle

__all__ = ["MAX_FALLBACK_BYTES", "display_outputs", "fallback_html", "host_script",
           "loader_html", "offline_box"]

# A fallback larger than this (packed) is replaced by a note: notebooks must stay shareable.
# The environment variable TFPROF_NB_MAX_FALLBACK_MB overrides it (0: never embed data).
MAX_FALLBACK_BYTES = 32 * 2**20
_BASE64 = re.compile(r"[A-Za-z0-9+/=]*")


def _limit() -> float:
    value = os.environ.get("TFPROF_NB_MAX_FALLBACK_MB")
    if value is None:
        return MAX_FALLBACK_BYTES
    try:
        mb = float(value)
    except ValueError:
        raise ValueError("TFPROF_NB_MAX_FALLBACK_MB must be a number of MB, "
                         f"got {value!r}") from None
    return mb * 2**20 if mb == mb else MAX_FALLBACK_BYTES  # nan: the default


@lru_cache(maxsize=None)
def _static(name: str) -> str:
    return bundle(name).read_text(encoding="utf-8")


def host_script(call: str) -> str:
    """The offline host as an inline classic script that then runs ``call``."""
    source = _static("offline")
    lowered = source.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise RuntimeError(f"{bundle('offline')} cannot be inlined in HTML "
                           "(it contains '</script' or '<!--')")
    return f"<script>{source}\n{call}</script>"


@lru_cache(maxsize=16)
def _esm_b64(source: str) -> str:
    return base64.b64encode(source.encode()).decode("ascii")


def _data_script(cls: str, b64: str, model_id: str | None = None) -> str:
    if not _BASE64.fullmatch(b64):
        raise ValueError("offline data must be base64 text")
    owner = f' data-model-id="{html.escape(model_id)}"' if model_id else ""
    return f'<script type="application/octet-stream" class="{cls}"{owner}>{b64}</script>'


def offline_box(payload, module: str, placeholder: str, model_id: str | None = None,
                details: bool = True) -> str:
    """The element the host renders into: the view's place, its packed state, its ES module
    (``module`` is the module's source) and, with ``details``, its packed event details.
    Without them, the page looks them up by ``model_id`` (in the loader output)."""
    parts = ['<div class="tfprof-offline"',
             f' data-model-id="{html.escape(model_id)}">' if model_id else ">",
             '<div class="tfprof-offline-view">',
             f'<p class="tfprof-offline-note">{html.escape(placeholder)}</p></div>',
             _data_script("tfprof-payload", payload.data),
             _data_script("tfprof-esm", _esm_b64(module))]
    if details and payload.details:
        parts.append(_data_script("tfprof-details", payload.details))
    return "".join(parts) + "</div>"


def _too_big(widget, limited: bool):
    """(note, None) when the limit keeps the data out of the notebook, else (None, payload)."""
    name = html.escape(type(widget).__name__)
    limit = _limit() if limited else float("inf")
    if limit <= 0:
        return (f'<p class="tfprof-offline-note">tfprof_nb {name}: no offline copy '
                '(TFPROF_NB_MAX_FALLBACK_MB is not positive); write a report with '
                'prof.to_html(path).</p>'), None
    from ._payload import widget_payload

    payload = widget_payload(widget)
    if payload.packed_bytes > limit:
        return (f'<p class="tfprof-offline-note">tfprof_nb {name}: the data of this view '
                f'({payload.packed_bytes / 2**20:.0f} MB packed) is too large to keep in the '
                'notebook; write an offline report with prof.to_html(path).</p>'), None
    return None, payload


def _fallback(widget, payload, details: bool) -> str:
    note = (f"tfprof_nb {type(widget).__name__}: run the notebook, or trust it to see this "
            "view offline (it needs JavaScript).")
    return offline_box(payload, widget._esm, note, widget.model_id, details) + host_script(
        "tfprofOffline.renderFallback(document.currentScript.previousElementSibling);")


def fallback_html(widget, limited: bool = True) -> str:
    """The self-contained ``text/html`` fallback of ``widget``: its packed state, event
    details and its own ES module.  With ``limited``, a fallback larger than the limit (see
    :data:`MAX_FALLBACK_BYTES`) is a note instead."""
    note, payload = _too_big(widget, limited)
    return note or _fallback(widget, payload, details=True)


def display_outputs(widget, limited: bool = True) -> tuple[str, str]:
    """(``text/html`` fallback, loader) for displaying ``widget``: the event details go
    once, in the loader, where the fallback and an export of saved widget state find them."""
    note, payload = _too_big(widget, limited)
    if note:
        return note, loader_html()
    return _fallback(widget, payload, details=False), loader_html(widget.model_id,
                                                                  payload.details)


def loader_html(model_id: str | None = None, details: str | None = None) -> str:
    """The loader output: renders saved widget state in an exported page (a no-op in a live
    notebook) and carries the event details of the view ``model_id``."""
    data = _data_script("tfprof-details", details, model_id) if details and model_id else ""
    return data + host_script("tfprofOffline.bootNotebookExport();")
