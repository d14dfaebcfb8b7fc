"""The monitor's chart (tfprof_nb/plot/monitor_figures.py) from a real capture's window row."""

from __future__ import annotations

import pandas as pd

import tfprof_nb as tp
from tfprof_nb.capturing.monitor_values import window_values
from tfprof_nb.plot.monitor_figures import monitor_figure

from ..conftest import DATA


def test_breakdown_per_window_is_titled_as_xprofs_rule():
    """BERT as a window: its row's input wait (the table's 'input (%)', GPU:6's own: 7.9%)
    and its breakdown's input (XProf's rule: none) differ, so the breakdown's panel says
    whose rule it draws."""
    prof = tp.load(DATA / "gpu_bert_multiworker", progress=False)
    values, step_ms = window_values(prof)
    breakdown_pct = 100 * values["input_ms"] / prof.steps.duration_ms.mean()
    assert f"{values['input_pct']:.1f}" != f"{breakdown_pct:.1f}"
    history = pd.DataFrame([{"window": 0, "status": "analysed", "first_step": 0,
                             "last_step": len(step_ms) - 1, "vs_baseline_pct": 0.0,
                             "regressed": False, **values}])
    fig = monitor_figure(history)
    titles = [a.text for a in fig.layout.annotations]
    breakdown = [t for t in titles if t.startswith("Step-time breakdown per window")]
    assert breakdown == ["Step-time breakdown per window (mean per step XProf counts, "
                         "XProf's rule)"], titles
    drawn = {t.name for t in fig.data if t.type == "bar"}
    assert "Input" not in drawn
