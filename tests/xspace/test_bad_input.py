"""Unreadable input gives a clear error naming the file; nothing crashes or hangs."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.xspace import read_xspace

from .reference import tf_parse


def _write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_empty_file(tmp_path):
    p = _write(tmp_path, "h.xplane.pb", b"")
    with pytest.raises(tp.ProfileFormatError, match="empty") as exc:
        tp.load(p)
    assert str(p) in str(exc.value)


@pytest.mark.parametrize("make, expect", [
    (lambda raw: gzip.compress(raw), "gzip"),
    (lambda raw: b"\x89PNG\r\n\x1a\n" + raw[:100], "PNG"),
    (lambda raw: json.dumps({"traceEvents": []}).encode(), "JSON"),
    (lambda raw: b"hello, this is not a profile at all\n" * 20, "text"),
    (lambda raw: b"PK\x03\x04" + raw[:50], "zip"),
])
def test_wrong_file_types_are_named(tmp_path, cpu_file, make, expect):
    p = _write(tmp_path, "h.xplane.pb", make(cpu_file.read_bytes()))
    with pytest.raises(tp.ProfileFormatError, match=expect) as exc:
        tp.load(p)
    assert str(p) in str(exc.value)


def test_random_bytes(tmp_path):
    rng = np.random.default_rng(0)
    for i in range(200):
        p = _write(tmp_path, f"r{i}.xplane.pb", rng.bytes(int(rng.integers(1, 5000))))
        try:
            read_xspace(p)
        except tp.ProfileFormatError as exc:
            assert str(p) in str(exc)


def test_truncated_files_fail_or_agree_with_tensorflow(tmp_path, cpu_file):
    raw = cpu_file.read_bytes()
    cuts = sorted(set(np.linspace(1, len(raw) - 1, 60).astype(int).tolist()))
    raised = 0
    for cut in cuts:
        p = _write(tmp_path, "t.xplane.pb", raw[:cut])
        try:
            x = read_xspace(p)
        except tp.ProfileFormatError as exc:
            raised += 1
            assert str(p) in str(exc) and "truncated" in str(exc)
            assert exc.offset is None or 0 <= exc.offset < cut
            continue
        # a cut exactly between two fields is a valid, shorter message: TF agrees on it
        ref = tf_parse(raw[:cut])
        assert len(x.events) == sum(len(ln.events) for pl in ref.planes for ln in pl.lines)
    assert raised >= len(cuts) * 0.8


def test_flipped_bytes_never_crash(tmp_path, gpu_fixture_file):
    raw = bytearray(gpu_fixture_file.read_bytes())
    rng = np.random.default_rng(1)
    for _ in range(40):
        bad = bytearray(raw)
        for pos in rng.integers(0, len(raw), 8):
            bad[pos] ^= 1 << int(rng.integers(0, 8))
        p = _write(tmp_path, "f.xplane.pb", bytes(bad))
        try:
            read_xspace(p)
        except tp.ProfileFormatError as exc:
            assert str(p) in str(exc)


def test_missing_path():
    with pytest.raises(FileNotFoundError, match="no-such-dir"):
        tp.load("/tmp/no-such-dir/for/tfprof")


def test_directory_without_profiles(tmp_path):
    (tmp_path / "plugins" / "profile" / "run1").mkdir(parents=True)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(tp.ProfileFormatError, match="holds no profile") as exc:
        tp.load(tmp_path)
    assert str(tmp_path) in str(exc.value)


def test_empty_list_of_paths():
    with pytest.raises(ValueError):
        tp.load([])


def test_a_file_changed_while_read_is_named_not_called_corrupt(cpu_file):
    """When the walk meets other events than the framing pass counted (the file rewritten
    between them), the error names the file and says so, not that the file is corrupt."""
    from tfprof_nb.xspace.decoder import ERR_CHANGED, _raise_wire_error

    buf = np.frombuffer(cpu_file.read_bytes()[:4096], np.uint8)
    with pytest.raises(tp.ProfileFormatError, match="changed while it was read") as exc:
        _raise_wire_error(buf, str(cpu_file), ERR_CHANGED, 64)
    assert str(cpu_file) in str(exc.value) and "corrupt" not in str(exc.value)


def test_only_read_only_mappings_hand_pages_back(cpu_file):
    """Walked pages go back to the kernel only from a read-only file mapping: a private
    (copy-on-write) or writable mapping keeps them, and decodes the same."""
    import mmap

    from tfprof_nb.xspace import decode_xspace
    from tfprof_nb.xspace.decoder import _pages_can_go

    with open(cpu_file, "rb") as f:
        ro = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        cow = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    try:
        assert _pages_can_go(ro) and not _pages_can_go(cow)
        assert not _pages_can_go(cpu_file.read_bytes())
        a, b = decode_xspace(ro, path=str(cpu_file)), decode_xspace(cow, path=str(cpu_file))
        np.testing.assert_array_equal(a.events.line_start_ps, b.events.line_start_ps)
        assert len(a.events) == len(read_xspace(cpu_file).events) > 0
    finally:
        ro.close()
        cow.close()


def test_anonymous_memory_in_small_chunks_decodes_the_same(cpu_file, monkeypatch):
    """A profile read into anonymous memory (an object store without the cache), walked in
    many small chunks on two threads, decodes the same as the file."""
    import mmap

    from tfprof_nb.xspace import decode_xspace
    from tfprof_nb.xspace import decoder

    data = cpu_file.read_bytes()
    anon = mmap.mmap(-1, len(data))
    anon[:] = data
    monkeypatch.setattr(decoder, "CHUNK_BYTES", 64 << 10)  # many chunks, many pages walked
    try:
        ours = decode_xspace(anon, path="anon", threads=2)
        ref = read_xspace(cpu_file)
        np.testing.assert_array_equal(ours.events.line_start_ps, ref.events.line_start_ps)
        np.testing.assert_array_equal(ours.stats.raw_value, ref.stats.raw_value)
    finally:
        anon.close()


@pytest.mark.parametrize("at_field", [-1, 4096])
def test_running_out_of_memory_mid_walk_is_a_memory_error_not_a_corrupt_file(cpu_file,
                                                                             at_field):
    """The walker reports running out of memory with or without the field it was reading:
    either way the error is a MemoryError naming the file, never a format error."""
    from tfprof_nb.xspace import decoder

    walk = object.__new__(decoder._Walk)
    walk.buf = np.frombuffer(cpu_file.read_bytes()[:8192], np.uint8)
    walk.path = str(cpu_file)
    walk.info = np.zeros(len(decoder.TABLES) + len(decoder.COUNTERS), np.int64)
    walk.info[decoder.C_ERR] = decoder.ERR_NO_MEMORY
    walk.info[decoder.C_ERR_POS] = at_field
    with pytest.raises(MemoryError, match="out of memory") as exc:
        walk.check()
    assert str(cpu_file) in str(exc.value) and "corrupt" not in str(exc.value)
    walk.info[decoder.C_ERR] = 0
    walk.check()  # no error: nothing raised


def test_a_folder_that_cannot_be_listed_is_named(tmp_path, cpu_file, monkeypatch):
    """A logdir whose runs (or run) cannot be listed raises PermissionError naming the folder,
    not "holds no profile"; an unreadable folder beside a readable run does not matter."""
    import shutil
    from pathlib import Path

    run = tmp_path / "logdir" / "plugins" / "profile" / "run1"
    run.mkdir(parents=True)
    shutil.copyfile(cpu_file, run / "vm.xplane.pb")
    (tmp_path / "logdir" / "private").mkdir()
    denied: set = set()
    iterdir = Path.iterdir

    def guarded(self):
        if self in denied:
            raise PermissionError(13, "Permission denied", str(self))
        return iterdir(self)

    monkeypatch.setattr(Path, "iterdir", guarded)
    for folder in (run.parent, run):  # plugins/profile, then the run
        denied.clear()
        denied.add(folder)
        with pytest.raises(PermissionError, match="Permission denied") as exc:
            tp.load(tmp_path / "logdir")
        assert str(tmp_path / "logdir") in str(exc.value) and str(folder) in str(exc.value)
    denied.clear()
    denied.add(tmp_path / "logdir" / "private")
    assert tp.load(tmp_path / "logdir").hosts == ["vm"]
