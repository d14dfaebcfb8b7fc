"""A window's row values (``monitor_values``) computed without ``prof.measures``: the same
numbers as the window's own measures, on real GPU and TPU profiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.findings.measure_words import value_of
from tfprof_nb.capturing.monitor_values import window_values

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("name", ["jax_h200_inputbound.xplane.pb",
                                  "tpu_v6e_jax_inference.xplane.pb"])
def test_row_values_are_the_window_s_measures_without_the_other_analyses(name):
    """The row's input wait and duty cycle are ``prof.measures``' figures, and computing the
    row runs neither the HLO stats nor the roofline that the other measures need."""
    prof = tp.load(DATA / name, progress=False)
    values, step_ms = window_values(prof)
    assert not prof._results.ready("measures") and not prof._results.ready("roofline") \
        and not prof._results.ready("hlo_stats")
    assert np.isfinite(values["duty_cycle_pct"])
    for key, measure in (("input_pct", "input_wait_pct"), ("duty_cycle_pct", "duty_cycle_pct")):
        assert values[key] == pytest.approx(value_of(prof.measures, measure, np.nan),
                                            nan_ok=True)
    assert len(step_ms) == len(prof.steps)
