"""A truncated file's error says where it ends and what was being read there, and names it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.errors import TruncatedProfileError
from tfprof_nb.xspace import decode_xspace
from tfprof_nb.xspace.truncation import describe_truncation

from ..conftest import DATA

CUT = 300 * 1024


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        value |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return value, pos
        shift += 7


def _first_plane_end(data: bytes) -> int:
    """Where the space's first field (its first plane) ends, read independently."""
    key, pos = _varint(data, 0)
    assert key == (1 << 3) | 2  # XSpace.planes, length-delimited
    length, pos = _varint(data, pos)
    return pos + length


def test_a_capture_cut_at_300_kb_says_where_it_ends(gpu_fixture_file, tmp_path):
    data = gpu_fixture_file.read_bytes()
    cut = tmp_path / "cut.xplane.pb"
    cut.write_bytes(data[:CUT])
    with pytest.raises(tp.ProfileFormatError) as info:
        tp.load(cut)
    exc = info.value
    assert isinstance(exc, TruncatedProfileError)
    assert str(exc) == (
        f"{cut}: ends at byte 307,200 inside the 5th stat of the 117th event of the 19th line "
        "('tf_gpu_private_4/-1927060610') of the 1st plane ('/host:CPU') (needs at least "
        "1,908,907 more bytes): the file is truncated (an interrupted copy or capture?)")
    assert "at byte 0" not in str(exc) and "corrupt" not in str(exc)
    assert exc.path == str(cut) and exc.size == CUT and exc.offset == 0
    # the first plane runs past the cut by what the message says is missing at least
    assert exc.missing == _first_plane_end(data) - CUT == 1_908_907
    assert [what for what, _, _ in exc.inside] == ["plane", "line", "event", "stat"]
    assert "copy it again" in exc.hint
    again = pickle.loads(pickle.dumps(exc))  # (errors travel back from Dask workers)
    assert type(again) is TruncatedProfileError and str(again) == str(exc)


@pytest.mark.parametrize("name", ["jax_h200_transformer.xplane.pb",
                                  "tpu_v6e_jax_inference.xplane.pb",
                                  "mi300x_jax08_attention.xplane.pb"])
def test_cuts_of_real_captures_are_truncations(name):
    data = (DATA / name).read_bytes()
    for cut in sorted({2, 5, 1000, CUT, len(data) // 2, len(data) - 3}):
        with pytest.raises(TruncatedProfileError, match=rf"^<bytes>: ends at byte {cut:,} "
                           r"inside the .*(plane|hostname).* \(needs at least [\d,]+ more "
                           r"bytes?\): the file is truncated") as info:
            decode_xspace(data[:cut])
        assert info.value.size == cut and info.value.missing >= 1


def test_names_of_the_records_are_quoted_where_read_before_the_end():
    data = (DATA / "tpu_v6e_jax_inference.xplane.pb").read_bytes()[:CUT]
    found = describe_truncation(lambda off, n: data[off:off + n], len(data))
    assert found.where() == ("inside the 998th event of the 2nd line ('XLA Ops') of the 4th "
                             "plane ('/device:TPU:3')")


def test_whole_files_and_corrupt_ones_are_not_truncations():
    data = (DATA / "tpu_v6e_jax_inference.xplane.pb").read_bytes()
    assert describe_truncation(lambda off, n: data[off:off + n], len(data)) is None
    # a line's length made longer than its plane: corrupt before the end, not cut short
    bad = bytearray(data)
    key, pos = _varint(data, 0)
    _, plane_body = _varint(data, pos)
    line = _find_field(data, plane_body, number=3)
    bad[line + 1] |= 0x7F  # (the first byte of the line's length; its varint stays as long)
    with pytest.raises(tp.ProfileFormatError, match="corrupt") as info:
        decode_xspace(bytes(bad))
    assert not isinstance(info.value, TruncatedProfileError)


def _find_field(data: bytes, pos: int, number: int) -> int:
    """Where the first length-delimited field ``number`` of a message at ``pos`` starts."""
    while True:
        key, body = _varint(data, pos)
        assert key & 7 in (0, 2)
        if key & 7 == 0:
            pos = _varint(data, body)[1]
            continue
        if key >> 3 == number:
            return pos
        length, body = _varint(data, body)
        pos = body + length


@pytest.mark.parametrize("data", [b"\r\x00", b"\x0a", b"\x0a\x80", b"\x0a\x05\x1a\x10"])
def test_short_odd_data_is_described_without_failing(data):
    found = describe_truncation(lambda off, n: data[off:off + n], len(data))
    assert found is None or found.problem().startswith(f"ends at byte {len(data)} ")


def test_a_deep_walk_stops_at_its_field_budget(monkeypatch):
    import tfprof_nb.xspace.truncation as truncation

    data = (DATA / "tpu_v6e_jax_inference.xplane.pb").read_bytes()[:CUT]
    monkeypatch.setattr(truncation, "MAX_FIELDS", 50)
    found = describe_truncation(lambda off, n: data[off:off + n], len(data))
    assert found is not None and found.missing >= 1
    assert found.problem().startswith("ends at byte 307,200 inside the ")
    assert np.all([what for what, _, _ in found.inside])
