"""A worker's hardware endpoint (tp.start_server's sampler over HTTP), served in this process
and read with the client's fetch."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.capturing.hardware_remote import fetch_hardware
from tfprof_nb.capturing.hardware_sampler import HardwareSampler
from tfprof_nb.capturing.hardware_server import start_hardware_server
from tfprof_nb.xspace.hardware_file import read_hardware

from ..conftest import free_port


@pytest.fixture(scope="module")
def server():
    srv = start_hardware_server(free_port(), 10)
    deadline = time.monotonic() + 30
    while len(srv.sampler._times) < 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    yield srv
    srv.close()


def _get(port: int, query: str):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{query}", timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_the_window_asked_is_answered_as_a_hardware_file(server):
    now = time.time_ns()
    every = read_hardware(fetch_hardware("127.0.0.1", server.port, 0, now))
    times = np.unique(every.time_ns)
    assert len(times) >= 20 and every.meta["period_ms"] == 10
    assert "process_rss_bytes" in every.series_counter
    since, until = int(times[5]), int(times[-5])
    part = read_hardware(fetch_hardware("127.0.0.1", server.port, since, until))
    assert np.array_equal(np.unique(part.time_ns), times[5:-4])
    assert (part.meta["started_ns"], part.meta["stopped_ns"]) == (since, until)


def test_bad_requests_are_answered_and_the_server_goes_on(server):
    assert _get(server.port, "/hardware?since_ns=soon") == \
        (400, b"since_ns must be an integer (ns since the epoch), got 'soon'")
    assert _get(server.port, "/")[0] == 404
    status, body = _get(server.port, "/hardware")
    assert status == 200 and len(read_hardware(body))


def test_a_taken_port_is_a_warning(server):
    taken = free_port()
    import socket

    with socket.socket() as s:
        s.bind(("0.0.0.0", taken))
        s.listen(1)
        with pytest.warns(tp.CaptureWarning, match=f"did not start on port {taken}"):
            assert start_hardware_server(taken, 10) is None


def test_the_ring_keeps_the_last_seconds_only():
    sampler = HardwareSampler(10, keep_s=0.1).start()
    deadline = time.monotonic() + 30
    while len(sampler._times) < 10 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)
    sampler.stop()
    assert len(sampler._times) == 10  # 0.1 s at 10 ms
    samples = sampler.samples()
    # every sample the ring holds, but one a busy machine let start after stop() (past the
    # window's end)
    kept = [t for t in sampler._times if sampler.started_ns <= t <= sampler.stopped_ns]
    assert np.unique(samples.time_ns).tolist() == sorted(kept) and len(kept) >= 9


@pytest.mark.parametrize("kwargs, match", [({"sample_ms": -1}, "sample_ms"),
                                           ({"hardware_port": 0}, "hardware_port"),
                                           ({"hardware_port": "same"}, "hardware_port")])
def test_start_server_checks_its_hardware_options_first(kwargs, match):
    port = free_port()
    if kwargs.get("hardware_port") == "same":
        kwargs = {"hardware_port": port}
    with pytest.raises(ValueError, match=match):
        tp.start_server(port, **kwargs)
