"""Remote and multi-worker capture through TensorFlow's gRPC profiler service."""

from __future__ import annotations

import os
import socket
import threading
import time
from urllib.parse import urlparse

from .._words import counted
from ..errors import CaptureError
from .backends import choose_backend, require
from .options import DEFAULT_SAMPLE_MS, TracerOptions, _check_int
from .session import publish_run, run_dirs, split_logdir

__all__ = ["capture_remote", "start_server", "parse_addresses"]

_GRPC = "grpc://"


def start_server(port: int, backend: str = "auto", *, sample_ms: int = DEFAULT_SAMPLE_MS,
                 hardware_port: int | None = None) -> int:
    """Start the profiler gRPC server in this process on ``port``; return the port.

    Other processes (or a notebook) can then capture this one with :func:`capture_remote`.
    The server lives until the process exits.  ``backend``: ``"tensorflow"``, ``"jax"``
    (``jax.profiler.start_server``; TensorFlow is not imported) or ``"auto"`` (JAX when it
    is imported and TensorFlow is not).

    The process's hardware is sampled too, from now on, every ``sample_ms`` (default 50; 0
    off): host CPU and memory, each GPU's or TPU's utilisation, memory, power and clocks;
    the last 10 minutes are kept and served on ``hardware_port`` (default ``port + 1``;
    every interface, as the profiler's server) to :func:`capture_remote`, which writes each
    worker's samples of its capture window beside its profile as ``<host>.hardware.npz``.
    A hardware port that cannot be opened is a warning: the profiler's server still runs.
    """
    port = _check_int("port", port, 1, 65535)
    sample_ms = TracerOptions(sample_ms=sample_ms).sample_ms
    if hardware_port is None:
        hardware_port = default_hardware_port(port)
    hardware_port = _check_int("hardware_port", hardware_port, 1, 65535)
    if hardware_port == port:
        raise ValueError(f"hardware_port must differ from port ({port})")
    if require(choose_backend(backend), backend, "tp.start_server") == "jax":
        import jax

        jax.profiler.start_server(port)
    else:
        import tensorflow as tf

        tf.profiler.experimental.server.start(port)
    if sample_ms:
        from .hardware_server import start_hardware_server

        start_hardware_server(hardware_port, sample_ms)
    return port


def default_hardware_port(port: int) -> int:
    """The hardware endpoint's port beside a profiler server's: ``port + 1`` (65534 for
    65535)."""
    return port + 1 if port < 65535 else port - 1


def parse_addresses(addresses) -> list[str]:
    """Normalise "host:port", "grpc://host:port", comma-separated strings or lists."""
    if isinstance(addresses, str):
        items = [a for a in (s.strip() for s in addresses.split(",")) if a]
    else:
        items = [str(a).strip() for a in addresses]
    if not items:
        raise ValueError("no worker address given")
    out = []
    for a in items:
        url = urlparse(a if "://" in a else _GRPC + a)
        if url.scheme != "grpc" or not url.hostname or url.port is None:
            raise ValueError(f"bad worker address {a!r}: expected host:port or grpc://host:port")
        out.append(f"{_GRPC}{url.hostname}:{url.port}")
    return out


def _unreachable(addresses: list[str], timeout_s: float) -> list[str]:
    bad = []
    for a in addresses:
        url = urlparse(a)
        try:
            socket.create_connection((url.hostname, url.port), timeout=timeout_s).close()
        except OSError as err:
            bad.append(f"{a} ({err.strerror or err})")
    return bad


