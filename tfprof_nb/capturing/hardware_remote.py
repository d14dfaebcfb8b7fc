"""The client side of the workers' hardware samples (:mod:`.hardware_server`): after a remote
capture, each worker's samples of its profile's span (read from its file), written beside
its ``.xplane.pb``.

TensorFlow's client names a worker's file after its address, ``<host>_<port>.xplane.pb``
(``grpc://10.0.0.2:6009`` gives ``10.0.0.2_6009.xplane.pb``); the samples go to
``<host>_<port>.hardware.npz``.  A worker that does not answer (no endpoint: an older
tfprof_nb, ``sample_ms=0``, a plain ``tf.profiler.experimental.server.start``) is said in
one warning; the capture never fails for it.
"""

from __future__ import annotations

import urllib.request
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

from ..errors import CaptureWarning
from ..xspace.hardware_file import hardware_path_for, read_hardware
from .hardware_server import PATH

__all__ = ["fetch_hardware", "fetch_into", "worker_file"]

TIMEOUT_S = 3.0


def fetch_hardware(host: str, port: int, since_ns: int, until_ns: int,
                   timeout_s: float = TIMEOUT_S) -> bytes:
    """The ``.npz`` bytes of a worker's samples in ``[since_ns, until_ns]``.  Raises OSError
    (no endpoint, a timeout, an error answer) or http.client's errors (another service)."""
    name = f"[{host}]" if ":" in host else host
    url = f"http://{name}:{port}{PATH}?since_ns={int(since_ns)}&until_ns={int(until_ns)}"
    with urllib.request.urlopen(url, timeout=timeout_s) as answer:
        return answer.read()


def worker_file(run_dir: Path, address: str, n_workers: int) -> Path | None:
    """The ``.xplane.pb`` TensorFlow's client wrote for ``address`` (``grpc://host:port``):
    ``<host>_<port>.xplane.pb``; for one worker, the run's only file whatever its name."""
    url = urlparse(address)
    named = run_dir / f"{url.hostname}_{url.port}.xplane.pb"
    if named.exists():
        return named
    files = sorted(run_dir.glob("*.xplane.pb"))
    return files[0] if n_workers == 1 and len(files) == 1 else None


def _one(run_dir: Path, address: str, port: int, n: int, since_ns: int,
         until_ns: int) -> str | None:
    """Fetch and write one worker's samples; what went wrong, in words (None: written)."""
    xplane = worker_file(run_dir, address, n)
    if xplane is None:
        return f"{address}: no profile file of this worker in the run"
    since_ns, until_ns = _profile_span(xplane, since_ns, until_ns)
    try:
        data = fetch_hardware(urlparse(address).hostname, port, since_ns, until_ns)
        read_hardware(data, f"{address}'s answer")  # a file, not another service's page
    except Exception as exc:  # no endpoint, a timeout, another service: never an error
        return f"{address} (port {port}: {getattr(exc, 'reason', None) or exc})"
    Path(hardware_path_for(str(xplane))).write_bytes(data)
    return None


def _profile_span(xplane: Path, since_ns: int, until_ns: int) -> tuple[int, int]:
    """The worker's own profile span (its Task Environment's start and stop, on its clock),
    else the client's window.  The client's window is wider: TensorFlow's client may wait
    seconds before a worker starts tracing (on 127.0.0.1, 1 s traces came 8.5 s after the
    request), and the worker's clock may differ from the client's."""
    try:
        from ..xspace.decoder import read_local_xspace

        space = read_local_xspace(xplane)
        start, stop = space.profile_start_ns, space.profile_stop_ns
    except Exception:  # an unreadable file is tp.load's to report
        return since_ns, until_ns
    return (start, stop) if start and stop and start < stop else (since_ns, until_ns)


def fetch_into(run_dir: Path, addresses: list[str], ports: list[int], since_ns: int,
               until_ns: int) -> list[str]:
    """Write each worker's samples of ``[since_ns, until_ns]`` beside its profile in
    ``run_dir`` (all workers at once); return, and say in one warning, the workers that
    gave none."""
    n = len(addresses)
    with ThreadPoolExecutor(max_workers=min(16, n)) as pool:
        missed = [m for m in pool.map(lambda a, p: _one(run_dir, a, p, n, since_ns, until_ns),
                                      addresses, ports) if m]
    if missed:
        warnings.warn("no hardware samples from " + "; ".join(missed) + ". Workers started "
                      "with tp.start_server(port) serve them on port + 1", CaptureWarning,
                      stacklevel=3)
    return missed
