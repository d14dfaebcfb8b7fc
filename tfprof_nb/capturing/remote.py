"""Remote and multi-worker capture through TensorFlow's gRPC profiler service."""

from __future__ import annotations

import os
import socket
import threading
from urllib.parse import urlparse

from ..errors import CaptureError
from .backends import choose_backend
from .options import TracerOptions, _check_int
from .session import publish_run, run_dirs, split_logdir

__all__ = ["capture_remote", "start_server", "parse_addresses"]

_GRPC = "grpc://"


def start_server(port: int, backend: str = "auto") -> int:
    """Start the profiler gRPC server in this process on ``port``; return the port.

    Other processes (or a notebook) can then capture this one with :func:`capture_remote`.
    The server lives until the process exits.  ``backend``: ``"tensorflow"``, ``"jax"``
    (``jax.profiler.start_server``; TensorFlow is not imported) or ``"auto"`` (JAX when it
    is imported and TensorFlow is not).
    """
    port = _check_int("port", port, 1, 65535)
    if choose_backend(backend) == "jax":
        import jax

        jax.profiler.start_server(port)
        return port
    import tensorflow as tf

    tf.profiler.experimental.server.start(port)
    return port


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
                   timeout_s: float | None = None):
    """Trace one or many workers for ``duration_ms`` and return one multi-host Profile.

    ``addresses``: "grpc://host:port" strings (a list or one comma-separated string) of
    processes that called :func:`start_server` (or ``tf.profiler.experimental.server.start``,
    ``jax.profiler.start_server``).  The client is TensorFlow's, for JAX workers too.
    Unreachable workers raise :class:`CaptureError` naming them within ``connect_timeout_s``;
    the whole capture is bounded by ``timeout_s`` (default: duration + delay + 60 s).
    """
    addrs = parse_addresses(addresses)
    duration_ms = _check_int("duration_ms", duration_ms, 1, None)
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
    result: dict = {}

    def run():
        try:
            import tensorflow as tf

            tf.profiler.experimental.client.trace(
                ",".join(addrs), logdir, duration_ms,
                num_tracing_attempts=num_tracing_attempts, options=options.to_tf())
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
    new = run_dirs(logdir) - before
    if not new:
        raise CaptureError(f"the workers {', '.join(addrs)} saved no profile under {logdir}")
    from ..loading import load

    return load(publish_run(max(new, key=lambda p: p.name), url))
