"""Hatch build hook: compile tfprof_nb's native library into the package being built.

Wheels carry the compiled library (and are tagged for the platform); editable installs build
it in place.  Without a C compiler an editable install still succeeds: the package then builds
the library on first use and says what is missing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _builder():
    path = Path(__file__).parent / "tfprof_nb" / "_native" / "build.py"
    spec = importlib.util.spec_from_file_location("_tfprof_nb_native_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NativeLibraryHook(BuildHookInterface):
    """Builds ``tfprof_nb/_native/libtfprof_nb-<hash>.so`` before the wheel is assembled."""

    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        builder = _builder()
        try:
            library = builder.build_library(builder.SOURCE_DIR)
        except RuntimeError as exc:
            if version == "editable":
                self.app.display_warning(f"tfprof_nb: {exc}")
                return
            raise
        build_data["artifacts"].append(str(library.relative_to(self.root)))
        if version != "editable":
            # a ctypes library: any Python 3, this platform
            from packaging.tags import sys_tags

            build_data["pure_python"] = False
            build_data["tag"] = f"py3-none-{next(iter(sys_tags())).platform}"
