"""Runs tfprof_nb's native code over real captures and mutated copies of them, for
``tests/test_native_sanitized.py``, in a process that loads the sanitized build
(AddressSanitizer + UndefinedBehaviorSanitizer, every report fatal: exit code 99).

    python -m tests.sanitized_probe --seed 1 --mutants 400 --analysed 12 FILE... \
        [--as-is FILE...]

Each file is loaded and analysed whole (a ProfileFormatError counts as rejected); then, for
the positional files (not those after ``--as-is``), ``--mutants`` copies of each, mutated the way
``tests/xspace/test_fuzz.py`` mutates them (bit flips, set bytes, truncation, deleted,
duplicated or inserted runs, huge varints), are decoded, and the first ``--analysed`` that
decode are analysed whole too.  A mutant may fail with a ProfileFormatError (bad input, said
clearly); any other Python exception is printed as ``PYERROR`` (the test fails on it).
The last line is ``done N decoded M analysed K rejected R``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from pathlib import Path

import numpy as np

import tfprof_nb as tp
from tfprof_nb import _native
from tfprof_nb.xspace import decode_xspace
from tfprof_nb.xspace.selection import Selection

from .xspace.test_fuzz import _apply

_HUGE_VARINTS = (b"\xff" * 11, b"\xff" * 9 + b"\x01", b"\x80\x80\x80\x80\x10",
                 b"\xff\xff\xff\xff\xff\xff\xff\xff\x7f")


_KINDS = ("flip", "set", "truncate", "delete", "duplicate", "insert", "varint")


def mutate(raw: bytes, rng: np.random.Generator) -> bytes:
    """1-3 of test_fuzz's mutations (its ``_apply``), drawn with ``rng``."""
    draw_arg = {"flip": lambda: int(rng.integers(0, 8)), "set": lambda: int(rng.integers(0, 256)),
                "truncate": lambda: None, "delete": lambda: int(rng.integers(1, 65)),
                "duplicate": lambda: int(rng.integers(1, 65)),
                "insert": lambda: rng.bytes(int(rng.integers(1, 17))),
                "varint": lambda: _HUGE_VARINTS[int(rng.integers(0, len(_HUGE_VARINTS)))]}
    data = raw
    for _ in range(int(rng.integers(1, 4))):
        if not data:
            break
        pos = int(rng.integers(0, len(data)))
        kind = _KINDS[int(rng.integers(0, len(_KINDS)))]
        data = _apply(data, (kind, pos, draw_arg[kind]()))
    return data


def analyse(path: Path) -> None:
    prof = tp.load(path)
    prof.analyse(release=False)
    prof.overview()
    prof.recommendations()


def decode_part(data: bytes, path: str) -> None:
    """Decode ``data`` as ``tp.load(window=, lines=)`` does: a scan keeping no event, then
    the middle half of its span on every other line."""
    scan = decode_xspace(data, path=path, select=Selection.scan())
    span = scan.file_span_ps()
    if span is None:
        return
    lo, hi = span[0] + (span[1] - span[0]) // 4, span[1] - (span[1] - span[0]) // 4
    starts = scan.line_start_ps()
    keep = (np.arange(len(starts)) % 2 == 0).astype(np.uint8)
    decode_xspace(data, path=path, select=Selection(keep, lo - starts, hi - starts))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--as-is", nargs="*", type=Path, default=[])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mutants", type=int, default=200)
    ap.add_argument("--analysed", type=int, default=8)
    args = ap.parse_args(argv)
    print("library", _native._find_or_build().name, flush=True)
    rng = np.random.default_rng(args.seed)
    decoded = analysed = rejected = errors = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in [*args.files, *args.as_is]:
            try:
                analyse(path)
                print("analysed", path.name, flush=True)
            except tp.ProfileFormatError as exc:
                rejected += 1
                print("rejected", path.name, exc, flush=True)
                continue
            except Exception:  # noqa: BLE001 - reported, the test fails on it
                errors += 1
                print(f"PYERROR {path.name}:\n{traceback.format_exc()}", flush=True)
                continue
            if path in args.as_is:
                continue
            raw = path.read_bytes()
            left = args.analysed
            for i in range(args.mutants):
                data = mutate(raw, rng)
                try:
                    decode_xspace(data, path=f"mutant-{i}.xplane.pb")
                except tp.ProfileFormatError:
                    rejected += 1
                    continue
                decoded += 1
                if i % 4 == 0:  # the selecting walk too (tp.load(window=, lines=))
                    try:
                        decode_part(data, f"mutant-{i}.xplane.pb")
                    except tp.ProfileFormatError:
                        rejected += 1
                if left <= 0:
                    continue
                left -= 1
                out = Path(tmp) / f"mutant-{i}.xplane.pb"
                out.write_bytes(data)
                try:
                    analyse(out)
                    analysed += 1
                except tp.ProfileFormatError:
                    rejected += 1
                except Exception:  # noqa: BLE001 - reported, the test fails on it
                    errors += 1
                    print(f"PYERROR {path.name} mutant {i}:\n{traceback.format_exc()}",
                          flush=True)
                finally:
                    os.unlink(out)
    print(f"done {len(args.files) + len(args.as_is)} decoded {decoded} analysed {analysed} "
          f"rejected {rejected} errors {errors}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
