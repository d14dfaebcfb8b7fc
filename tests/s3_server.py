"""A real S3 server for the tests: moto's server mode on 127.0.0.1 with IAM authentication on
(so a wrong credential is refused as by AWS), and a small HTTP proxy in front of it that can
cut or stall object downloads, to see how loads fail when the network does."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from .conftest import free_port

# requests moto serves before it checks signatures: exactly the IAM set-up below
_SETUP_REQUESTS = 3
_ALLOW_ALL = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Action": "*", "Resource": "*"}]})


@dataclass
class Credential:
    key: str
    secret: str


class MotoServer:
    """``python -m moto.server`` on a free port, with an admin and a powerless IAM user."""

    def __init__(self):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT=str(_SETUP_REQUESTS),
                   AWS_ACCESS_KEY_ID="setup", AWS_SECRET_ACCESS_KEY="setup")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(self.port, 60)
            self.admin, self.nobody = self._users()
        except BaseException:
            self.stop()
            raise

    def _users(self) -> tuple[Credential, Credential]:
        import boto3

        def iam(cred: Credential | None):
            return boto3.client("iam", endpoint_url=self.endpoint, region_name="us-east-1",
                                aws_access_key_id=cred.key if cred else "setup",
                                aws_secret_access_key=cred.secret if cred else "setup")

        setup = iam(None)  # the three unauthenticated requests
        setup.create_user(UserName="admin")
        setup.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=_ALLOW_ALL)
        key = setup.create_access_key(UserName="admin")["AccessKey"]
        admin = Credential(key["AccessKeyId"], key["SecretAccessKey"])
        signed = iam(admin)
        signed.create_user(UserName="nobody")  # no policy: every S3 request is denied
        key = signed.create_access_key(UserName="nobody")["AccessKey"]
        return admin, Credential(key["AccessKeyId"], key["SecretAccessKey"])

    def options(self, cred: Credential | None = None, endpoint: str | None = None,
                **more) -> dict:
        """s3fs storage options for this server (admin credential by default)."""
        cred = cred or self.admin
        return {"key": cred.key, "secret": cred.secret,
                "endpoint_url": endpoint or self.endpoint, **more}

    def env(self, cred: Credential | None = None) -> dict:
        """Environment variables that point boto/s3fs at this server."""
        cred = cred or self.admin
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": cred.key,
                "AWS_SECRET_ACCESS_KEY": cred.secret, "AWS_DEFAULT_REGION": "us-east-1"}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def wait_for_port(port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"moto server did not listen on 127.0.0.1:{port} in {timeout_s} s")


class FaultyProxy:
    """An HTTP/1.1 proxy on 127.0.0.1 in front of ``upstream`` (host, port).

    ``mode``: ``"pass"`` forwards everything; ``"drop"`` sends an object download's headers
    and the first half of its body, then closes the connection; ``"stall"`` sends the same
    half and then nothing, keeping the connection open until the test ends.  Only GETs of
    ``*.xplane.pb`` objects are touched (listings pass).  ``gets`` counts those GETs."""

    def __init__(self, upstream_port: int, mode: str = "pass"):
        self.upstream = ("127.0.0.1", upstream_port)
        self.mode = mode
        self.gets = 0
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        reader = conn.makefile("rb")
        try:
            while not self._stop.is_set():
                request = _read_head(reader)
                if request is None:
                    return
                head, length = request
                if b"\r\nexpect: 100-continue" in head.lower():  # botocore's uploads
                    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    head = _without_header(head, b"expect")
                body = reader.read(length) if length else b""
                response = self._forward(head, body)
                if not self._send(conn, head, response):
                    return
        except OSError:
            return
        finally:
            reader.close()
            conn.close()

    def _forward(self, head: bytes, body: bytes) -> tuple[bytes, bytes]:
        with socket.create_connection(self.upstream, timeout=30) as up:
            up.sendall(head + body)
            reader = up.makefile("rb")
            response = _read_message(reader, head_request=head.startswith(b"HEAD "))
            reader.close()
        assert response is not None, "moto closed the connection without answering"
        return response

    def _send(self, conn: socket.socket, head: bytes, response) -> bool:
        """Send the answer, or half of it; False when the connection is to end."""
        rhead, rbody = response
        first = head.split(b"\r\n", 1)[0].split()
        is_object = first[0] == b"GET" and first[1].split(b"?")[0].endswith(b".xplane.pb")
        if is_object:
            self.gets += 1
        if not is_object or self.mode == "pass" or len(rbody) < 2:
            conn.sendall(rhead + rbody)
            return True
        conn.sendall(rhead + rbody[: len(rbody) // 2])
        if self.mode == "stall":
            self._stop.wait()
        return False

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
        self._thread.join(5)


def _read_message(reader, head_request: bool = False):
    """One HTTP/1.1 response (head, body) with a Content-Length body; None at EOF.  The
    answer to a HEAD request (``head_request``) has no body whatever its Content-Length
    says."""
    message = _read_head(reader)
    if message is None:
        return None
    head, length = message
    if head_request or head.split(b" ", 2)[1] in (b"204", b"304"):
        return head, b""
    return head, reader.read(length) if length else b""


def _without_header(head: bytes, name: bytes) -> bytes:
    lines = head.split(b"\r\n")
    return b"\r\n".join(x for x in lines if x.split(b":", 1)[0].strip().lower() != name)


def _read_head(reader):
    """The head of one HTTP/1.1 message and its Content-Length; None at EOF."""
    line = reader.readline()
    while line in (b"\r\n", b"\n"):
        line = reader.readline()
    if not line:
        return None
    lines = [line]
    length = 0
    while True:
        line = reader.readline()
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
        if name.strip().lower() == "transfer-encoding" and "chunked" in value.lower():
            raise NotImplementedError("chunked bodies are not expected from moto or s3fs")
    return b"".join(lines), length
