"""tfprof_nb: profile TensorFlow training from a notebook and see the results inline.

    import tfprof_nb as tp
    prof = tp.load("logs/")          # logdir, run dir, one .xplane.pb, or a list
    prof.events                      # one row per trace event

Importing the package is cheap: pandas, the native library and TensorFlow load only when first
needed.
``tp.capture`` is the capture function (its modules: the ``tfprof_nb.capturing`` package) and
``tp.report`` the report function (its modules: ``tfprof_nb.reporting``).
"""

from __future__ import annotations

from . import reporting as _reporting  # light: the writers load widgets when called
from ._version import __version__
from .capturing.loop import Capture, capture  # light: TensorFlow loads when a capture starts
from .errors import (AnalysisWarning, CaptureError, CaptureWarning, HostAnalysisError,
                     LoadWarning, ObjectStoreError, ProfileFormatError)
from .reporting import export_notebook

__all__ = ["AnalysisWarning", "Capture", "CaptureError", "CaptureWarning", "HostAnalysisError",
           "KerasProfiler", "LoadWarning", "Monitor", "ObjectStoreError", "PerformanceCheckError",
           "Profile", "ProfileFormatError", "__version__", "capture", "capture_remote", "check",
           "compare", "export_notebook", "load", "load_ipython_extension", "report",
           "start_server", "widgets"]

_LAZY = {
    "load": ("tfprof_nb.loading", "load"),
    "Profile": ("tfprof_nb.profile", "Profile"),
    "KerasProfiler": ("tfprof_nb.capturing.keras_callback", "KerasProfiler"),
    "capture_remote": ("tfprof_nb.capturing.remote", "capture_remote"),
    "start_server": ("tfprof_nb.capturing.remote", "start_server"),
    "compare": ("tfprof_nb.comparing", "compare"),
    "check": ("tfprof_nb.checks", "check"),
    "PerformanceCheckError": ("tfprof_nb.errors", "PerformanceCheckError"),
    "Monitor": ("tfprof_nb.capturing.monitor", "Monitor"),
}


def report(source, path="tfprof_report.html", title: str | None = None):
    """Write the offline HTML report of ``source`` (a Profile, or anything ``tp.load``
    accepts: logdir, run directory, file, list) to ``path``; returns the file's path.

    One self-contained file: the whole dashboard, interactive, rendered by the same JS
    modules as the notebook widgets, with no request to any network address.
    """
    from .loading import load
    from .profile import Profile

    prof = source if isinstance(source, Profile) else load(source)
    return _reporting.report(prof, path, title)


def load_ipython_extension(ipython) -> None:
    """``%load_ext tfprof_nb``: register the ``%tfprof`` / ``%%tfprof`` magics."""
    from .magic import TfprofMagics

    ipython.register_magics(TfprofMagics)
    from ._error_display import register

    register(ipython)


def _show_errors_short() -> None:
    """Inside IPython, show tfprof_nb's own errors as their message, a hint and a folded
    traceback (:mod:`tfprof_nb._error_display`); nothing is imported outside IPython."""
    import sys

    if "IPython" in sys.modules:
        from ._error_display import register

        register()


_show_errors_short()


def __getattr__(name: str):
    if name == "widgets":
        import importlib

        return importlib.import_module("tfprof_nb.widgets")
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tfprof_nb' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
