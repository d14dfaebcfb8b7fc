"""Building tfprof_nb's native library from its C sources (standard library only).

The wheel's build hook (``hatch_build.py``) calls :func:`build_library` so installed packages
carry the compiled library; :mod:`tfprof_nb._native` calls it on first use when the library for
the current sources is missing (a source checkout, or C files edited since the last build).
The library's file name carries a hash of the sources and flags, so a stale build is never
loaded.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["SOURCE_DIR", "build_library", "library_name", "source_hash"]

SOURCE_DIR = Path(__file__).resolve().parent
FLAGS = ("-O3", "-std=gnu99", "-pthread", "-fPIC", "-shared", "-fvisibility=hidden",
         "-fno-strict-aliasing")
_PREFIX = "libtfprof_nb-"


def _sources() -> list[Path]:
    return sorted(p for p in SOURCE_DIR.iterdir() if p.suffix in (".c", ".h"))


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def source_hash() -> str:
    """Hash of the C sources, the compiler command and the flags (16 hex digits)."""
    h = hashlib.sha256()
    for path in _sources():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(" ".join(_compiler() + list(FLAGS)).encode())
    return h.hexdigest()[:16]


def library_name() -> str:
    """File name of the library built from the current sources."""
    return f"{_PREFIX}{source_hash()}.so"


def build_library(dest_dir: Path) -> Path:
    """Compile the sources into ``dest_dir``/:func:`library_name` (atomically; older builds
    there are removed) and return its path.  Raises RuntimeError naming the compiler's output
    when compiling fails."""
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / library_name()
    c_files = [str(p) for p in _sources() if p.suffix == ".c"]
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=dest_dir)
    os.close(fd)
    cmd = [*_compiler(), *FLAGS, "-o", tmp, *c_files]
    try:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except OSError as exc:
            raise RuntimeError(
                f"tfprof_nb needs a C compiler to build its decoder once ({cmd[0]!r}: {exc}); "
                "install one (gcc or clang) or set CC") from exc
        if done.returncode != 0:
            raise RuntimeError(f"building tfprof_nb's native library failed:\n{' '.join(cmd)}\n"
                               f"{done.stderr.strip()}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    for old in dest_dir.glob(f"{_PREFIX}*.so"):
        if old != target:
            try:
                old.unlink()
            except OSError:
                pass
    return target


if __name__ == "__main__":
    print(build_library(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE_DIR))
