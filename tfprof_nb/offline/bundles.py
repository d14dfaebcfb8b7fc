"""The built JavaScript modules the package ships (``tfprof_nb/static``, built from ``js/``):
one ES module per widget and the offline host."""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["STATIC", "WidgetBundleMissing", "bundle", "bundle_text"]

STATIC = Path(__file__).resolve().parent.parent / "static"


class WidgetBundleMissing(RuntimeError):
    """The JavaScript bundle of the widgets was not built."""


def bundle(name: str) -> Path:
    """Path of a built widget module; a clear error when it was not built."""
    path = STATIC / f"{name}.js"
    if not path.is_file():
        raise WidgetBundleMissing(
            f"{path} is missing: build the widget bundle with "
            "`npm --prefix js install && npm --prefix js run build` (make test does this)")
    return path


@cache
def bundle_text(name: str) -> str:
    """The source of a built module (read once)."""
    return bundle(name).read_text(encoding="utf-8")
