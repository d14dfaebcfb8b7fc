"""Building the native library: where it goes when the package's directory is read-only, and
what a compiler that fails or is missing leaves (one clear error, no file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfprof_nb import _native
from tfprof_nb._native.build import FLAGS, Toolchain, build_library


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


@pytest.mark.parametrize("compiler, said", [
    ("/bin/false", "building tfprof_nb's native library failed"),
    ("/nonexistent/cc", "tfprof_nb needs a C compiler to build its decoder once"),
])
def test_a_compiler_that_fails_leaves_one_error_and_no_library(tmp_path, compiler, said):
    """Each source compiles on its own, several at once: the first failure is the error
    (naming the command), and neither a library nor a half-built file is left."""
    with pytest.raises(RuntimeError, match=said) as err:
        build_library(tmp_path, toolchain=Toolchain((compiler,), compiler, FLAGS))
    assert compiler in str(err.value)
    assert list(tmp_path.iterdir()) == []
