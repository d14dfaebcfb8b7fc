"""What the step timer flags in a run's steps: spikes, the period they recur at, compiles.

* ``spike``: a step longer than ``SPIKE_RATIO`` times the median of the ``ROLLING_STEPS``
  steps around it and above that median by more than ``SPIKE_MADS`` times their median
  absolute deviation (the step's neighbours' own noise).
* ``periodic(P)``: a spike on the run's period: spikes at steps ``phase + k * P``.  The period
  is the step interval (among the most frequent between the largest spikes, from each to the
  next few and between any two, and their halves and thirds) whose steps of one phase (step
  mod P) hold the most spikes less the steps of that phase without one (so that neither
  half nor twice the period wins), with at least ``MIN_HITS`` spikes, at least ``MIN_SHARE``
  of the steps of that phase from its first spike on, and so many that spikes at the run's
  rate at random would give as many on some phase of the intervals tried with a chance
  under ``CHANCE`` (a checkpoint or an evaluation every P steps; a busy machine's random
  spikes find none).  Steps that compiled, the windows' steps (profiled) and those where
  the profiler started or stopped are left out of the period's search (spikes and steps
  alike): they are not the run's own rhythm.
* ``compile``: the run's first step, when the compile clock moved during it
  (``monitor_compiles``: JAX tracing or compiling, TensorFlow tracing a ``tf.function``);
  ``recompile``: any later step during which it moved (a new shape, a retrace, a function
  first called mid-run such as an evaluation's).
* ``profiler``: a step during which a window's profiler session started or stopped (the
  monitor's own cost, inside that step's time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["CHANCE", "MIN_HITS", "MIN_SHARE", "ROLLING_STEPS", "SPIKE_MADS", "SPIKE_RATIO",
           "Period", "find_period", "spike_mask", "step_flags"]

ROLLING_STEPS = 51  # the neighbourhood a step is compared with (centred)
SPIKE_RATIO = 3.0  # a spike is over 3x its neighbours' median...
SPIKE_MADS = 8.0  # ...and above it by over 8 of their median absolute deviations
MIN_HITS = 3  # spikes on one phase before a period is said
MIN_SHARE = 0.7  # of that phase's steps since its first spike that spiked
CHANCE = 0.01  # at most this likely from spikes at random, over every interval and phase tried
_TOP_SPIKES = 64  # the intervals tried as periods are those between the largest spikes:
_NEXT = 5  # the 8 most frequent from each to the next 4 (a period among other spikes) and
_CANDIDATES = 8  # the 8 most frequent between any two (a period among many random spikes)


@dataclass(frozen=True)
class Period:
    """Spikes every ``period`` steps, at steps ``phase`` mod ``period``: ``hits`` of the
    ``expected`` steps of that phase since the first one spiked."""

    period: int
    phase: int
    hits: int
    expected: int

    def next_at(self, step: int) -> int:
        """The first step from ``step`` on where a spike is expected."""
        return step + (self.phase - step) % self.period

    def describe(self) -> str:
        return (f"spikes every {self.period} steps (steps {self.phase} mod {self.period}: "
                f"{self.hits} of {self.expected})")


def spike_mask(duration_ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which steps are spikes (the module's rule), and each step's ratio to its neighbours'
    median."""
    d = pd.Series(np.asarray(duration_ms, dtype=float))
    median = d.rolling(ROLLING_STEPS, center=True, min_periods=5).median()
    mad = (d - median).abs().rolling(ROLLING_STEPS, center=True, min_periods=5).median()
    ratio = (d / median).to_numpy()
    return ((d > SPIKE_RATIO * median) & (d - median > SPIKE_MADS * mad)).to_numpy(), ratio


def _candidates(s: np.ndarray, weight: np.ndarray) -> list[int]:
    """Intervals tried as periods: the most frequent ones between the largest spikes (a
    busy machine's many small spikes would hide a checkpoint's interval among them)."""
    top = np.unique(s[np.argsort(-weight, kind="stable")[:_TOP_SPIKES]])
    near = np.concatenate([top[j:] - top[:-j] for j in range(1, min(_NEXT, len(top)))])
    tried = set()
    for lags in (near, (top[None, :] - top[:, None]).ravel()):
        values, counts = np.unique(lags[lags >= 2], return_counts=True)
        tried.update(int(v) for v in values[np.argsort(-counts, kind="stable")][:_CANDIDATES])
    # and their halves and thirds: spikes every P steps where windows caught every other one
    tried.update(p // d for p in list(tried) for d in (2, 3) if p % d == 0 and p // d >= 2)
    return sorted(tried)


def find_period(spikes: np.ndarray, eligible: np.ndarray, weight=None) -> Period | None:
    """The period of ``spikes`` (step numbers; ``weight``: how large each is, to pick the
    intervals tried) among the ``eligible`` steps (those searched, in order), or None (the
    module's rule)."""
    s = np.asarray(spikes, dtype=np.int64)
    eligible = np.asarray(eligible, dtype=np.int64)
    weight = np.ones(len(s)) if weight is None else np.asarray(weight, dtype=float)
    if len(np.unique(s)) < MIN_HITS:
        return None
    rate = len(s) / max(1, len(eligible))
    best = None
    for p in _candidates(s, weight):
        phases, n = np.unique(s % p, return_counts=True)
        k = int(np.argmax(n))
        phase, hits = int(phases[k]), int(n[k])
        first = int(s[s % p == phase].min())
        expected = int(np.count_nonzero((eligible >= first) & (eligible % p == phase)))
        if hits >= MIN_HITS and hits >= MIN_SHARE * expected and \
                (best is None or 2 * hits - expected > 2 * best.hits - best.expected) and \
                _chance(hits, expected, rate) * p * 6 * _CANDIDATES < CHANCE:
            best = Period(p, phase, hits, expected)
    return best


def _chance(hits: int, expected: int, rate: float) -> float:
    """The chance that ``hits`` or more of ``expected`` steps spike when steps spike at
    random at ``rate`` (the binomial tail)."""
    rate = min(max(rate, 1e-9), 1.0)
    return sum(math.comb(expected, k) * rate ** k * (1 - rate) ** (expected - k)
               for k in range(hits, expected + 1))


def step_flags(steps: np.ndarray, duration_ms: np.ndarray, compile_ms: np.ndarray,
               profiler: np.ndarray, in_window=None) -> tuple[np.ndarray, Period | None]:
    """Each step's flags (comma-separated, ``""`` for none) and the run's spike period
    (searched outside the windows: ``in_window``)."""
    steps = np.asarray(steps, dtype=np.int64)
    spike, ratio = spike_mask(duration_ms) if len(steps) else (np.zeros(0, bool), ())
    compiled = np.asarray(compile_ms, dtype=float) > 0
    profiler = np.asarray(profiler, dtype=bool)
    eligible = ~compiled & ~profiler
    if in_window is not None:
        eligible &= ~np.asarray(in_window, dtype=bool)
    own = spike & eligible
    period = find_period(steps[own], steps[eligible], np.asarray(ratio)[own])
    periodic = spike & (steps % period.period == period.phase) if period else \
        np.zeros(len(steps), dtype=bool)
    tokens = [np.where(spike, "spike,", ""),
              np.where(periodic, f"periodic({period.period})," if period else "", ""),
              np.where(compiled, "recompile,", ""), np.where(profiler, "profiler,", "")]
    if len(steps) and compiled[0]:
        tokens[2][0] = "compile,"
    flags = np.char.rstrip(np.char.add(np.char.add(tokens[0], tokens[1]),
                                       np.char.add(tokens[2], tokens[3])), ",")
    return flags.astype(object), period
