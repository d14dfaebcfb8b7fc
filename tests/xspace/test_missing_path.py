"""A path that does not exist: its error names it, and the closest existing path beside it."""

from __future__ import annotations

import shutil

import pytest

import tfprof_nb as tp
from tfprof_nb.errors import ProfileFileNotFoundError

from ..conftest import DATA


@pytest.fixture
def logdir(tmp_path):
    run = tmp_path / "logs" / "plugins" / "profile" / "run1"
    run.mkdir(parents=True)
    shutil.copy(DATA / "mi300x_jax08_gemm.xplane.pb", run / "host.xplane.pb")
    return tmp_path / "logs"


@pytest.mark.parametrize("typo, meant", [
    ("lgos", "logs"),
    ("logs/plugins/profle/run1", "logs/plugins/profile/run1"),
    ("logs/plugins/profile/run1/hots.xplane.pb", "logs/plugins/profile/run1/host.xplane.pb"),
])
def test_a_typo_names_the_close_match(logdir, typo, meant):
    root = logdir.parent
    with pytest.raises(FileNotFoundError) as info:
        tp.load(root / typo)
    exc = info.value
    assert isinstance(exc, ProfileFileNotFoundError) and exc.errno == 2
    assert str(exc) == (f"{root / typo}: no such file or directory "
                        f"(did you mean {str(root / meant)!r}?)")
    assert exc.path == str(root / typo) and "check the path" in exc.hint
    assert len(tp.load(root / meant).events) > 0  # the guess is a profile


def test_a_relative_typo_is_guessed_relative(logdir, monkeypatch):
    monkeypatch.chdir(logdir.parent)
    with pytest.raises(ProfileFileNotFoundError,
                       match=r"^lgos: no such file or directory \(did you mean 'logs'\?\)$"):
        tp.load("lgos")


def test_no_guess_without_a_close_name(logdir):
    missing = logdir.parent / "elsewhere" / "run"
    with pytest.raises(ProfileFileNotFoundError) as info:
        tp.load(missing)
    assert str(info.value) == f"{missing}: no such file or directory"
