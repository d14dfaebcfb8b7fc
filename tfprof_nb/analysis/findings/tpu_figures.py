"""The TPU figures of XProf's overview (duty cycle, idle time over the whole profile, the
host plane's MXU and HBM counters, utilisation against the roofline), read by the overview
and by ``prof.measures``."""

from __future__ import annotations

import pandas as pd

__all__ = ["device_figures"]


def device_figures(tpu, xla, roofline: pd.DataFrame, host_ops: tuple,
                   duty_cycle_pct: float | None) -> dict:
    """The TPU figures of XProf's overview: duty cycle (``duty_cycle``'s), idle share of
    the cores' time, the host plane's MXU and HBM utilisation counters, and the
    device's FLOP-rate utilisation relative to the roofline and HBM bandwidth relative to
    its peak over the whole profile (the roofline's program row, as XProf's roofline tool gives
    them; XProf's overview counts only the ops of complete steps, so where it finds no steps it
    shows 0% for these two).  Empty without TPUs."""
    if tpu is None or not tpu.cores:
        return {}
    totals = xla.totals[xla.totals.device_type == "TPU"]
    span, busy = int(totals.span_ps.sum()), int(totals.op_ps.sum())
    host_table, host_total, host_op = host_ops
    duty = float("nan") if duty_cycle_pct is None else float(duty_cycle_pct)
    out = {"device_type": "TPU", "cores": tpu.cores, "duty_cycle_pct": duty,
           "idle_pct": 100.0 * (1 - busy / span) if span else float("nan"),
           "host_idle_pct": 100.0 * (1 - host_op / host_total) if host_total else float("nan"),
           "mxu_utilization_pct": tpu.counters.get("mxu_utilization_pct", float("nan")),
           "hbm_utilization_pct": tpu.counters.get("hbm_utilization_pct", float("nan"))}
    program = roofline[roofline.category == "Program"]
    known = len(program) and pd.notna(program.roofline_efficiency_pct.iloc[0])
    out["flop_rate_utilization_pct"] = float(program.roofline_efficiency_pct.iloc[0]) \
        if known else float("nan")
    out["hbm_bw_utilization_pct"] = float(program.memory_bw_utilization_pct.iloc[0]) \
        if known else float("nan")
    return out
