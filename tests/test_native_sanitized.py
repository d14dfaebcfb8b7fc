"""The native code under AddressSanitizer and UndefinedBehaviorSanitizer: a checking build of
``_native/`` (``TFPROF_NB_SANITIZE=1``; every report fatal) decodes and analyses the real
captures, byte-mutated copies of them (as ``tests/xspace/test_fuzz.py`` mutates them) and
copies whose numbers were set to extremes with TensorFlow's own XSpace message (valid wire,
corrupt values: timestamps, offsets, durations, ids, keys, stat values), in a subprocess.  A
sanitizer report (an out-of-bounds read, a use after free, a signed overflow, a shift out of
range...) or any exception other than a clear ProfileFormatError fails the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfprof_nb._native.build import sanitizer_env

from .structured_mutants import write_mutants

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
_SANITIZER_SIGNS = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "SUMMARY: ")


def _probe(args: list, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tests.sanitized_probe", *map(str, args)],
                          cwd=ROOT, env=sanitizer_env(), capture_output=True, text=True,
                          timeout=timeout)


def _assert_clean(done: subprocess.CompletedProcess) -> str:
    report = done.stdout[-4000:] + done.stderr[-8000:]
    assert done.returncode == 0, report
    assert not any(sign in done.stderr for sign in _SANITIZER_SIGNS), report
    assert "PYERROR" not in done.stdout, report
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("done ") and last.endswith(" errors 0"), report
    assert "libtfprof_nb_sanitized-" in done.stdout  # the checking build ran
    return last


def test_a_sanitizer_report_fails_the_probe():
    """The checking build is live: a kernel told to read past its array is stopped by
    AddressSanitizer with exit code 99 (the probe's failure), not read silently."""
    code = ("import numpy as np\n"
            "from tfprof_nb import _native\n"
            "col = np.arange(16, dtype=np.int64)\n"
            "rows = np.array([4096], dtype=np.int32)\n"
            "out = np.empty(1, np.int64)\n"
            "_native.lib().tfp_take_rows(col.ctypes.data, 1 << 20, 8, rows.ctypes.data, 1,\n"
            "                            out.ctypes.data)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=sanitizer_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 99, done.stderr[-3000:]
    assert "AddressSanitizer" in done.stderr


def test_real_and_mutated_captures_are_clean_under_the_sanitizers(cpu_file, tmp_path):
    real = sorted(DATA.glob("*.xplane.pb")) + sorted(DATA.glob("*/*.xplane.pb")) + [cpu_file]
    last = _assert_clean(_probe(["--seed", "7", "--mutants", "60", "--analysed", "2", *real]))
    n_decoded = int(last.split()[3])
    assert n_decoded > 0  # mutants that still decode were analysed whole, not only rejected


@pytest.mark.parametrize("source", ["cpu", "jax_h200_transformer", "tpu_v6e_jax_inference",
                                    "mi300x_jax_conv_legacy"])
def test_extreme_values_are_clean_under_the_sanitizers(source, cpu_file, tmp_path):
    src = cpu_file if source == "cpu" else DATA / f"{source}.xplane.pb"
    mutants = write_mutants(src, tmp_path, 10, seed=len(source))
    # (the source itself is analysed by the test above)
    last = _assert_clean(_probe(["--mutants", "0", *mutants]))
    assert last.startswith("done 10 ")


def test_sums_of_file_values_are_clean_under_the_sanitizers(tmp_path):
    """Sums of values a file gives (durations of nested ops, allocation byte counts, children's
    time under a parent) saturate: no signed overflow for UBSan to report."""
    code = ("import numpy as np\n"
            "from tfprof_nb._native.kernels import active_at_peak, nest_loose\n"
            "n = 3\n"
            "alloc = np.full(n, 3 << 61, np.int64)\n"
            "active_at_peak(np.ones(n, bool), np.arange(1, n + 1, dtype=np.int64),\n"
            "               np.zeros(n, np.int64), np.arange(n, dtype=np.int64), alloc, 2, 0)\n"
            "L = 1 << 61\n"
            "line = np.zeros(4, np.int32)\n"
            "begin = np.array([-L, -L + 1, -L + 2, -L + 3], np.int64)\n"
            "dur = np.array([2 * L, 2 * L - 2, 2 * L - 4, 2 * L - 6], np.int64)\n"
            "nest_loose(line, begin, dur)\n"
            "print('clean')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=sanitizer_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "clean" in done.stdout, done.stderr[-3000:]
    assert not any(sign in done.stderr for sign in _SANITIZER_SIGNS), done.stderr[-3000:]
