"""Capturing uses the TensorFlow or JAX the environment has (tfprof_nb installs neither) and
names the package to install when the one it needs is missing.

Each case runs in a fresh interpreter whose ``sys.modules`` blocks the missing frameworks
(``sys.modules[name] = None``: Python's own way of making a module unimportable), then
captures through the public API.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, sys
blocked, logdir, backend = sys.argv[1], sys.argv[2], sys.argv[3]
for name in filter(None, blocked.split(",")):
    sys.modules[name] = None
import tfprof_nb as tp
from tfprof_nb.capturing.backends import choose_backend
out = {"auto": choose_backend("auto")}
try:
    tp.capture(lambda batch: None, range(3), steps=1, warmup=0, logdir=logdir, backend=backend,
               sample_ms=0, progress=False)
    out["error"] = None
except tp.CaptureError as err:
    out["error"], out["hint"] = str(err), err.hint
print(json.dumps(out))
"""


def _capture(tmp_path, blocked: str, backend: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, blocked, str(tmp_path / "logs"),
                           backend], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_neither_framework_names_both_packages(tmp_path):
    out = _capture(tmp_path, "tensorflow,jax", "auto")
    msg = out["error"]
    assert msg is not None and "neither is installed" in msg
    for package in ("pip install tensorflow ", '"tensorflow[and-cuda]"', "tensorflow-cpu",
                    '"jax[cpu]"', '"jax[cuda12]"'):
        assert package in msg, package
    assert "restart" in out["hint"]
    assert not (tmp_path / "logs").exists()  # refused before anything was written


@pytest.mark.parametrize("backend,missing,names,absent", [
    ("jax", "jax", ('"jax[cpu]"', '"jax[cuda12]"'), "tensorflow"),
    ("tensorflow", "tensorflow", ("pip install tensorflow ", "tensorflow-cpu"), "jax["),
])
def test_the_backend_asked_for_names_its_own_packages(tmp_path, backend, missing, names,
                                                      absent):
    out = _capture(tmp_path, missing, backend)
    msg = out["error"]
    assert msg is not None and f"backend={backend!r}" in msg
    assert all(n in msg for n in names), msg
    assert absent not in msg


def test_auto_takes_the_framework_installed(tmp_path):
    """Without TensorFlow, ``auto`` captures with the JAX the environment has."""
    pytest.importorskip("jax")
    out = _capture(tmp_path, "tensorflow", "auto")
    assert out["auto"] == "jax"
    assert out["error"] is None
    assert list((tmp_path / "logs").rglob("*.xplane.pb"))


def test_start_server_and_remote_capture_name_their_packages(tmp_path):
    code = ("import sys; sys.modules['tensorflow'] = sys.modules['jax'] = None\n"
            "import tfprof_nb as tp\n"
            "for call in (lambda: tp.start_server(6123, sample_ms=0),\n"
            "             lambda: tp.capture_remote('grpc://127.0.0.1:1')):\n"
            "    try:\n        call()\n"
            "    except tp.CaptureError as err:\n        print(err)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    server, remote = done.stdout.strip().splitlines()
    assert server.startswith("tp.start_server needs TensorFlow or JAX") and "jax[cuda12]" in server
    assert remote.startswith("tp.capture_remote") and "tensorflow-cpu" in remote
