"""Offline fallbacks for notebooks: what a widget output shows where no kernel runs.

A displayed tfprof_nb widget carries, next to the widget view, a ``text/html`` fallback: its
state packed into the output plus the offline host, so a front-end without the widget (an
nbconvert export, a notebook saved without widget state, Colab without the custom widget
manager) renders the very same view from the embedded data, with no network.  A second, tiny
output (the loader) renders widgets from the widget state an executed export stores
(``jupyter nbconvert --execute`` keeps the state and picks the widget view over the fallback).
Profile strings only ever reach the page as data, never as markup.
"""

from __future__ import annotations

import base64
import html
import os
import re
from functools import lru_cache

from ._base import bundle

__all__ = ["MAX_FALLBACK_BYTES", "fallback_html", "loader_html", "offline_box", "host_script"]

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


def offline_box(payload: str, module: str, placeholder: str) -> str:
    """The element the host renders into: the view's place, its payload (base64) and its ES
    module (``module`` is the module's source)."""
    if not _BASE64.fullmatch(payload):
        raise ValueError("an offline payload must be base64 text")
    return ('<div class="tfprof-offline"><div class="tfprof-offline-view">'
            f'<p class="tfprof-offline-note">{html.escape(placeholder)}</p></div>'
            f'<script type="application/octet-stream" class="tfprof-payload">{payload}</script>'
            f'<script type="application/octet-stream" class="tfprof-esm">{_esm_b64(module)}'
            '</script></div>')


def fallback_html(widget, limited: bool = True) -> str:
    """The ``text/html`` fallback of ``widget``: its packed state and its own ES module.

    With ``limited``, a fallback larger than the limit (see :data:`MAX_FALLBACK_BYTES`) is a
    note instead.
    """
    from ._payload import widget_payload

    name = type(widget).__name__
    limit = _limit() if limited else float("inf")
    if limit <= 0:
        return (f'<p class="tfprof-offline-note">tfprof_nb {html.escape(name)}: no offline '
                'copy (TFPROF_NB_MAX_FALLBACK_MB is not positive); write a report with '
                'prof.to_html(path).</p>')
    payload = widget_payload(widget)
    if payload.packed_bytes > limit:
        return (f'<p class="tfprof-offline-note">tfprof_nb {html.escape(name)}: the data of '
                f'this view ({payload.packed_bytes / 2**20:.0f} MB packed) is too large to keep '
                'in the notebook; write an offline report with prof.to_html(path).</p>')
    note = (f"tfprof_nb {name}: run the notebook, or trust it to see this view offline "
            "(it needs JavaScript).")
    return offline_box(payload.data, widget._esm, note) + host_script(
        "tfprofOffline.renderFallback(document.currentScript.previousElementSibling);")


def loader_html() -> str:
    """The loader output: renders saved widget state in an exported page; no-op elsewhere."""
    return host_script("tfprofOffline.bootNotebookExport();")
