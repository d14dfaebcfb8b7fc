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

__all__ = ["SOURCE_DIR", "build_library", "library_name", "source_hash", "sanitizer_env"]

SOURCE_DIR = Path(__file__).resolve().parent
FLAGS = ("-O3", "-std=gnu99", "-pthread", "-fPIC", "-shared", "-fvisibility=hidden",
         "-fno-strict-aliasing")
# the checking build the fuzz tests run: AddressSanitizer and UndefinedBehaviorSanitizer, every
# report fatal (a process loading it needs libasan preloaded: see sanitizer_env)
SANITIZE_FLAGS = ("-O1", "-g", "-std=gnu99", "-pthread", "-fPIC", "-shared",
                  "-fvisibility=hidden", "-fno-strict-aliasing", "-fno-omit-frame-pointer",
                  "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
_PREFIX = "libtfprof_nb-"
_SANITIZED_PREFIX = "libtfprof_nb_sanitized-"


def _sources() -> list[Path]:
    return sorted(p for p in SOURCE_DIR.iterdir() if p.suffix in (".c", ".h"))


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def source_hash(sanitized: bool = False) -> str:
    """Hash of the C sources, the compiler command and the flags (16 hex digits)."""
    h = hashlib.sha256()
    for path in _sources():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(" ".join(_compiler() + list(SANITIZE_FLAGS if sanitized else FLAGS)).encode())
    return h.hexdigest()[:16]


def library_name(sanitized: bool = False) -> str:
    """File name of the library built from the current sources (``sanitized``: of the
    checking build, a different name so the two never replace each other)."""
    prefix = _SANITIZED_PREFIX if sanitized else _PREFIX
    return f"{prefix}{source_hash(sanitized)}.so"


def sanitizer_env(env: dict | None = None) -> dict:
    """``env`` (default ``os.environ``) for a Python process that loads the sanitized build:
    libasan preloaded (it must come before every other library), leak checks off (the
    interpreter keeps its memory to the end), every report fatal with exit code 99, and
    ``TFPROF_NB_SANITIZE=1`` so :mod:`tfprof_nb._native` loads that build."""
    out = dict(os.environ if env is None else env)
    asan = subprocess.run([*_compiler(), "-print-file-name=libasan.so"], capture_output=True,
                          text=True, check=True).stdout.strip()
    if not os.path.isabs(asan) or not os.path.isfile(asan):  # (clang prints the bare name)
        raise RuntimeError(f"the sanitized build needs GCC's AddressSanitizer runtime: "
                           f"{' '.join(_compiler())} -print-file-name=libasan.so gave {asan!r}"
                           " (set CC=gcc, with libasan installed)")
    out["LD_PRELOAD"] = asan
    out["ASAN_OPTIONS"] = ("detect_leaks=0:halt_on_error=1:exitcode=99:abort_on_error=0:"
                           "handle_segv=1:handle_sigbus=0:allow_user_segv_handler=1")
    out["UBSAN_OPTIONS"] = "halt_on_error=1:exitcode=99:print_stacktrace=1"
    out["TFPROF_NB_SANITIZE"] = "1"
    return out


def build_library(dest_dir: Path, sanitized: bool = False) -> Path:
    """Compile the sources into ``dest_dir``/:func:`library_name` (atomically; older builds
    of the same kind there are removed) and return its path.  Raises RuntimeError naming the
    compiler's output when compiling fails."""
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / library_name(sanitized)
    c_files = [str(p) for p in _sources() if p.suffix == ".c"]
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=dest_dir)
    os.close(fd)
    cmd = [*_compiler(), *(SANITIZE_FLAGS if sanitized else FLAGS), "-o", tmp, *c_files]
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
    for old in dest_dir.glob(f"{_SANITIZED_PREFIX if sanitized else _PREFIX}*.so"):
        if old != target:
            try:
                old.unlink()
            except OSError:
                pass
    return target


if __name__ == "__main__":
    print(build_library(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE_DIR))
