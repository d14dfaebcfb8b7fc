"""``duty_cycle``, combined from every host's ``gpu_time`` partial: per device: busy time over
the span from its first to its last activity; ``attrs["device_duty_cycle_pct"]`` combines the
devices as xprof's overview does."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..runtime.unit import Analysis
from .time import concat_parts

__all__ = ["ANALYSES", "duty_cycle"]


def duty_cycle(parts: dict, gpu_time: dict) -> pd.DataFrame:
    """Per device: busy time over its active span, in %; ``attrs["device_duty_cycle_pct"]``
    is the devices' busy time over their spans summed (xprof's overview definition)."""
    dev = concat_parts([p.devices for p in gpu_time.values()],
                  pd.DataFrame(columns=["host", "device", "busy_us", "span_us"]))
    dev = dev[["host", "device", "kernels", "kernels_under_10us", "copies", "launches_linked",
               "busy_us", "span_us"]] if len(dev) else dev
    dev = dev.assign(duty_cycle_pct=np.divide(
        100 * dev.busy_us.astype(float), dev.span_us.astype(float),
        out=np.zeros(len(dev)), where=dev.span_us.astype(float) > 0))
    span = float(dev.span_us.sum()) if len(dev) else 0.0
    dev.attrs["device_duty_cycle_pct"] = 100 * float(dev.busy_us.sum()) / span if span else None
    return dev


ANALYSES = (Analysis("duty_cycle", combine=duty_cycle, needs=("gpu_time",)),)
