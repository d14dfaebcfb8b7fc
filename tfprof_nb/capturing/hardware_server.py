"""A worker's hardware, for remote captures: a sampler that runs as long as the worker
(the last minutes in a ring buffer), served over HTTP beside the profiler's gRPC server.

:func:`~tfprof_nb.start_server` starts both; :func:`~tfprof_nb.capture_remote` asks each
worker for the samples of its capture window and writes them beside that worker's
``.xplane.pb`` (:mod:`.hardware_remote`, :mod:`tfprof_nb.xspace.hardware_file`).

The endpoint: ``GET /hardware?since_ns=S&until_ns=U`` answers the ``.npz`` file's bytes of
the samples taken in ``[S, U]`` (wall clock, ns since the epoch; either may be left out).
It listens on every interface, as the profiler's server does, serves only these samples, and
never ends or slows the worker: a request that fails is answered 500, a port in use is a
warning.
"""

from __future__ import annotations

import io
import socket
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from ..errors import CaptureWarning
from .options import _check_int

__all__ = ["HardwareServer", "start_hardware_server", "KEEP_S", "PATH"]

KEEP_S = 600.0  # the samples a worker keeps: its last 10 minutes
PATH = "/hardware"
_servers: dict[int, "HardwareServer"] = {}  # by port: one per port and process


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def do_GET(self):  # noqa: N802 (http.server's name)
        try:
            url = urlparse(self.path)
            if url.path != PATH:
                return self._answer(404, b"not found: ask " + PATH.encode(), "text/plain")
            query = parse_qs(url.query)
            since, until = (_ns(query, name) for name in ("since_ns", "until_ns"))
            body = self.server.owner.npz(since, until)
        except ValueError as exc:
            return self._answer(400, str(exc).encode(), "text/plain")
        except Exception as exc:  # never the worker's problem
            return self._answer(500, f"{type(exc).__name__}: {exc}".encode(), "text/plain")
        return self._answer(200, body, "application/octet-stream")

    def _answer(self, status: int, body: bytes, kind: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client went away
            pass

    def log_message(self, format, *args):  # noqa: A002 (http.server's name): no log lines
        pass


def _ns(query: dict, name: str) -> int | None:
    values = query.get(name)
    if not values:
        return None
    try:
        return int(values[-1])
    except ValueError:
        raise ValueError(f"{name} must be an integer (ns since the epoch), got "
                         f"{values[-1]!r}") from None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "HardwareServer"

    def server_bind(self):
        if self.address_family == socket.AF_INET6:  # IPv4 too, as the profiler's server
            try:
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            except (OSError, AttributeError):
                pass
        super().server_bind()


class HardwareServer:
    """A running sampler (:class:`.hardware_sampler.HardwareSampler`, ``keep_s`` seconds
    kept) and the HTTP server answering its samples on ``port``."""

    def __init__(self, port: int, sample_ms: int, keep_s: float = KEEP_S):
        from .hardware_sampler import HardwareSampler

        self.port = port
        self.sampler = HardwareSampler(sample_ms, keep_s=keep_s)
        self.http = _bind(port)
        self.http.owner = self
        self.sampler.start()
        self._thread = threading.Thread(target=self.http.serve_forever,
                                        name="tfprof-hardware-server", daemon=True)
        self._thread.start()

    def npz(self, since_ns: int | None, until_ns: int | None) -> bytes:
        from ..xspace.hardware_file import write_hardware

        out = io.BytesIO()
        write_hardware(self.sampler.samples(since_ns, until_ns), out)
        return out.getvalue()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.sampler.stop()
        _servers.pop(self.port, None)


class _Server6(_Server):
    address_family = socket.AF_INET6


def _bind(port: int) -> _Server:
    """The HTTP server on every interface (IPv6 and IPv4 where the machine has IPv6)."""
    try:
        return _Server6(("::", port), _Handler)
    except OSError as exc:
        if exc.errno not in _NO_IPV6:
            raise
    return _Server(("0.0.0.0", port), _Handler)


_NO_IPV6 = {97, 99}  # EAFNOSUPPORT, EADDRNOTAVAIL: no IPv6 here


def start_hardware_server(port: int, sample_ms: int) -> HardwareServer | None:
    """Start the sampler and its endpoint on ``port`` (once per port); None, with a
    warning, when it cannot (the port is taken): the worker goes on without it."""
    port = _check_int("hardware_port", port, 1, 65535)
    if port in _servers:
        return _servers[port]
    try:
        server = HardwareServer(port, sample_ms)
    except Exception as exc:
        warnings.warn(f"the hardware sampler's endpoint did not start on port {port} "
                      f"({type(exc).__name__}: {exc}); remote captures of this worker will "
                      f"have no hardware samples", CaptureWarning, stacklevel=3)
        return None
    _servers[port] = server
    return server
