"""Shared fixtures: the GPU fixture under tests/data and small CPU profiles captured for real."""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
GPU_FIXTURE_DIR = DATA / "gpu_bert_multiworker"  # origin and licence: data/README.md


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_ports(n: int) -> list[int]:
    """``n`` ports p, each with p + 1 (its hardware endpoint) free too, no two pairs sharing a
    port, below Linux's ephemeral range (32768-60999): a port the system hands out (bind to
    0) lies in that range, where the next outgoing connection of any process on the machine
    may take p + 1 before the worker binds it (seen: the endpoint refused under CI)."""
    rng = random.Random()
    ports: list[int] = []
    while len(ports) < n:
        p = rng.randrange(20000, 32000)
        if {p, p + 1} & {q + d for q in ports for d in (0, 1)}:
            continue
        try:
            for q in (p, p + 1):
                with socket.socket() as s:
                    s.bind(("0.0.0.0", q))
        except OSError:
            continue
        ports.append(p)
    return ports


def _capture(tmp_path_factory, scenario: str) -> Path:
    """A real TensorFlow capture of ``scenario`` (tests/make_cpu_profile.py), made once per
    run: parallel workers (pytest-xdist) share it, the first to ask captures it under a lock
    while the others wait (each worker's temporary folder is a child of one run folder)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return _capture_into(tmp_path_factory.mktemp(f"cpu_{scenario}"), scenario)
    shared = tmp_path_factory.getbasetemp().parent / f"cpu_{scenario}"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "captured").exists():
            shutil.rmtree(shared, ignore_errors=True)  # (a worker that failed half way)
            _capture_into(shared, scenario)
            (shared / "captured").touch()
    return shared


def _capture_into(logdir: Path, scenario: str) -> Path:
    logdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    subprocess.run([sys.executable, str(HERE / "make_cpu_profile.py"), str(logdir), scenario],
                   check=True, env=env, timeout=300, capture_output=True)
    return logdir


@pytest.fixture(scope="session", autouse=True)
def _shared_browser():
    """The browser tests' one Chromium per process (``tests/widgets/browser.py``), closed once
    the session ends (started only by a test that opens a page)."""
    from .widgets.browser import close_shared

    yield
    close_shared()


@pytest.fixture(scope="session")
def gpu_fixture_file() -> Path:
    files = sorted(GPU_FIXTURE_DIR.glob("*.xplane.pb"))
    assert files, f"GPU fixture missing under {GPU_FIXTURE_DIR}"
    return files[0]


@pytest.fixture(scope="session")
def cpu_logdir(tmp_path_factory) -> Path:
    """Logdir of a custom-loop CPU profile (step markers, tf.data, host tracer 3)."""
    return _capture(tmp_path_factory, "loop")


@pytest.fixture(scope="session")
def cpu_python_logdir(tmp_path_factory) -> Path:
    """Logdir of a CPU profile with the Python tracer on."""
    return _capture(tmp_path_factory, "python")


@pytest.fixture(scope="session")
def cpu_slowmap_logdir(tmp_path_factory) -> Path:
    """Logdir of an input-bound CPU profile: heavy sequential map, no prefetch."""
    return _capture(tmp_path_factory, "slowmap")


@pytest.fixture(scope="session")
def cpu_html_logdir(tmp_path_factory) -> Path:
    """Logdir of a CPU profile whose trace names contain HTML."""
    return _capture(tmp_path_factory, "html")


def xplane_files(logdir: Path) -> list[Path]:
    return sorted(Path(logdir).glob("plugins/profile/*/*.xplane.pb"))


@pytest.fixture(scope="session")
def cpu_file(cpu_logdir) -> Path:
    return xplane_files(cpu_logdir)[0]


@pytest.fixture(scope="session")
def cpu_python_file(cpu_python_logdir) -> Path:
    return xplane_files(cpu_python_logdir)[0]


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 server (moto's server mode on 127.0.0.1, IAM authentication on)."""
    from .s3_server import MotoServer

    server = MotoServer()
    yield server
    server.stop()


@pytest.fixture()
def s3_bucket(s3_server) -> str:
    """A new empty bucket on ``s3_server``; its name."""
    import uuid

    import s3fs

    name = f"tfprof-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.options()).mkdir(name)
    return name


@pytest.fixture()
def object_cache(tmp_path, monkeypatch) -> Path:
    """A fresh, empty local cache of remote profile files for this test."""
    cache = tmp_path / "object_cache"
    monkeypatch.setenv("TFPROF_NB_CACHE_DIR", str(cache))
    monkeypatch.delenv("TFPROF_NB_CACHE", raising=False)
    monkeypatch.delenv("TFPROF_NB_CACHE_MAX_GB", raising=False)
    return cache
