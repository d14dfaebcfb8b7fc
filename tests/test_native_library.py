"""Where the native library is built when the package's directory is read-only."""

from __future__ import annotations

import os
from pathlib import Path

from tfprof_nb import _native


def test_url_cache_switch_is_not_a_folder(tmp_path, monkeypatch):
    """TFPROF_NB_CACHE=0 turns the URL cache off: the library is still built under
    ~/.cache/tfprof_nb/native (here XDG_CACHE_HOME), never into ./0/native."""
    read_only, work = tmp_path / "package", tmp_path / "cwd"
    read_only.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TFPROF_NB_CACHE", "0")
    monkeypatch.delenv("TFPROF_NB_NATIVE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(_native, "SOURCE_DIR", read_only)
    access = os.access
    monkeypatch.setattr(_native.os, "access",
                        lambda p, mode: False if Path(p) == read_only else access(p, mode))
    built = _native._find_or_build()
    assert built.parent == tmp_path / "xdg" / "tfprof_nb" / "native" and built.is_file()
    assert not (work / "0").exists()
    monkeypatch.setenv("TFPROF_NB_NATIVE_DIR", str(tmp_path / "chosen"))
    assert _native._cache_dir() == tmp_path / "chosen"
