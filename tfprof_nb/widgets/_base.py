"""The private base of tfprof_nb's widgets: bundle loading and error reporting."""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

STATIC = Path(__file__).resolve().parent.parent / "static"


class WidgetBundleMissing(RuntimeError):
    """The JavaScript bundle of the widgets was not built."""


def bundle(name: str) -> Path:
    """Path of a built widget module; a clear error when it was not built."""
    path = STATIC / f"{name}.js"
    if not path.is_file():
        raise WidgetBundleMissing(
            f"{path} is missing: build the widget bundle with "
            "`npm --prefix js ci && npm --prefix js run build` (make test does this)")
    return path


class BaseWidget(anywidget.AnyWidget):
    """Common traits: ``error`` carries a message the view shows instead of failing."""

    error = traitlets.Unicode("").tag(sync=True)

    def _safely(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # a widget must never take the kernel down
            self.error = f"{type(exc).__name__}: {exc}"
            return None
