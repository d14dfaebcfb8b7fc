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
    # the breakdown's means are the overview's (XProf's rule: over the steps it counts)
    for col, avg in prof.overview().breakdown.avg_ms.items():
        assert values[col] == pytest.approx(avg), col


@pytest.mark.parametrize("name", ["jax_h200_inputbound.xplane.pb",
                                  "tpu_v6e_jax_inference.xplane.pb"])
def test_top_op_is_the_first_row_of_the_op_stats_side(name):
    """The row's top op and its share are the op stats table's (without idle) first device
    row, read without building that table."""
    prof = tp.load(DATA / name, progress=False)
    values, _ = window_values(prof)
    assert not prof._results.ready("op_stats_without_idle")
    ops = prof.op_stats_table(include_idle=False)
    first = ops[ops.host_or_device == "Device"].iloc[0]
    assert (values["top_op"], values["top_op_pct"]) == (first.operation, first.self_time_pct)


def test_a_profile_without_devices_skips_the_duty_cycle(cpu_file):
    """Without an active device the duty cycle is not computed, and the row's input wait and
    duty cycle are those of the measures made with it."""
    from tfprof_nb.analysis.findings.measures import wait_and_duty

    prof = tp.load(cpu_file, progress=False)
    values, _ = window_values(prof)
    assert not prof._results.ready("duty_cycle")
    full = wait_and_duty(prof.steps, prof.result("gpu_utilization"), prof.result("duty_cycle"),
                         prof.result("input_wait"), len(prof.result("info")))
    for key, measure in (("input_pct", "input_wait_pct"), ("duty_cycle_pct", "duty_cycle_pct")):
        assert values[key] == pytest.approx(value_of(full, measure, np.nan), nan_ok=True)