def capture_remote(addresses, duration_ms: int = 2000, logdir: str | None = None, *,
                   host_tracer_level: int = 2, python_tracer_level: int = 0,
                   device_tracer_level: int = 1, delay_ms: int = 0,
                   num_tracing_attempts: int = 3, connect_timeout_s: float = 3.0,
                   timeout_s: float | None = None, hardware=True):
    """Trace one or many workers for ``duration_ms`` and return one multi-host Profile.

    ``addresses``: "grpc://host:port" strings (a list or one comma-separated string) of
    processes that called :func:`start_server` (or ``tf.profiler.experimental.server.start``,
    ``jax.profiler.start_server``).  The client is TensorFlow's, for JAX workers too.
    Unreachable workers raise :class:`CaptureError` naming them within ``connect_timeout_s``;
    the whole capture is bounded by ``timeout_s`` (default: duration + delay + 60 s).

    ``hardware``: each worker's hardware samples over its profile's span (see
    :func:`start_server`) are fetched from its port + 1 (``True``), from the ports given
    (a list, one per address) or not at all (``False``), and written beside its profile as
    ``<host>.hardware.npz``.  A worker without the endpoint is said in one warning, never
    an error.
    """
    addrs = parse_addresses(addresses)
    duration_ms = _check_int("duration_ms", duration_ms, 1, None)
    require("tensorflow", "tensorflow", "tp.capture_remote (its client is TensorFlow's, for "
            "JAX workers too)")
    options = TracerOptions(host_tracer_level, python_tracer_level, device_tracer_level,
                            delay_ms)
    bad = _unreachable(addrs, connect_timeout_s)
    if bad:
        raise CaptureError("cannot reach the profiler server of: " + ", ".join(bad) +
                           ". Is tp.start_server(port) running in that process?")
    logdir, url = split_logdir(logdir)  # a URL logdir: captured here, then uploaded
    os.makedirs(logdir, exist_ok=True)
    before = run_dirs(logdir)
    limit = timeout_s if timeout_s is not None else duration_ms / 1e3 + delay_ms / 1e3 + 60
    hardware_ports = _hardware_ports(addrs, hardware)
    window = (time.time_ns() + delay_ms * 1_000_000,
              _trace(addrs, logdir, duration_ms, num_tracing_attempts, options, limit))
    new = run_dirs(logdir) - before
    if not new:
        raise CaptureError(f"the workers {', '.join(addrs)} saved no profile under {logdir}")
    run_dir = max(new, key=lambda p: p.name)
    if hardware_ports:
        from .hardware_remote import fetch_into

        fetch_into(run_dir, addrs, hardware_ports, *window)
    from ..loading import load

    return load(publish_run(run_dir, url))


def _trace(addrs: list[str], logdir: str, duration_ms: int, attempts: int,
           options: TracerOptions, limit: float) -> int:
    """Trace the workers with TensorFlow's client within ``limit`` seconds; return when it
    answered (``time.time_ns()``).  No complete answer raises CaptureError."""
    result: dict = {}

    def run():
        try:
            import tensorflow as tf

            tf.profiler.experimental.client.trace(
                ",".join(addrs), logdir, duration_ms,
                num_tracing_attempts=attempts, options=options.to_tf())
        except BaseException as err:  # reported in the calling thread
            result["error"] = err

    worker = threading.Thread(target=run, name="tfprof-remote-capture", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise CaptureError(f"no complete answer from {', '.join(addrs)} within {limit:.0f} s")
    if "error" in result:
        err = result["error"]
        raise CaptureError(f"capturing {', '.join(addrs)} failed: "
                           f"{type(err).__name__}: {getattr(err, 'message', err)}") from err
    return time.time_ns()


def _hardware_ports(addrs: list[str], hardware) -> list[int] | None:
    """The workers' hardware ports (None: not fetched), checked before the capture."""
    if hardware is False or hardware is None:
        return None
    if hardware is True:
        return [default_hardware_port(urlparse(a).port) for a in addrs]
    ports = [_check_int("hardware port", p, 1, 65535) for p in hardware]
    if len(ports) != len(addrs):
        raise ValueError(f"hardware: {counted(len(ports), 'port')} for "
                         f"{counted(len(addrs), 'worker')}")
    return ports
