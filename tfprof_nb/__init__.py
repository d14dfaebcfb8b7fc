"""tfprof_nb: profile TensorFlow training from a notebook and see the results inline.

    import tfprof_nb as tp
    prof = tp.load("logs/")          # logdir, run dir, one .xplane.pb, or a list
    prof.events                      # one row per trace event

Importing the package is cheap: pandas, numba and TensorFlow load only when first needed.
"""

from __future__ import annotations

from ._version import __version__
from .errors import ProfileFormatError

__all__ = ["Profile", "ProfileFormatError", "__version__", "load"]

_LAZY = {
    "load": ("tfprof_nb.profile", "load"),
    "Profile": ("tfprof_nb.profile", "Profile"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tfprof_nb' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
