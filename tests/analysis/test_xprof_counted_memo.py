"""XProf's steps of a step table are counted once per table, and never stale."""

from __future__ import annotations

import gc

import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.steps import xprof_counted
from tfprof_nb.analysis.steps.xprof_counted import xprof_count, xprof_step_ms


def test_a_table_is_counted_once_and_anew_when_changed(cpu_file, monkeypatch):
    steps = tp.load(cpu_file).steps.copy()
    counts = []
    real = xprof_counted._count
    monkeypatch.setattr(xprof_counted, "_count", lambda s: counts.append(1) or real(s))
    first, again = xprof_count(steps), xprof_count(steps)
    assert len(counts) == 1 and len(first.rows) > 0
    assert first.rows.equals(again.rows) and first.step_ms.equals(again.step_ms)
    # each caller's tables are its own: writing into one changes no other's
    first.rows["mine"] = 1
    first.step_ms.iloc[0] = -1.0
    third = xprof_count(steps)
    assert "mine" not in third.rows and third.step_ms.iloc[0] > 0 and len(counts) == 1
    # a table changed in place is counted again, with its new times
    steps["duration_ms"] = steps["duration_ms"] * 3
    assert xprof_step_ms(steps).sum() == pytest.approx(3 * again.step_ms.sum())
    assert len(counts) == 2


def test_an_entry_goes_with_its_table(cpu_file):
    steps = tp.load(cpu_file).steps.copy()
    xprof_count(steps)
    key = id(steps)
    assert key in xprof_counted._COUNTED
    del steps
    gc.collect()
    assert key not in xprof_counted._COUNTED  # (the entry held no reference to its table)
