"""Build tfprof_nb's wheels for every platform, and its sdist, into ``dist/`` (``make wheels``).

Each wheel carries the widget bundles and the native library cross-built for its tag with zig
(the ``ziglang`` package): manylinux2014 (glibc 2.17) on x86_64 and aarch64, macOS 11 on arm64
(the first macOS on Apple silicon) and macOS 10.13 on x86_64 (zig's own default is macOS 15:
the minimum is asked for explicitly).  The library's headers are then checked against the
wheel's tags (``tools/wheel_checks.py``; ``auditwheel show`` for the Linux wheels).  The sdist
builds a wheel for its machine with the machine's C compiler (``pip wheel tfprof_nb-*.tar.gz``).

Usage: ``python -m tools.build_wheels [--out dist] [--targets NAME ...] [--no-sdist]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.wheel_checks import check_wheel

ROOT = Path(__file__).resolve().parent.parent
BUNDLES = ROOT / "tfprof_nb" / "static" / "bundles.json"
HATCHLING = ROOT / "build" / "wheel-tools" / "hatchling"


@dataclass(frozen=True)
class Target:
    zig: str   # zig's target: architecture, OS and the oldest glibc or macOS to run on
    tag: str   # the wheel's tag (compressed tag set: both manylinux names, as auditwheel writes)


TARGETS = {
    "manylinux2014_x86_64": Target(
        "x86_64-linux-gnu.2.17", "py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64"),
    "manylinux2014_aarch64": Target(
        "aarch64-linux-gnu.2.17", "py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64"),
    "macosx_11_0_arm64": Target("aarch64-macos.11.0", "py3-none-macosx_11_0_arm64"),
    "macosx_10_13_x86_64": Target("x86_64-macos.10.13", "py3-none-macosx_10_13_x86_64"),
}

# run in one process with hatchling importable: argv[1] the output folder, argv[2] a JSON list
# of [zig target, tag] (empty strings: the sdist)
_BUILD = """
import json, os, sys
import hatchling.build as backend
for zig, tag in json.loads(sys.argv[2]):
    os.environ["TFPROF_NB_ZIG_TARGET"], os.environ["TFPROF_NB_WHEEL_TAG"] = zig, tag
    build = backend.build_wheel if zig else backend.build_sdist
    print(os.path.join(sys.argv[1], build(sys.argv[1])), flush=True)
"""


def hatchling_path() -> Path:
    """A folder holding the build backend (hatchling), installed there once."""
    if not (HATCHLING / "hatchling").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target",
                        str(HATCHLING), "hatchling>=1.21"], check=True)
    return HATCHLING


def build(out: Path, targets: list[str], sdist: bool = True, env: dict | None = None
          ) -> list[Path]:
    """Build the wheels of ``targets`` (names in :data:`TARGETS`) and the sdist into ``out``
    with the build backend in one process; return their paths, in that order."""
    if not BUNDLES.is_file():
        raise SystemExit("the widget bundles are missing: make tfprof_nb/static/views.js")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    jobs = [[TARGETS[t].zig, TARGETS[t].tag] for t in targets] + ([["", ""]] if sdist else [])
    run_env = dict(os.environ if env is None else env)
    run_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(hatchling_path()), run_env.get("PYTHONPATH", "")) if p)
    if "ZIG_GLOBAL_CACHE_DIR" in run_env:  # (else zig's default, ~/.cache/zig)
        run_env.setdefault("ZIG_LOCAL_CACHE_DIR", run_env["ZIG_GLOBAL_CACHE_DIR"])
    done = subprocess.run([sys.executable, "-c", _BUILD, str(out), json.dumps(jobs)], cwd=ROOT,
                          env=run_env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building the wheels failed:\n{done.stdout}\n{done.stderr}")
    return [Path(line) for line in done.stdout.split("\n") if line.startswith(str(out))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "dist"))
    parser.add_argument("--targets", nargs="+", choices=sorted(TARGETS), default=list(TARGETS))
    parser.add_argument("--no-sdist", action="store_true")
    args = parser.parse_args(argv)
    built = build(Path(args.out), args.targets, sdist=not args.no_sdist)
    failed = False
    for path in built:
        if path.suffix != ".whl":
            print(f"{path.name}: sdist")
            continue
        report = check_wheel(path)
        failed |= bool(report["problems"])
        found = (f"glibc {report['glibc']}, auditwheel: {report['auditwheel']}"
                 if report["format"] == "ELF" else f"macOS {report['macos']}")
        print(f"{path.name}: {report['format']} {report['arch']}, {found}",
              *(f"  PROBLEM {p}" for p in report["problems"]), sep="\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
