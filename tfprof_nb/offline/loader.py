"""Offline fallbacks for notebooks: what a widget output shows where no kernel runs.

Displaying a tfprof_nb widget writes two outputs.  The first is the widget view with a
``text/html`` alternative: the place of the view.  The second, the loader (invisible), carries
the view's data once: its state packed, its ES module and its trace-event details, plus the
offline host.  Wherever no live widget can show, the loader renders the very same view from
that data, with no network: into the placeholder (an nbconvert export of a notebook saved
without widget state, a front-end without the widget), from the widget state an executed
export stores (``jupyter nbconvert --execute`` keeps it and picks the widget view), and into
the widget output of a trusted notebook reopened in JupyterLab or Notebook 7 whose kernel no
longer holds the widget ("model not found").
A bundle asked for alone (``_repr_mimebundle_``) carries a self-contained fallback instead.
Profile strings only ever reach the page as data, never as markup.

A notebook stores each piece of data once, whatever the number of views showing it: a loader
output's pieces (the view's ES module, each large trait of its state packed alone, its event
details) are named by their digests, and only the latest loader output using a piece carries
it; the others name it (:func:`display_loader`), and the host finds it anywhere on the page
(``js/src/shared_module.ts``).  The rule when a carrier is gone (its output cleared or its
cell deleted): each view naming a piece no output carries shows a sentence saying so in its
place (in an export keeping the widget state, it draws from that state instead), and the views
with their pieces still draw; running a cell again makes its outputs the carriers of their
pieces.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from functools import lru_cache

from .bundles import bundle, bundle_text, deflated, digest
from .limits import fallback_limit, timeline_limit
from .payload import widget_payload

__all__ = ["display_loader", "display_outputs", "esm_b64", "fallback_html", "host_script",
           "loader_html", "loader_output", "loader_outputs", "offline_box", "placeholder_html"]

_BASE64 = re.compile(r"[A-Za-z0-9+/=]*")


def host_script(call: str) -> str:
    """The offline host as an inline classic script that then runs ``call``."""
    source = bundle_text("offline")
    lowered = source.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise RuntimeError(f"{bundle('offline')} cannot be inlined in HTML "
                           "(it contains '</script' or '<!--')")
    return f"<script>{source}\n{call}</script>"


@lru_cache(maxsize=16)
def esm_b64(source: str) -> str:
    """A module's source deflated and base64-encoded (the host inflates it): the views with
    charts bundle plotly.js, which shrinks to about a third."""
    return base64.b64encode(deflated(source)).decode("ascii")


def _data_script(cls: str, b64: str, model_id: str | None = None, name: str = "") -> str:
    if not _BASE64.fullmatch(b64):
        raise ValueError("offline data must be base64 text")
    owner = f' data-model-id="{html.escape(model_id)}"' if model_id else ""
    owner += f' data-digest="{html.escape(name)}"' if name else ""
    return f'<script type="application/octet-stream" class="{cls}"{owner}>{b64}</script>'


def _module_script(source: str, model_id: str | None = None, carry: bool = True) -> str:
    """The view's ES module, named by its digest; without ``carry`` only its name (the host
    finds the source in another output of the page, or in the page's saved widget state)."""
    return _data_script("tfprof-esm", esm_b64(source) if carry else "", model_id,
                        digest(source))


def offline_box(placeholder: str, model_id: str | None = None, payload=None,
                module: str | None = None) -> str:
    """The element the host renders into: the view's place (showing ``placeholder`` until
    then) and, given a ``payload``, its packed state and event details and its ES module
    (``module`` is the module's source).  Without them, the loader output of ``model_id``
    has them."""
    parts = ['<div class="tfprof-offline"',
             f' data-model-id="{html.escape(model_id)}">' if model_id else ">",
             '<div class="tfprof-offline-view">',
             f'<p class="tfprof-offline-note">{html.escape(placeholder)}</p></div>']
    if payload is not None:
        parts += [_data_script("tfprof-payload", payload.data), _module_script(module or "")]
        if payload.details:
            parts.append(_data_script("tfprof-details", payload.details))
    return "".join(parts) + "</div>"


