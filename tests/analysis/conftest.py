"""Fixtures shared by the analysis tests."""

from __future__ import annotations

import shutil

import pytest

import tfprof_nb as tp

from ..conftest import DATA


@pytest.fixture(scope="module")
def rocm_pod(tmp_path_factory):
    """The two ROCm captures (11 s apart) as two hosts of one run."""
    run = tmp_path_factory.mktemp("rocm_pod")
    shutil.copy(DATA / "mi300x_jax08_conv.xplane.pb", run / "worker-0.xplane.pb")
    shutil.copy(DATA / "mi300x_jax08_gemm.xplane.pb", run / "worker-1.xplane.pb")
    return tp.load(run)
