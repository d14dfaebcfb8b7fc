"""One failure policy per profile, ``tp.load(..., on_error=...)``, for loading and analysing
alike: ``"raise"``, or ``"skip"`` the host with its reason recorded (``prof.load_errors`` for
a host that cannot be read, ``prof.skipped(name)`` for the hosts left out of one table),
the table of the other hosts still usable.  Real files: copies of the GPU BERT capture of
tests/data, one of them cut in half (a real truncated host file)."""

from __future__ import annotations

import dataclasses
import shutil
import warnings

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.runtime import registry

from ...conftest import GPU_FIXTURE_DIR

GPU_FILE = next(GPU_FIXTURE_DIR.glob("*.xplane.pb"))


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    """Two hosts: two copies of one real capture."""
    folder = tmp_path_factory.mktemp("two_hosts")
    for host in ("worker-0", "worker-1"):
        shutil.copy(GPU_FILE, folder / f"{host}.xplane.pb")
    return folder


@pytest.fixture(scope="module")
def with_truncated(tmp_path_factory, two_hosts):
    """The two hosts and a third whose file ends halfway (an interrupted copy)."""
    folder = tmp_path_factory.mktemp("with_truncated")
    for path in two_hosts.iterdir():
        shutil.copy(path, folder / path.name)
    data = GPU_FILE.read_bytes()
    (folder / "worker-2.xplane.pb").write_bytes(data[:len(data) // 2])
    return folder


@pytest.fixture(scope="module")
def clean(two_hosts):
    return tp.load(two_hosts)


def test_a_truncated_host_is_skipped_with_its_reason_or_raises(with_truncated, clean):
    with pytest.warns(tp.LoadWarning, match="worker-2"):
        prof = tp.load(with_truncated)  # "skip" is the default
    assert prof.hosts == ["worker-0", "worker-1"]
    assert "worker-2.xplane.pb" in prof.load_errors["worker-2"]
    pd.testing.assert_frame_equal(prof.steps, clean.steps)
    with pytest.raises(tp.ProfileFormatError, match="worker-2.xplane.pb"):
        tp.load(with_truncated, on_error="raise")


@pytest.fixture()
def steps_fail_on_worker_1(monkeypatch):
    """The ``steps`` host step fails on worker-1.  Injected at the unit boundary (no host file
    breaks a unit that we know of): the registry's ``steps`` unit is replaced by one whose
    host step raises for that host and runs the real step for the others."""
    unit = registry.get("steps")

    def host(hd, shift_ps, **needs):
        if hd.name == "worker-1":
            raise ValueError("a step table this unit cannot read")
        return unit.host(hd, shift_ps, **needs)

    monkeypatch.setitem(registry.analyses(), "steps", dataclasses.replace(unit, host=host))


def test_a_host_whose_analysis_fails_is_left_out_of_that_table(two_hosts, clean,
                                                                steps_fail_on_worker_1):
    prof = tp.load(two_hosts, on_error="skip")
    with pytest.warns(tp.AnalysisWarning, match=r"worker-1 \(steps\)"):
        steps = prof.steps
    assert set(steps.host) == {"worker-0"}
    pd.testing.assert_frame_equal(steps, clean.steps[clean.steps.host == "worker-0"])
    why = prof.skipped("steps")
    assert list(why) == ["worker-1"] and "a step table this unit cannot read" in why["worker-1"]
    # what needs the steps leaves the host out too, said once (no second warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        use = prof.gpu_utilization  # (gpu_time's host step needs the steps')
        assert prof.skipped("gpu_utilization") == why
        # a table that does not need them keeps every host
        assert set(prof.kernel_stats.host) == {"worker-0", "worker-1"}
        assert prof.skipped("kernel_stats") == {}
        assert prof.hosts == ["worker-0", "worker-1"] and prof.load_errors == {}
    assert len(use) and set(use.host) == {"worker-0"}
    pd.testing.assert_frame_equal(use, clean.gpu_utilization[clean.gpu_utilization.host
                                                             == "worker-0"])


def test_with_raise_a_failing_analysis_names_its_host(two_hosts, steps_fail_on_worker_1):
    prof = tp.load(two_hosts, on_error="raise")
    with pytest.raises(tp.HostAnalysisError) as info:
        prof.steps
    assert info.value.host == "worker-1" and info.value.step == "steps"
    assert prof.skipped("steps") == {}
    kept = prof._results.hosts._partials
    assert ("steps", "worker-0") in kept and ("steps", "worker-1") not in kept


def test_strict_is_the_old_spelling(with_truncated):
    with pytest.warns(DeprecationWarning, match="on_error"):
        with pytest.raises(tp.ProfileFormatError, match="worker-2"):
            tp.load(with_truncated, strict=True)
    with pytest.raises(ValueError, match="on_error must be"):
        tp.load(with_truncated, on_error="ignore")
