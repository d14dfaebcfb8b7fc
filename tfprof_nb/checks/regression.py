"""A step-time regression judged on the per-step distributions, not on one mean.

The change reported is that of the median step time, ``100 (new / base - 1)``.  Its noise
band is the distribution-free 95 % confidence interval of the ratio of new to baseline step
times (Hodges-Lehmann, inverted from the Mann-Whitney test): on the logarithms of the step
times, every difference ``log new_j - log base_i`` is formed and the interval runs from the
``(c+1)``-th smallest to the ``(c+1)``-th largest, ``c`` the largest Mann-Whitney count with
``P(U <= c) <= 2.5 %`` (its exact null distribution below 100 steps in all, the normal
approximation above; profiles of more than :data:`MAX_STEPS` steps are thinned to that many
evenly spaced order statistics first, which only widens the band).  Each side needs at least
:data:`MIN_STEPS` steps.

A negative limit asks for a speed-up: it passes only when even the band's upper end,
``high_pct``, is at or below it (the new run is faster by at least that much beyond noise).

A regression is reported only when even the band's lower end, ``low_pct``, exceeds the limit:
the new run is slower than the limit allows by more than the step spread of the two runs can
explain.  Two runs of one program whose steps are independent draws from one distribution fail
a limit of 0 % at most 2.5 % of the time, far less under a positive limit; a slowdown beyond the
limit fails as soon as enough steps narrow the band.  Steps that drift (warm-up, a slow shard)
widen it: the evidence says how wide it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["CONFIDENCE", "MAX_STEPS", "MIN_STEPS", "Regression", "ratio_interval",
           "shift_interval", "step_regression"]

CONFIDENCE = 0.95  # of the band (two-sided)
MIN_STEPS = 5  # per side: the fewest for which a 95 % interval exists with 5 steps or more
MAX_STEPS = 1000  # per side: more are thinned to this many order statistics
_EXACT_STEPS = 100  # the exact null distribution of U up to this many steps in all


@dataclass(frozen=True)
class Regression:
    """The change of median step time from ``base`` to ``new`` and its noise band (%)."""

    base_median_ms: float
    new_median_ms: float
    base_steps: int
    new_steps: int
    change_pct: float  # 100 (new median / base median - 1)
    low_pct: float  # the band: the ratio of step times' 95 % interval, as a change in %
    high_pct: float
    max_pct: float  # the limit
    regressed: bool  # low_pct > max_pct: slower than the limit beyond the noise band (a
    # negative limit, a speed-up asked for: high_pct > max_pct, not faster beyond noise)


def _u_counts(n: int, m: int) -> np.ndarray:
    """How many of the ``C(n+m, n)`` rankings give each Mann-Whitney count ``U = 0..nm``: the
    coefficients of the Gaussian binomial ``prod_i (1 - q^(m+i)) / (1 - q^i)``, exact
    integers."""
    n, m = min(n, m), max(n, m)
    p = np.zeros(n * m + 1, dtype=object)
    p[:] = 0
    p[0] = 1
    for i in range(1, n + 1):
        if m + i <= n * m:
            p[m + i:] = p[m + i:] - p[:-(m + i)]  # times (1 - q^(m+i)), as a power series
        for r in range(i):  # divided by (1 - q^i): a running sum with stride i
            p[r::i] = np.cumsum(p[r::i])
    return p


def _critical(n: int, m: int, confidence: float) -> int:
    """The largest ``c`` with ``P(U <= c) <= (1 - confidence) / 2`` under no change; -1 when
    even ``P(U = 0)`` is larger (too few steps)."""
    tail = (1 - confidence) / 2
    if n + m <= _EXACT_STEPS:
        counts = _u_counts(n, m)
        cdf = np.cumsum(counts) / math.comb(n + m, n)
        return int(np.searchsorted(cdf.astype(float), tail, side="right")) - 1
    z = math.sqrt(2) * _erfinv(1 - 2 * tail)
    return int(math.floor(n * m / 2 - z * math.sqrt(n * m * (n + m + 1) / 12) - 0.5))


def _erfinv(y: float) -> float:
    """The inverse error function by Newton's method (the normal quantile, without SciPy)."""
    x = 0.0
    for _ in range(60):
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) < 1e-15:
            break
    return x


def _thinned(x: np.ndarray) -> np.ndarray:
    """``x`` sorted, thinned to at most :data:`MAX_STEPS` evenly spaced order statistics."""
    x = np.sort(x)
    if len(x) <= MAX_STEPS:
        return x
    return x[np.round(np.linspace(0, len(x) - 1, MAX_STEPS)).astype(int)]


def ratio_interval(base_ms, new_ms, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The ``confidence`` interval of the ratio of ``new_ms`` to ``base_ms`` step times
    (Hodges-Lehmann on their logarithms; see the module doc).  Raises ValueError when a side
    has fewer than :data:`MIN_STEPS` positive steps."""
    a, b = (_positive(x, which) for x, which in ((base_ms, "baseline"), (new_ms, "profile")))
    lo, hi = _shift(np.log(_thinned(a)), np.log(_thinned(b)), confidence)
    return float(np.exp(lo)), float(np.exp(hi))


def shift_interval(base, new, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The ``confidence`` interval of the shift from ``base`` to ``new`` per-step values
    (Hodges-Lehmann on the differences ``new_j - base_i``: the interval :func:`ratio_interval`
    forms on logarithms, here on the values, which may be zero: an op's time in a step it
    skipped).  Raises ValueError when a side has fewer than :data:`MIN_STEPS` values."""
    a, b = (np.asarray(x, dtype=float) for x in (base, new))
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if min(len(a), len(b)) < MIN_STEPS:
        raise ValueError(f"{len(a)} and {len(b)} steps: at least {MIN_STEPS} a side are "
                         "needed to tell a change from noise")
    return _shift(_thinned(a), _thinned(b), confidence)


def _shift(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    """The Hodges-Lehmann interval of the shift from sorted ``a`` to sorted ``b``."""
    c = _critical(len(a), len(b), confidence)
    if c < 0:
        raise ValueError(f"{len(a)} and {len(b)} steps are too few for a "
                         f"{100 * confidence:g}% interval")
    d = (b[None, :] - a[:, None]).ravel()
    k = len(d) - 1 - c
    lo, hi = np.partition(d, [c, k])[[c, k]]
    return float(lo), float(hi)


def _positive(step_ms, which: str) -> np.ndarray:
    """The step times (NaN left out), checked: enough of them, all positive."""
    x = np.asarray(step_ms, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < MIN_STEPS:
        raise ValueError(f"the {which} has {len(x)} step{'s' * (len(x) != 1)}: at least "
                         f"{MIN_STEPS} are needed to tell a change from noise")
    if (x <= 0).any():
        raise ValueError(f"the {which} has steps of no duration")
    return x


def step_regression(base_ms, new_ms, max_pct: float,
                    confidence: float = CONFIDENCE) -> Regression:
    """Whether the steps ``new_ms`` are slower than ``base_ms`` by more than ``max_pct`` %
    beyond the noise band (see the module doc).  Raises ValueError when either side has
    fewer than :data:`MIN_STEPS` steps or a step of no duration."""
    lo, hi = ratio_interval(base_ms, new_ms, confidence)
    a, b = _positive(base_ms, "baseline"), _positive(new_ms, "profile")
    ma, mb = float(np.median(a)), float(np.median(b))
    low, high = 100 * (lo - 1), 100 * (hi - 1)
    return Regression(ma, mb, len(a), len(b), 100 * (mb / ma - 1), low, high,
                      float(max_pct), bool(low > max_pct if max_pct >= 0 else high > max_pct))
