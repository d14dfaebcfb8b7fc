"""A file that changes while it is decoded (truncated by a capture rewriting it, a sync, a
network file system failing a read) gives an exception naming the file, never a signal: the
decoder reads a file mapping, and its reads are guarded (``_native/guard.h``).

A real process loads a composed profile of BIG_BYTES again and again while this one truncates
the file under it at a random moment of the load; the process must answer every load (the
profile, or an error naming the file) and end normally."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb import _native
from tfprof_nb.xspace import decoder, read_xspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from compose_profile import compose_long_host  # noqa: E402

BIG_BYTES = 120_000_000  # loads in about half a second here: wide enough to truncate mid-load
TRIES = 8
ROOT = Path(__file__).resolve().parents[2]

# The child: loads the path on each stdin line, answers a JSON line per load; faulthandler
# (which Jupyter's kernel and pytest enable) is put on top of SIGBUS's handlers before each
# load: the guard puts its own back.
_CHILD = r"""
import faulthandler, json, sys, time
import tfprof_nb as tp
from tfprof_nb.xspace import read_xspace

for line in sys.stdin:
    faulthandler.disable()
    faulthandler.enable()
    how, path = line.split(" ", 1)
    path = path.strip()
    t = time.perf_counter()
    try:
        if how == "load":
            n = len(tp.load(path, progress=False).events)
        else:
            n = len(read_xspace(path).events)
        out = {"ok": n}
    except (tp.ProfileFormatError, OSError) as exc:
        out = {"error": type(exc).__name__, "message": str(exc)}
    out["s"] = time.perf_counter() - t
    print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def big_file(cpu_file, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("changing") / "source.xplane.pb"
    compose_long_host(cpu_file, out, BIG_BYTES)
    return out


def _ask(proc, how: str, path: Path) -> None:
    proc.stdin.write(f"{how} {path}\n")
    proc.stdin.flush()


def _answer(proc) -> dict:
    line = proc.stdout.readline()
    assert line, f"the child died: rc {proc.wait()}, {proc.stderr.read()[-3000:]}"
    return json.loads(line)


def test_truncated_while_loading_raises_naming_the_file(big_file, tmp_path):
    """Truncated at a random moment of each load (to a random size, 0 included): every load
    ends with the profile or ProfileFormatError "changed while it was read" naming the file
    (TruncatedProfileError where the load began after the truncation),
    the same process loads the intact file afterwards and exits with 0 (no SIGBUS)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    rng = np.random.default_rng(34)
    target = tmp_path / "vm.xplane.pb"
    answers = []
    try:
        shutil.copyfile(big_file, target)
        _ask(proc, "read", target)
        intact = _answer(proc)
        _ask(proc, "read", target)
        load_s = _answer(proc)["s"]  # (the second: the page cache and the library warm)
        for i in range(TRIES):
            shutil.copyfile(big_file, target)
            _ask(proc, "load" if i % 2 else "read", target)
            time.sleep(float(rng.uniform(0.05, 0.5)) * load_s)  # (inside the walk)
            os.truncate(target, int(rng.choice([0, 4096, big_file.stat().st_size // 3,
                                                big_file.stat().st_size - 12345])))
            answers.append(_answer(proc))
        shutil.copyfile(big_file, target)
        _ask(proc, "read", target)
        after = _answer(proc)
    finally:
        proc.stdin.close()
        rc = proc.wait(timeout=120)
    err = proc.stderr.read()
    assert rc == 0, f"the loading process ended with {rc}: {err[-3000:]}"
    assert "Fatal Python error" not in err, err[-3000:]  # (faulthandler never saw a SIGBUS)
    assert after["ok"] == intact["ok"] > 0
    failed = [a for a in answers if "error" in a]
    during = [a for a in failed if a["error"] == "ProfileFormatError"
              and "changed while it was read" in a["message"]]
    for a in failed:  # (a busy machine can start a load after the truncation: "truncated")
        assert str(target) in a["message"], a
        assert a in during or (a["error"] == "TruncatedProfileError"
                               and "the file is truncated" in a["message"]), a
    # the truncation came during some loads (not vacuous); how many depends on this
    # machine's timing (a tail truncation past what was read, a load done early: ok)
    assert len(failed) >= 2 and during, answers


def test_fault_in_each_phase_is_an_error(cpu_file, tmp_path, monkeypatch):
    """The file truncated after the framing pass, after the walk, after the interning: each
    read of the mapping after it raises "changed while it was read" (here in this process)."""
    raw = cpu_file.read_bytes()
    target = tmp_path / "vm.xplane.pb"
    stages = {"walk": (decoder._Walk, "walk"), "finish": (decoder._Walk, "finish"),
              "intern": (decoder, "_intern_text"), "tables": (decoder, "_space")}
    for stage, (owner, name) in stages.items():
        target.write_bytes(raw)
        original = getattr(owner, name)

        def truncating(*args, _original=original, **kw):
            os.truncate(target, 0)
            return _original(*args, **kw)

        with monkeypatch.context() as m:
            m.setattr(owner, name, truncating)
            with pytest.raises(tp.ProfileFormatError, match="changed while it was read") as exc:
                read_xspace(target, threads=2)
        assert str(target) in str(exc.value) and "to 0 bytes" in str(exc.value), stage
    target.write_bytes(raw)
    assert len(read_xspace(target).events) > 0


@pytest.mark.parametrize("then", ["", "faulthandler.enable()", "faulthandler.enable()\n"
                                  "_native.lib().tfp_copy_spans(*args)\nfaulthandler.disable()"])
def test_unguarded_faults_still_end_the_process(tmp_path, then):
    """The guard only catches its own reads: a SIGBUS elsewhere (here Python reading a
    truncated mapping itself) still ends the process with SIGBUS, as it did before; also
    when faulthandler was enabled after the guard (whose handler puts the guard's back and
    raises again) or enabled and then disabled (a handler that returns): never a loop."""
    target = tmp_path / "f.bin"
    target.write_bytes(b"x" * 65536)
    code = ("import faulthandler, mmap, os\nimport numpy as np\nfrom tfprof_nb import _native\n"
            "faulthandler.disable()\n"
            "b, o, n = np.zeros(1, np.uint8), np.zeros(1, np.int64), np.ones(1, np.int64)\n"
            "args = (b.ctypes.data, 1, o.ctypes.data, n.ctypes.data, 1, b.ctypes.data)\n"
            "_native.lib().tfp_copy_spans(*args)  # (the guard's handler installed)\n"
            f"{then}\n"
            f"f = open({str(target)!r}, 'rb')\n"
            "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)\n"
            f"os.truncate({str(target)!r}, 0)\n"
            "print(m[60000])\nprint('survived')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == -signal.SIGBUS and "survived" not in done.stdout, (done.returncode,
                                                                     done.stderr[-2000:])


def test_copy_spans_reports_a_fault(tmp_path):
    """tfp_copy_spans (how Python reads a mapping's names and values) returns ERR_UNREADABLE
    for a read past a truncated file's end, and copies the spans otherwise."""
    import mmap

    target = tmp_path / "f.bin"
    target.write_bytes(bytes(range(256)) * 64)
    with open(target, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    buf = np.frombuffer(m, np.uint8)
    offs, lens = np.array([1, 9000], np.int64), np.array([3, 2], np.int64)
    out = np.zeros(5, np.uint8)
    copy = _native.lib().tfp_copy_spans
    assert copy(buf.ctypes.data, buf.size, offs.ctypes.data, lens.ctypes.data, 2,
                out.ctypes.data) == 0
    assert out.tolist() == [1, 2, 3, 9000 % 256, 9001 % 256]
    os.truncate(target, 4096)
    assert copy(buf.ctypes.data, buf.size, offs.ctypes.data, lens.ctypes.data, 2,
                out.ctypes.data) == decoder.ERR_UNREADABLE
    del buf
    m.close()


def test_a_fault_without_a_shorter_file_is_an_io_error(tmp_path):
    """A faulting read of a file that did not shrink is its file system failing the read (NFS,
    gcsfuse): OSError EIO naming the file; a file gone or shorter "changed while it was
    read"."""
    import errno

    target = tmp_path / "vm.xplane.pb"
    target.write_bytes(b"x" * 100)
    exc = decoder._unreadable(str(target), 100)
    assert isinstance(exc, OSError) and exc.errno == errno.EIO and str(target) in str(exc)
    shorter = decoder._unreadable(str(target), 200)
    assert isinstance(shorter, tp.ProfileFormatError)
    assert "truncated from 200 to 100 bytes" in str(shorter)
    gone = decoder._unreadable(str(tmp_path / "gone.xplane.pb"), 100)
    assert isinstance(gone, tp.ProfileFormatError) and "it is gone" in str(gone)
