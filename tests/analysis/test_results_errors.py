"""A combine that fails while ``analyse()`` runs is run once and its error raised, in order."""

from __future__ import annotations

import dataclasses

import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.runtime import registry


def test_a_failing_combine_raises_once_and_is_not_run_again(cpu_file, monkeypatch):
    """host_ops' combine fails: analyse() raises that error, having run it once (not again
    for the results that need it, nor at the end), and a later request runs it afresh."""
    unit, calls = registry.get("host_ops"), []

    def failing(parts, **needs):
        calls.append(1)
        raise RuntimeError("combine broke")

    monkeypatch.setitem(registry.analyses(), "host_ops",
                        dataclasses.replace(unit, combine=failing))
    prof = tp.load(cpu_file)
    with pytest.raises(RuntimeError, match="combine broke"):
        prof.analyse(release=False)
    assert len(calls) == 1
    assert registry.dependents("host_ops")  # (results needing it were left untried)
    monkeypatch.setitem(registry.analyses(), "host_ops", unit)
    assert len(prof.op_stats) > 0  # asked again, it is computed (a failure is not cached)