def _too_big(widget, limit: float, split: bool = False, timeline_budget: float | None = None):
    """(note, None) when ``limit`` (packed bytes) keeps the data out, else (None, payload),
    split in parts for loaders (a trace viewer's copy in ``timeline_budget``, when given)."""
    name = html.escape(type(widget).__name__)
    if limit <= 0:
        return (f'<p class="tfprof-offline-note">tfprof_nb {name}: no offline copy '
                '(TFPROF_NB_MAX_FALLBACK_MB is not positive); write a report with '
                'prof.to_html(path).</p>'), None
    payload = widget_payload(widget, budget=limit, split=split, timeline_budget=timeline_budget)
    if payload.packed_bytes > limit:
        return (f'<p class="tfprof-offline-note">tfprof_nb {name}: the data of this view '
                f'({payload.packed_bytes / 2**20:.0f} MB packed) is too large to keep in the '
                'notebook; write an offline report with prof.to_html(path).</p>'), None
    return None, payload


def _note(widget) -> str:
    return (f"tfprof_nb {type(widget).__name__}: run the notebook, or trust it to see this "
            "view offline (it needs JavaScript).")


def fallback_html(widget, limit: float | None = None) -> str:
    """The self-contained ``text/html`` fallback of ``widget``: its packed state, event
    details and its own ES module, in at most ``limit`` packed bytes (default: the
    notebook's, see :func:`~tfprof_nb.offline.limits.fallback_limit`; a larger copy is a
    note instead)."""
    note, payload = _too_big(widget, fallback_limit() if limit is None else limit)
    if note:
        return note
    box = offline_box(_note(widget), widget.model_id, payload, widget._module_source)
    return box + host_script(
        "tfprofOffline.renderFallback(document.currentScript.previousElementSibling);")


def placeholder_html(widget) -> str:
    """The ``text/html`` of a displayed widget's output: the view's place, which the loader
    output after it fills wherever no live widget shows (made at once: no data)."""
    return offline_box(_note(widget), widget.model_id)


def loader_output(widget, limit: float | None = None) -> str:
    """The loader output of a displayed ``widget``, carrying every piece of its offline copy
    (in at most ``limit`` packed bytes; default: the notebook's), or the note saying why
    there is none."""
    made = _loader_pieces(widget, limit)
    return made if isinstance(made, str) else _markup(*made)


def loader_outputs(widget, limit: float | None = None) -> tuple[str, str]:
    """The loader output of ``widget`` carrying its pieces, and the same naming them only
    (one pair of notes where there is no offline copy)."""
    made = _loader_pieces(widget, limit)
    if isinstance(made, str):
        return made, made
    return _markup(*made), _markup(*made, carried=set())


@dataclass(frozen=True)
class _Piece:
    """A piece of a loader output, stored once per notebook: its script's class, its digest
    and its base64 text."""

    cls: str
    name: str
    text: str


def _loader_pieces(widget, limit: float | None = None):
    """(model id, packed state, pieces) of the loader output of ``widget``, or the note
    (with the host) saying why it has no offline copy.  A notebook's (no ``limit``) keeps a
    trace viewer's copy to its share of the notebook's limit; a given ``limit`` (a report
    notebook's) is the whole view's."""
    share = timeline_limit(fallback_limit()) if limit is None else None
    note, payload = _too_big(widget, fallback_limit() if limit is None else limit, True, share)
    if note:
        return note + loader_html()
    source = widget._module_source
    pieces = [_Piece("tfprof-esm", digest(source), esm_b64(source))]
    pieces += [_Piece("tfprof-part", name, text) for name, text in payload.parts.items()]
    if payload.details:
        pieces.append(_Piece("tfprof-details", payload.details_name, payload.details))
    return widget.model_id, payload.data, tuple(pieces)


