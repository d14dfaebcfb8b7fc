"""When a monitored window regresses: its median step time against a baseline made of the
first windows, with a noise band from their steps' spread.

The rule, as the monitor's view says it:

* the baseline is the median step time of every step of the first ``baseline_windows``
  windows that were analysed with steps (3 by default);
* the noise band of a window is the larger of ``min_pct`` % of the baseline (10 % by default)
  and three times the noise of that window's median step time, estimated from the baseline's
  steps: ``1.2533 * 1.4826 * MAD / sqrt(n)`` (the standard error of a median of ``n`` steps,
  ``n`` the window's own step count, from the median absolute deviation);
* a window after the baseline's is flagged (``regressed``) when its median step time is above
  the baseline by more than its band.  ``vs_baseline_pct`` is every window's median against
  the baseline, once there is one;
* a window with fewer than half the steps asked (``window_steps``: training ended inside it)
  is neither judged nor part of the baseline (its note says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Baseline", "RegressionRule"]

_MEDIAN_SE = 1.2533 * 1.4826  # standard error of a median, per MAD, times sqrt(n)


@dataclass(frozen=True)
class Baseline:
    """The baseline of a run: which windows, how many steps, and the numbers of the rule."""

    windows: tuple[int, ...]
    steps: int
    median_ms: float
    noise_ms: float  # three times the noise of a window's median
    band_ms: float
    window_steps: int
    mad_ms: float = 0.0
    min_pct: float = 10.0

    @property
    def threshold_ms(self) -> float:
        """Median step times of ``window_steps``-step windows above this are regressions."""
        return self.median_ms + self.band_ms

    def band_for(self, n) -> np.ndarray:
        """The noise band (ms) of windows of ``n`` steps (an array)."""
        n = np.maximum(np.asarray(n, dtype=float), 1.0)
        return np.maximum(self.min_pct / 100 * self.median_ms,
                          3 * _MEDIAN_SE * self.mad_ms / np.sqrt(n))


@dataclass(frozen=True)
class RegressionRule:
    """The rule of the module's docstring, with its two knobs."""

    baseline_windows: int = 3
    min_pct: float = 10.0
    window_steps: int = 0  # the steps a window asks for (0: every window is judged)

    def __post_init__(self):
        if isinstance(self.baseline_windows, bool) or not isinstance(self.baseline_windows, int) \
                or self.baseline_windows < 1:
            raise ValueError(f"baseline_windows must be a positive integer, "
                             f"got {self.baseline_windows!r}")
        if not (isinstance(self.min_pct, (int, float)) and self.min_pct >= 0):
            raise ValueError(f"regression_pct must be a number >= 0, got {self.min_pct!r}")

    def baseline(self, step_ms: dict[int, np.ndarray]) -> Baseline | None:
        """The baseline from ``{window: its steps' durations (ms)}`` (windows analysed with
        steps, in window order), None until enough windows are."""
        if len(step_ms) < self.baseline_windows:
            return None
        windows = tuple(sorted(step_ms)[:self.baseline_windows])
        pooled = np.concatenate([step_ms[w] for w in windows])
        median = float(np.median(pooled))
        mad = float(np.median(np.abs(pooled - median)))
        n = max(1, int(np.median([len(step_ms[w]) for w in windows])))
        noise = 3 * _MEDIAN_SE * mad / math.sqrt(n)
        band = max(self.min_pct / 100 * median, noise)
        return Baseline(windows, len(pooled), median, noise, band, n, mad, self.min_pct)

    def too_short(self, steps: int) -> str:
        """Why a window of ``steps`` steps is not judged, or ``""`` when it is."""
        if 2 * steps >= self.window_steps:
            return ""
        return (f"fewer than half of {self.window_steps} steps: not judged against the "
                f"baseline, nor part of it")

    def judge(self, medians: np.ndarray, windows: np.ndarray, base: Baseline | None,
              samples=None):
        """(``vs_baseline_pct``, ``regressed``) of windows with these median step times;
        ``samples``: each window's step count (0: not judged; None: all judged, with the
        baseline's step count)."""
        medians = np.asarray(medians, dtype=float)
        if base is None or not base.median_ms > 0:
            return np.full(len(medians), np.nan), np.zeros(len(medians), dtype=bool)
        samples = np.full(len(medians), base.window_steps) if samples is None \
            else np.asarray(samples)
        vs = (medians / base.median_ms - 1) * 100
        after = (np.asarray(windows) > max(base.windows)) & (samples > 0)
        regressed = after & (medians > base.median_ms + base.band_for(samples))
        return vs, regressed

    def describe(self, base: Baseline | None) -> str:
        """The rule in words, with its numbers once there is a baseline."""
        if base is None:
            return (f"Regressions: once {self.baseline_windows} windows are analysed, the "
                    f"median of their steps is the baseline; a later window is flagged when "
                    f"its median step time is above it by more than the noise band (the "
                    f"larger of {self.min_pct:g} % of the baseline and three times the noise "
                    f"of a window's median, from the baseline steps' spread and the "
                    f"window's step count); a window with fewer than half the steps asked "
                    f"is not judged.")
        first, last = base.windows[0], base.windows[-1]
        which = f"window {first}" if first == last else f"windows {first}-{last}"
        pct = 100 * base.band_ms / base.median_ms if base.median_ms else math.nan
        return (f"Regressions: the baseline is {base.median_ms:.3f} ms, the median of the "
                f"{base.steps} steps of {which}. A later window is flagged when its median "
                f"step time is above {base.threshold_ms:.3f} ms: the baseline plus the noise "
                f"band of {base.band_ms:.3f} ms ({pct:.1f} %), the larger of "
                f"{self.min_pct:g} % of the baseline and three times the noise of a "
                f"{base.window_steps}-step median from the baseline steps' spread "
                f"({base.noise_ms:.3f} ms); a window with fewer steps gets the wider band "
                f"of its own step count, one with fewer than half the steps asked is not "
                f"judged.")
