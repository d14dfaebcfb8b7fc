"""Where exports go: default names in directories, missing directories, whole files only, and
errors that name the path."""

from __future__ import annotations

import os
import stat

import pytest

import tfprof_nb as tp
from tfprof_nb.export._output import output_file

from ..analysis.test_edge_profiles import CASES, _space


@pytest.fixture(scope="module")
def prof(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny") / "tiny.xplane.pb"
    path.write_bytes(_space(CASES["host_no_markers"]))
    return tp.load(path)


def test_missing_directories_are_created(prof, tmp_path):
    path = prof.to_chrome_trace(tmp_path / "a" / "b" / "t.json")
    assert path == tmp_path / "a" / "b" / "t.json" and path.read_bytes()[:1] == b"{"
    path = prof.to_perfetto(tmp_path / "c" / "t.perfetto-trace")
    assert path.stat().st_size > 0


def test_directory_gets_default_names(prof, tmp_path):
    assert prof.to_chrome_trace(tmp_path) == tmp_path / "trace.json"
    gz = prof.to_chrome_trace(tmp_path, compress=True)
    assert gz == tmp_path / "trace.json.gz" and gz.read_bytes()[:2] == b"\x1f\x8b"
    assert prof.to_perfetto(tmp_path) == tmp_path / "trace.perfetto-trace"
    assert prof.to_chrome_trace(f"{tmp_path}/new/") == tmp_path / "new" / "trace.json"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "new", "trace.json", "trace.json.gz", "trace.perfetto-trace"]


def test_file_mode_follows_umask(prof, tmp_path):
    mask = os.umask(0o022)
    try:
        path = prof.to_chrome_trace(tmp_path / "t.json")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_failure_leaves_no_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "t.json"
    with pytest.raises(RuntimeError, match="midway"):
        with output_file(target, "Chrome trace") as write:
            write(b'{"traceEvents": [')
            raise RuntimeError("midway")
    assert list(tmp_path.iterdir()) == []
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with output_file(target, "Chrome trace", compress=True) as write:
            write(b"x" * 100_000)
            raise RuntimeError("midway")
    assert target.read_text() == "old" and list(tmp_path.iterdir()) == [target]


def test_errors_name_the_path(prof, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match="cannot write the Chrome trace to .*file/sub/t.json"):
        prof.to_chrome_trace(blocker / "sub" / "t.json")
    with pytest.raises(OSError, match="cannot write the Perfetto trace to .*file/t.pftrace"):
        prof.to_perfetto(blocker / "t.pftrace")
    assert blocker.read_text() == "not a directory"
