"""Property-based fuzzing: mutated real profiles either decode like TensorFlow's parser or raise
ProfileFormatError.  A crash (segfault) would kill the test run, so passing means none."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfprof_nb as tp
from tfprof_nb.xspace import decode_xspace

from .reference import tf_parse

_SETTINGS = dict(database=None, derandomize=True, deadline=None,
                 suppress_health_check=list(HealthCheck))


@st.composite
def mutations(draw, size: int):
    kind = draw(st.sampled_from(["flip", "set", "truncate", "delete", "duplicate", "insert",
                                 "varint"]))
    pos = draw(st.integers(0, size - 1))
    if kind == "flip":
        return kind, pos, draw(st.integers(0, 7))
    if kind == "set":
        return kind, pos, draw(st.integers(0, 255))
    if kind in ("delete", "duplicate"):
        return kind, pos, draw(st.integers(1, 64))
    if kind == "insert":
        return kind, pos, draw(st.binary(min_size=1, max_size=16))
    if kind == "varint":  # an over-long or huge varint where a length might be
        return kind, pos, draw(st.sampled_from([b"\xff" * 11, b"\xff" * 9 + b"\x01",
                                                b"\x80\x80\x80\x80\x10"]))
    return kind, pos, None


def _apply(raw: bytes, m) -> bytes:
    kind, pos, arg = m
    b = bytearray(raw)
    if kind == "flip":
        b[pos] ^= 1 << arg
    elif kind == "set":
        b[pos] = arg
    elif kind == "truncate":
        del b[pos:]
    elif kind == "delete":
        del b[pos:pos + arg]
    elif kind == "duplicate":
        b[pos:pos] = b[pos:pos + arg]
    elif kind in ("insert", "varint"):
        b[pos:pos] = arg
    return bytes(b)


def _check(data: bytes) -> None:
    try:
        ours = decode_xspace(data, path="mutant.xplane.pb")
    except tp.ProfileFormatError as exc:
        assert str(exc).startswith("mutant.xplane.pb")
        return
    try:
        ref = tf_parse(data)
    except Exception:  # TF is stricter (e.g. invalid UTF-8): nothing to compare
        return
    ref_events = [(ev.metadata_id, ev.offset_ps, ev.duration_ps, len(ev.stats))
                  for pl in ref.planes for ln in pl.lines for ev in ln.events]
    ev = ours.events
    n_stats = np.bincount(ours.stats.owner[ours.stats.owner_kind == 0], minlength=len(ev))
    assert len(ours.plane_names) == len(ref.planes)
    assert list(zip(ev.metadata_id.tolist(), ev.offset_ps.tolist(), ev.duration_ps.tolist(),
                    n_stats.tolist())) == ref_events


@pytest.fixture(scope="module")
def cpu_bytes(cpu_file):
    return cpu_file.read_bytes()


@pytest.fixture(scope="module")
def gpu_bytes(gpu_fixture_file):
    return gpu_fixture_file.read_bytes()


def test_fuzz_cpu_profile(cpu_bytes):
    @settings(max_examples=2500, **_SETTINGS)
    @given(st.lists(mutations(len(cpu_bytes)), min_size=1, max_size=4))
    def run(ms):
        data = cpu_bytes
        for m in ms:
            if data:
                data = _apply(data, (m[0], m[1] % len(data), m[2]))
        if data:
            _check(data)

    run()


def test_fuzz_gpu_fixture(gpu_bytes):
    @settings(max_examples=200, **_SETTINGS)
    @given(mutations(len(gpu_bytes)))
    def run(m):
        _check(_apply(gpu_bytes, m))

    run()


def test_fuzz_arbitrary_bytes():
    @settings(max_examples=1500, **_SETTINGS)
    @given(st.binary(min_size=1, max_size=512))
    def run(data):
        _check(data)

    run()
