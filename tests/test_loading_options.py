"""``tp.load``'s keyword arguments: an unknown one is refused with a TypeError naming the
closest known ones, before any file is read; the signature stays the function's own."""

from __future__ import annotations

import inspect

import pytest

import tfprof_nb as tp
from tfprof_nb.loading import load

from .conftest import GPU_FIXTURE_DIR


@pytest.mark.parametrize("typo, meant", [("clinet", "client"), ("on_eror", "on_error"),
                                         ("storage_option", "storage_options"),
                                         ("timout", "timeout"), ("paralel", "parallel")])
def test_an_unknown_keyword_names_the_close_match(typo, meant):
    with pytest.raises(TypeError) as info:
        tp.load(GPU_FIXTURE_DIR, **{typo: None})
    message = str(info.value)
    assert f"unexpected keyword argument {typo!r}" in message
    assert f"did you mean {meant!r}" in message


def test_a_keyword_with_no_close_match_lists_the_known_ones(tmp_path):
    missing = tmp_path / "nothing here"  # refused before the path is looked at
    with pytest.raises(TypeError, match="it takes path, parallel, on_error, client") as info:
        tp.load(missing, colour="red")
    assert "'colour'" in str(info.value)


def test_the_signature_and_known_keywords_still_work():
    params = inspect.signature(load).parameters
    assert list(params)[:3] == ["path", "parallel", "on_error"]
    prof = tp.load(GPU_FIXTURE_DIR, parallel=False, progress=False, on_error="raise")
    assert len(prof.hosts) == 1
