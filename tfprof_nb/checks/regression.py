"""A step-time regression judged on the per-step distributions, not on one mean.

The rule: each profile's median step time gets a distribution-free 95 % confidence interval
from its own steps' order statistics (the interval ``[x(l), x(n+1-l)]`` of the sorted step
times, with the largest ``l`` whose binomial coverage ``1 - 2 P(Binomial(n, 1/2) <= l - 1)``
is at least 95 %; it needs at least :data:`MIN_STEPS` steps).  The change of the median,
``100 (new - base) / base``, then lies between

* ``low_pct``:  the fastest plausible new median against the slowest plausible base median,
  ``100 (lo_new - hi_base) / base``, and
* ``high_pct``: the slowest plausible new median against the fastest plausible base median,

the noise band.  A regression is reported only when even ``low_pct`` exceeds the limit: the
new run is slower than the limit allows by more than its and the baseline's step spread can
explain.  Two runs of one program whose steps are independent draws fail a limit of 0 % at most
5 % of the time (the new interval must miss its median from above or the base interval its
median from below, 2.5 % each), far less under a positive limit; a slowdown fails as soon as
the step spread lets it show.  Few or very spread steps widen the band: the evidence says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["CONFIDENCE", "MIN_STEPS", "MedianInterval", "Regression", "median_interval",
           "step_regression"]

CONFIDENCE = 0.95  # of each median's interval
MIN_STEPS = 6  # the fewest steps whose widest interval [min, max] covers the median at 95 %


@dataclass(frozen=True)
class MedianInterval:
    """A sample's median and the order-statistics interval around it (ms)."""

    median: float
    low: float
    high: float
    steps: int
    coverage: float  # the probability that [low, high] holds the true median


@dataclass(frozen=True)
class Regression:
    """The change of median step time from ``base`` to ``new`` and its noise band (%)."""

    base: MedianInterval
    new: MedianInterval
    change_pct: float  # 100 (new median - base median) / base median
    low_pct: float  # the smallest change the two intervals allow
    high_pct: float  # the largest
    max_pct: float  # the limit
    regressed: bool  # low_pct > max_pct: slower than the limit beyond the noise band


def _coverage(n: int, rank: int) -> float:
    """The probability that ``[x(rank), x(n+1-rank)]`` of ``n`` sorted draws holds their
    distribution's median: ``1 - 2 P(Binomial(n, 1/2) <= rank - 1)``."""
    k = np.arange(1, rank, dtype=float)  # log C(n, k) = sum over i <= k of log((n-i+1)/i)
    log_comb = np.concatenate([[0.0], np.cumsum(np.log(n - k + 1) - np.log(k))])
    return max(0.0, 1.0 - 2.0 * float(np.exp(log_comb - n * math.log(2.0)).sum()))


def _rank(n: int, confidence: float) -> int:
    """The largest rank ``l`` (1-based) whose interval covers the median with ``confidence``
    (1 when even ``[min, max]`` does not)."""
    lo, hi = 1, max(1, (n + 1) // 2)
    while lo < hi:  # coverage falls as the rank rises: bisect for the last rank that holds
        mid = (lo + hi + 1) // 2
        if _coverage(n, mid) >= confidence:
            lo = mid
        else:
            hi = mid - 1
    return lo


def median_interval(step_ms, confidence: float = CONFIDENCE) -> MedianInterval:
    """The median of ``step_ms`` and its distribution-free ``confidence`` interval from the
    order statistics (see the module doc); NaN steps are left out."""
    x = np.sort(np.asarray(step_ms, dtype=float))
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        raise ValueError("no step times to take a median of")
    rank = _rank(n, confidence)
    return MedianInterval(float(np.median(x)), float(x[rank - 1]), float(x[n - rank]), n,
                          _coverage(n, rank))


def step_regression(base_ms, new_ms, max_pct: float,
                    confidence: float = CONFIDENCE) -> Regression:
    """Whether the steps ``new_ms`` are slower than ``base_ms`` by more than ``max_pct`` %
    beyond the noise band of their medians (see the module doc).  Raises ValueError when
    either has fewer than :data:`MIN_STEPS` steps or a median that is not positive."""
    base, new = median_interval(base_ms, confidence), median_interval(new_ms, confidence)
    for which, m in (("baseline", base), ("profile", new)):
        if m.steps < MIN_STEPS:
            raise ValueError(f"the {which} has {m.steps} step{'s' * (m.steps != 1)}: at "
                             f"least {MIN_STEPS} are needed to tell a change from noise")
        if not m.median > 0:
            raise ValueError(f"the {which}'s median step time is {m.median} ms")
    low = 100 * (new.low - base.high) / base.median
    high = 100 * (new.high - base.low) / base.median
    change = 100 * (new.median - base.median) / base.median
    return Regression(base, new, change, low, high, float(max_pct), bool(low > max_pct))
