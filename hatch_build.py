"""Hatch build hook: compile tfprof_nb's native library into the package being built.

Wheels carry the compiled library and its record (``tfprof_nb/_native/prebuilt.json``, so the
installed package loads it with no compiler); editable installs build it in place.  Without a
C compiler an editable install still succeeds: the package then builds the library on first
use and says what is missing.

By default the library is built by this machine's compiler and the wheel tagged for this
platform.  ``tools/build_wheels.py`` (``make wheels``) cross-builds instead: it sets
``TFPROF_NB_ZIG_TARGET`` (a zig target, e.g. ``x86_64-linux-gnu.2.17``) and
``TFPROF_NB_WHEEL_TAG`` (the tag that target's library is good for).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _builder():
    path = Path(__file__).parent / "tfprof_nb" / "_native" / "build.py"
    spec = importlib.util.spec_from_file_location("_tfprof_nb_native_build", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclass looks its module up there)
    spec.loader.exec_module(module)
    return module


def _host_tag() -> str:
    from packaging.tags import sys_tags

    return f"py3-none-{next(iter(sys_tags())).platform}"  # a ctypes library: any Python 3


class NativeLibraryHook(BuildHookInterface):
    """Builds ``tfprof_nb/_native/libtfprof_nb-<hash>.so`` before the wheel is assembled."""

    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        builder = _builder()
        if version == "editable":
            try:
                builder.build_library(builder.SOURCE_DIR)
            except RuntimeError as exc:
                self.app.display_warning(f"tfprof_nb: {exc}")
            return
        zig_target = os.environ.get("TFPROF_NB_ZIG_TARGET")
        if zig_target:
            tag = os.environ["TFPROF_NB_WHEEL_TAG"]
            staging = Path(self.root) / "build" / "native" / zig_target
            shutil.rmtree(staging, ignore_errors=True)
            library = builder.build_library(staging, toolchain=builder.zig_toolchain(zig_target))
            build_data["force_include"][str(library)] = f"tfprof_nb/_native/{library.name}"
        else:
            tag, staging = _host_tag(), Path(self.root) / "build" / "native" / "host"
            library = builder.build_library(builder.SOURCE_DIR)
            build_data["artifacts"].append(str(library.relative_to(self.root)))
        staging.mkdir(parents=True, exist_ok=True)
        record = builder.write_prebuilt(staging, library, zig_target or "host")
        build_data["force_include"][str(record)] = f"tfprof_nb/_native/{builder.PREBUILT}"
        build_data["pure_python"] = False
        build_data["tag"] = tag
