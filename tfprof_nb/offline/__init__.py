"""Views outside a live kernel, and the wire format they share with the live widgets.

A widget's data goes to the browser as typed columns (``columns``); the JS modules it is
drawn by are built into ``tfprof_nb/static`` (``bundles``).  Where no kernel runs (a report,
a notebook opened elsewhere, an HTML export) the same modules render the same state, packed
into the page (``payload``; a trace viewer's event details: ``details``), by the offline host:
a notebook output's fallback and loader (``loader``) or a standalone page (``page``).

This package sits below ``widgets``: it knows widgets only by what they offer, as any
anywidget does (``get_state()``, ``model_id``), plus ``_module_source`` (the source of its ES
module; its ``_esm`` loads it), ``_offline_state()`` (its
state with the parts a live widget builds when its page asks), ``_timeline_source()`` (the
source of the trace viewer inside a widget, or None) and ``_timeline_prefix()`` (the prefix of
that viewer's traits).  The widgets' base class
calls the functions below; ``report`` writes pages with them.
"""

from __future__ import annotations

from .bundles import WidgetBundleMissing, bundle
from .loader import (display_loader, display_outputs, fallback_html, loader_html, loader_output,
                     placeholder_html)
from .page import widget_page, write_page, written_at
from .payload import widget_payload

__all__ = ["WidgetBundleMissing", "bundle", "display_loader", "display_outputs", "fallback_html",
           "loader_html", "loader_output", "placeholder_html", "widget_page", "widget_payload",
           "write_page", "written_at"]
