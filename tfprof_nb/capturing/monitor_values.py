"""A window's numbers, from its Profile: the values of its row of a monitor's history (the
same tables the window's overview reads) and its steps' durations.  Computed in the analysis
worker process (``monitor_worker``), or on the analysis thread where none starts.

Only the analyses the row shows run (steps, the input-wait and duty-cycle measures, memory,
the op stats): the rest of a window's tables (``prof.measures``' other rows need the HLO
stats and the roofline, 40 of the 150 ms of CPU a window of the monitor benchmark's JAX steps
took) are computed when the window's Profile is asked for (``Monitor.window``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.findings.measure_words import value_of
from ..analysis.findings.measures import active_device_rows, wait_and_duty
from ..analysis.steps.xprof_counted import xprof_steps
from ..analysis.tf.op_stats import top_op
from ..constants import CATEGORY_COLUMNS

__all__ = ["window_values"]


def window_values(prof) -> tuple[dict, np.ndarray]:
    """A window's numbers from its Profile (the same tables the overview reads): median step
    time, mean ms per step-time category, input wait share, device duty cycle, memory peak,
    top op; and its steps' durations (ms)."""
    steps = prof.steps
    step_ms = steps.duration_ms.to_numpy(dtype=float)
    values = {"median_step_ms": float(np.median(step_ms)) if len(step_ms) else np.nan}
    counted = xprof_steps(steps)  # (the breakdown is XProf's rule: over the steps it counts)
    for col in CATEGORY_COLUMNS:
        values[col] = float(counted[col].mean()) if len(counted) else np.nan
    util = prof.result("gpu_utilization")
    # (the duty cycle's row needs an active device: without one it is not computed)
    duty = prof.result("duty_cycle") if len(active_device_rows(util)) else pd.DataFrame()
    measures = wait_and_duty(steps, util, duty, prof.result("input_wait"),
                             len(prof.result("info")))
    # (prof.measures' rows: the numbers the window's own pages quote)
    values["input_pct"] = value_of(measures, "input_wait_pct", np.nan)
    values["duty_cycle_pct"] = value_of(measures, "duty_cycle_pct", np.nan)
    memory = prof.memory_summary
    values["memory_peak_bytes"] = float(memory.peak_bytes_in_use.max()) if len(memory) \
        else np.nan
    # (the first row of prof.op_stats_table(include_idle=False), the table not built)
    values["top_op"], values["top_op_pct"] = top_op(prof.result("device_ops"),
                                                    prof.result("host_ops"))
    if not len(step_ms):
        values["note"] = "no steps found in this window's profile"
    return values, step_ms
