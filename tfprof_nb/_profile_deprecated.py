"""``Profile``'s deprecated ways to give device peaks, kept for one release (each warns and
names ``prof.set_device_peaks``, the one way now): ``with_device_peaks``, ``roofline_for``
and ``op_profile``'s peak arguments."""

from __future__ import annotations

import pandas as pd

from ._deprecated import renamed
from .analysis.xla.device_peaks import user_peaks

__all__ = ["DeprecatedPeaks", "op_profile_with_peaks"]


class DeprecatedPeaks:
    """The deprecated methods, mixed into ``Profile``."""

    def with_device_peaks(self, peak_flops_per_s: float, memory_bw_bytes_per_s: float,
                          device: str = "user"):
        """Deprecated (goes in the next release): use ``set_device_peaks``.  A profile
        sharing this one's decoded hosts whose XLA tables use these peaks."""
        renamed("Profile.with_device_peaks(...)", "prof.set_device_peaks(...)")
        peaks = user_peaks(peak_flops_per_s, memory_bw_bytes_per_s, device, "with_device_peaks")
        return type(self)(self._results.hosts, self.source,
                          {**self._results.inputs, "user_peaks": peaks})

    def roofline_for(self, peak_flops_per_s: float,
                     memory_bw_bytes_per_s: float) -> pd.DataFrame:
        """Deprecated (goes in the next release): ``set_device_peaks``, then ``roofline``.  The
        roofline table against the given peak FLOP/s and memory bandwidth (bytes/s)."""
        from .analysis.xla.roofline import roofline_for

        peaks = user_peaks(peak_flops_per_s, memory_bw_bytes_per_s, "user", "argument")
        renamed("Profile.roofline_for(...)", "prof.set_device_peaks(...), then prof.roofline",
                stacklevel=3)
        return roofline_for(self.result("xla"), peaks)


def op_profile_with_peaks(prof, peak_flops_per_s, memory_bw_bytes_per_s, group_by: str,
                          include_idle: bool) -> pd.DataFrame:
    """``prof.op_profile(...)`` with the deprecated peak arguments (warns at its caller)."""
    from .analysis.xla.op_profile import op_profile_for

    peaks = user_peaks(peak_flops_per_s, memory_bw_bytes_per_s, "user", "argument")
    renamed("op_profile(peak_flops_per_s=..., memory_bw_bytes_per_s=...)",
            "prof.set_device_peaks(...), then prof.op_profile()", stacklevel=4)
    return op_profile_for(prof.result("xla"), peaks, group_by=group_by,
                          include_idle=include_idle)