def _markup(model_id: str, data: str, pieces, carried: set | None = None) -> str:
    """A loader output: the packed state, each piece (its text where ``carried`` names it,
    default: all) and the host."""
    scripts = [_data_script("tfprof-payload", data, model_id)]
    scripts += [_data_script(p.cls, p.text if carried is None or p.name in carried else "",
                             model_id, p.name) for p in pieces]
    return "".join(scripts) + host_script("tfprofOffline.bootLoader(document.currentScript);")


# {piece digest: display id of the loader output carrying it}
_CARRIER: dict[str, str] = {}
# {display id: (model id, packed state, pieces, digests it carries)} of the loader outputs
# carrying a piece (the pieces it no longer carries keep their names only)
_SHOWN: dict[str, tuple] = {}
_META = {"tfprof_nb": "offline-loader"}


def display_loader(widget, safely=None) -> None:
    """Display the loader output of ``widget``.  A notebook keeps each piece (module, large
    trait, event details) once: the latest loader output using it carries it, and the one
    that carried it before becomes the same output naming it (``update_display``), so the
    pieces survive re-running any cell; the host finds them wherever they are on the page."""
    import uuid

    from IPython.display import display

    # safely(make): make(widget), or a note saying why it failed
    made = safely(_loader_pieces) if safely else _loader_pieces(widget)
    if isinstance(made, str) or made is None:  # a note: no offline copy
        display({"text/html": made or loader_html()}, metadata=_META, raw=True)
        return
    new_id = f"tfprof-loader-{uuid.uuid4().hex}"
    display({"text/html": _markup(*made)}, metadata=_META, raw=True, display_id=new_id)
    names = {p.name for p in made[2]}
    _SHOWN[new_id] = (*made, set(names))
    _hand_over(new_id, names)


def _hand_over(new_id: str, names: set) -> None:
    """Make ``new_id`` the carrier of ``names``: every output that carried one of them names
    it from now on (its text rewritten)."""
    from IPython.display import update_display

    touched = set()
    for name in names:
        old = _CARRIER.get(name)
        _CARRIER[name] = new_id
        if old is not None and old != new_id and old in _SHOWN:
            _SHOWN[old][3].discard(name)
            touched.add(old)
    for old in touched:
        model_id, data, pieces, carried = _SHOWN[old]
        pieces = tuple(p if p.name in carried else _Piece(p.cls, p.name, "") for p in pieces)
        _SHOWN[old] = (model_id, data, pieces, carried)
        update_display({"text/html": _markup(model_id, data, pieces, carried)},
                       metadata=_META, raw=True, display_id=old)
        if not carried:
            del _SHOWN[old]


def display_outputs(widget, limit: float | None = None) -> tuple[str, str]:
    """(``text/html`` of the widget output, loader output) for displaying ``widget``: the
    first is the view's place, the second its data and the host that renders it offline."""
    return placeholder_html(widget), loader_output(widget, limit)


def loader_html(model_id: str | None = None, payload=None, module: str | None = None,
                carry: bool = True) -> str:
    """The loader output: the data of the view ``model_id`` (packed state, ES module, event
    details; without ``carry``, the module's name only) and the host, which renders that view
    wherever no live widget shows it (a no-op next to a live widget) and renders saved widget
    state in an exported page."""
    parts = []
    if model_id and payload is not None:
        parts += [_data_script("tfprof-payload", payload.data, model_id),
                  _module_script(module or "", model_id, carry)]
        parts += [_data_script("tfprof-part", text, model_id, name)
                  for name, text in payload.parts.items()]
        if payload.details:
            parts.append(_data_script("tfprof-details", payload.details, model_id,
                                      payload.details_name))
    return "".join(parts) + host_script("tfprofOffline.bootLoader(document.currentScript);")
