"""Building tfprof_nb's native library from its C sources (standard library only).

The wheel's build hook (``hatch_build.py``) calls :func:`build_library` so installed packages
carry the compiled library; :mod:`tfprof_nb._native` calls it on first use when the library for
the current sources is missing (a source checkout, or C files edited since the last build).
The library's file name carries a hash of the sources, the compiler and the flags, so a stale
build is never loaded.  A wheel's library (cross-built with zig for the wheel's platform,
``tools/build_wheels.py``) comes with a record, :data:`PREBUILT`, naming it and the sources it
was built from: :func:`prebuilt_library` finds it whatever compiler the machine has, or none.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SOURCE_DIR", "PREBUILT", "Toolchain", "build_library", "library_name", "source_hash",
           "sources_hash", "sanitizer_env", "host_toolchain", "zig_toolchain",
           "prebuilt_library", "write_prebuilt"]

SOURCE_DIR = Path(__file__).resolve().parent
FLAGS = ("-O3", "-std=gnu99", "-pthread", "-fPIC", "-shared", "-fvisibility=hidden",
         "-fno-strict-aliasing")
# the checking build the fuzz tests run: AddressSanitizer and UndefinedBehaviorSanitizer, every
# report fatal (a process loading it needs libasan preloaded: see sanitizer_env)
SANITIZE_FLAGS = ("-O1", "-g", "-std=gnu99", "-pthread", "-fPIC", "-shared",
                  "-fvisibility=hidden", "-fno-strict-aliasing", "-fno-omit-frame-pointer",
                  "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
# cross builds: the same flags, debug information stripped (zig cc writes it by default)
CROSS_FLAGS = (*FLAGS, "-s")
_PREFIX = "libtfprof_nb-"
_SANITIZED_PREFIX = "libtfprof_nb_sanitized-"
# a wheel's record of its library: {"library": file name, "sources": sources_hash(), "target"}
PREBUILT = "prebuilt.json"


@dataclass(frozen=True)
class Toolchain:
    """How to compile: ``command`` runs the compiler, ``identity`` is what the library's name
    hashes for it (the command, or a machine-independent name of it), ``flags`` its flags."""

    command: tuple[str, ...]
    identity: str
    flags: tuple[str, ...]


def _sources() -> list[Path]:
    return sorted(p for p in SOURCE_DIR.iterdir() if p.suffix in (".c", ".h"))


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def host_toolchain(sanitized: bool = False) -> Toolchain:
    """This machine's compiler (``$CC``, else ``cc``) with the flags of the build asked for."""
    command = tuple(_compiler())
    return Toolchain(command, " ".join(command), SANITIZE_FLAGS if sanitized else FLAGS)


def zig_toolchain(target: str, python: str = sys.executable) -> Toolchain:
    """zig's C compiler from the ``ziglang`` package (run by ``python``) for ``target`` (a zig
    triple such as ``x86_64-linux-gnu.2.17`` or ``aarch64-macos.11.0``): named in the hash by
    zig's version and the target, not by where it is installed."""
    from importlib.metadata import version

    identity = f"zig {version('ziglang')} cc -target {target}"
    return Toolchain((python, "-m", "ziglang", "cc", "-target", target), identity, CROSS_FLAGS)


def _hasher() -> hashlib._Hash:
    h = hashlib.sha256()
    for path in _sources():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h


def sources_hash() -> str:
    """Hash of the C sources alone (16 hex digits)."""
    return _hasher().hexdigest()[:16]


def source_hash(sanitized: bool = False, toolchain: Toolchain | None = None) -> str:
    """Hash of the C sources, the compiler and the flags (16 hex digits)."""
    tc = toolchain or host_toolchain(sanitized)
    h = _hasher()
    h.update(" ".join((tc.identity, *tc.flags)).encode())
    return h.hexdigest()[:16]


def library_name(sanitized: bool = False, toolchain: Toolchain | None = None) -> str:
    """File name of the library built from the current sources (``sanitized``: of the
    checking build, a different name so the two never replace each other; ``toolchain``:
    built by that compiler, default this machine's).  ``.so`` on every platform: ctypes loads
    the file by its path, whatever its suffix (a Mach-O ``.dylib`` on macOS)."""
    prefix = _SANITIZED_PREFIX if sanitized else _PREFIX
    return f"{prefix}{source_hash(sanitized, toolchain)}.so"


def write_prebuilt(directory: Path, library: Path, target: str) -> Path:
    """Write the record of ``library`` (built from the current sources for ``target``) as
    ``directory``/:data:`PREBUILT`."""
    record = {"library": Path(library).name, "sources": sources_hash(), "target": target}
    path = Path(directory) / PREBUILT
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def prebuilt_library(directory: Path) -> Path | None:
    """The library a wheel put in ``directory`` (its :data:`PREBUILT` record), if it was built
    from the sources there now; None otherwise (no record, sources edited since)."""
    try:
        record = json.loads((Path(directory) / PREBUILT).read_text())
    except (OSError, ValueError):
        return None
    path = Path(directory) / str(record.get("library", ""))
    if record.get("sources") != sources_hash() or path.parent != Path(directory):
        return None
    return path if path.is_file() else None


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


def build_library(dest_dir: Path, sanitized: bool = False,
                  toolchain: Toolchain | None = None) -> Path:
    """Compile the sources into ``dest_dir``/:func:`library_name` (atomically; older builds
    of the same kind there are removed) with ``toolchain`` (default this machine's compiler)
    and return its path: each source compiled on its own, as many at once as the machine
    has cores, then linked (the same file as one command compiling them all).  Raises
    RuntimeError naming the compiler's output when compiling fails."""
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    tc = toolchain or host_toolchain(sanitized)
    target = dest_dir / library_name(sanitized, tc)
    c_files = [p for p in _sources() if p.suffix == ".c"]
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=dest_dir)
    os.close(fd)
    try:
        with tempfile.TemporaryDirectory(prefix="tfprof_nb-build-") as objects:
            objs = _compile_each(tc, c_files, Path(objects))
            _compiler_run([*tc.command, *tc.flags, "-o", tmp, *objs])
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


# flags that only linking reads: left out when each source is compiled on its own
_LINK_ONLY = ("-shared", "-s")


def _compile_each(tc: Toolchain, c_files: list[Path], out_dir: Path) -> list[str]:
    """Compile each source to an object file in ``out_dir``, as many at once as the machine
    has cores (the largest, walk.c, takes half of a serial build); their paths in order."""
    from concurrent.futures import ThreadPoolExecutor

    flags = [f for f in tc.flags if f not in _LINK_ONLY]
    objs = {path: str(out_dir / f"{path.stem}.o") for path in c_files}
    # the largest sources first, so the longest compile does not start last
    jobs = [[*tc.command, *flags, "-c", str(path), "-o", objs[path]]
            for path in sorted(c_files, key=lambda p: -p.stat().st_size)]
    with ThreadPoolExecutor(max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        for _ in pool.map(_compiler_run, jobs):
            pass
    return [objs[path] for path in c_files]


def _compiler_run(cmd: list[str]) -> None:
    """Run one compiler command; RuntimeError naming it and its output when it fails."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except OSError as exc:
        raise RuntimeError(
            f"tfprof_nb needs a C compiler to build its decoder once ({cmd[0]!r}: {exc}); "
            "install one (gcc or clang) or set CC") from exc
    if done.returncode != 0:
        raise RuntimeError(f"building tfprof_nb's native library failed:\n{' '.join(cmd)}\n"
                           f"{done.stderr.strip()}")


if __name__ == "__main__":
    print(build_library(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE_DIR))
