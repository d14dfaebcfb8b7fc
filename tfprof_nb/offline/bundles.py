"""The built JavaScript modules the package ships (``tfprof_nb/static``, built from ``js/``):
the widgets' ES modules and the offline host.  A widget names its module (``bundle``, its
``js/src/<bundle>.ts``); ``static/bundles.json`` says which file holds it: the modules that
draw charts share one file (one plotly.js for them all), the others have their own."""

from __future__ import annotations

import hashlib
import json
import zlib
from functools import cache, lru_cache
from pathlib import Path

__all__ = ["STATIC", "WidgetBundleMissing", "bundle", "bundle_text", "deflated", "digest"]

STATIC = Path(__file__).resolve().parent.parent / "static"


class WidgetBundleMissing(RuntimeError):
    """The JavaScript bundle of the widgets was not built."""


_BUILD = "`npm --prefix js ci && npm --prefix js run build` (make test does this)"


@cache
def _files() -> dict:
    """{module: file stem} of the built bundles (``static/bundles.json``)."""
    path = STATIC / "bundles.json"
    if not path.is_file():
        raise WidgetBundleMissing(f"{path} is missing: build the widget bundle with {_BUILD}")
    return json.loads(path.read_text(encoding="utf-8"))["files"]


def bundle(name: str) -> Path:
    """Path of the built file holding module ``name`` (the offline host is its own file); a
    clear error when it was not built."""
    stem = name if name == "offline" else _files().get(name, name)
    path = STATIC / f"{stem}.js"
    if not path.is_file():
        raise WidgetBundleMissing(f"{path} is missing: build the widget bundle with {_BUILD}")
    return path


@cache
def bundle_text(name: str) -> str:
    """The source of the built file holding module ``name`` (read once)."""
    return _text(bundle(name))


@cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@lru_cache(maxsize=16)
def digest(source: str) -> str:
    """A short name of a module's source (its SHA-256): a notebook stores each module once,
    and the views and offline copies using it find it by this name."""
    return hashlib.sha256(source.encode()).hexdigest()[:20]


@lru_cache(maxsize=16)
def deflated(source: str) -> bytes:
    """A module's source deflated (the views with charts bundle plotly.js, which shrinks to
    about a third); the browser inflates it with ``DecompressionStream("deflate")``."""
    return zlib.compress(source.encode(), 9)
