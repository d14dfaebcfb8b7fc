"""``tp.compare``: differences between two profiles, displayed as a comparison view."""

from __future__ import annotations

from dataclasses import fields

from .analysis.findings.comparison import COMPARED, Comparison
from .analysis.findings.comparison import compare as _compare

__all__ = ["compare", "DisplayedComparison", "step_change"]


class DisplayedComparison(Comparison):
    """A :class:`Comparison` that shows itself as the comparison view in a notebook."""

    def plot(self, theme: str = "light"):
        """Mean step time per category of both profiles side by side (a plotly figure)."""
        from .plot.compare_figures import compare_figure

        return compare_figure(self, theme)

    def plot_waterfall(self, top: int = 10, theme: str = "light"):
        """The median step time's change as a waterfall: the ops that add up to it and the
        unexplained rest (a plotly figure; ``waterfall(top)`` is its table)."""
        from .plot.compare_figures import waterfall_figure

        return waterfall_figure(self, top, theme)

    def show(self):
        """The comparison view (a widget); ``display(cmp)`` shows the same."""
        from .widgets.comparison_view import ComparisonView

        return ComparisonView(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from ._display import view_bundle

        return view_bundle(self.show, self.__repr__, include, exclude)

    def to_html(self, path, title: str | None = None):
        """Write the comparison view as one self-contained offline HTML page."""
        return self.show().to_html(path, title or "tfprof_nb comparison")

    def _ipython_display_(self):
        from ._display import display_view

        display_view(self.show, self.__repr__)


def step_change(a_steps, b_steps) -> dict:
    """The change of median step time from ``a_steps`` to ``b_steps`` (on a pod each step
    at its slowest host, as ``tp.check`` judges it): ``base``/``new`` medians (ms), ``pct``,
    the 95 % noise ``band`` (None with too few steps) and the ``verdict`` in words."""
    from .analysis.steps.per_step import host_count, per_step

    medians = [float(per_step(s).duration_ms.median()) if len(s) else None
               for s in (a_steps, b_steps)]
    band = noise_band(a_steps, b_steps)
    base, new = medians
    return {"base": base, "new": new,
            "pct": 100 * (new - base) / base if base and new is not None else None,
            "band": band,
            "verdict": verdict(base, new, len(a_steps), len(b_steps),
                               pod=max(host_count(a_steps), host_count(b_steps)) > 1)
            + band_words(band)}


def compare(a, b, labels=("a", "b")) -> DisplayedComparison:
    """Differences ``b - a`` between profiles: the median step time with its noise band
    (``.step_time``, the statistic ``tp.check`` and ``tfprof diff`` judge), the mean step
    per category, every op matched across recompiles with its change per step and band
    (``.ops``; the same statistic on its per-step times), what they explain of the step's
    change (``.explained``, ``.waterfall()``), kernels and the HLO diff (``.hlo``)."""
    from .checks.regression import shift_interval

    c = _compare({n: a.result(n) for n in COMPARED}, {n: b.result(n) for n in COMPARED},
                 labels, step_change(a.steps, b.steps), shift_interval)
    return DisplayedComparison(**{f.name: getattr(c, f.name) for f in fields(c)})


def noise_band(base_steps, new_steps) -> dict | None:
    """The 95 % noise band of the change of step time (``tp.check``'s: the Mann-Whitney
    interval of the ratio of new to base step times, a pod's steps at their slowest host),
    as ``{"low", "high"}`` in %; None when a side has too few steps."""
    from .checks.limit_measures import per_step
    from .checks.regression import step_regression

    try:
        r = step_regression(per_step(base_steps).duration_ms, per_step(new_steps).duration_ms,
                            0.0)
    except (ValueError, AttributeError):
        return None
    return {"low": r.low_pct, "high": r.high_pct}


def band_words(band: dict | None) -> str:
    """The verdict's second half: whether the change is beyond the noise of the steps."""
    if band is None:
        return ""
    where = "beyond" if band["low"] > 0 or band["high"] < 0 else "within"
    return (f"; noise band {band['low']:+.1f} % to {band['high']:+.1f} % (95 %, from both "
            f"runs' step times): {where} noise")


def verdict(base_ms, new_ms, base_steps: int = 1, new_steps: int = 1, pod: bool = False
            ) -> str:
    """One line on the median step time: "NEW is 12.3 % slower per step than BASE (median
    8.390 ms -> 9.420 ms)", faster, or as fast (within 0.05 %); ``pod``: a side has several
    hosts, whose steps are each at their slowest host's time (said)."""
    missing = [name for name, n in (("BASE", base_steps), ("NEW", new_steps)) if not n]
    if missing or not base_ms:
        return (f"no step time to compare: {' and '.join(missing) or 'BASE'} "
                f"{'have' if len(missing) > 1 else 'has'} no steps")
    pct = 100 * (new_ms - base_ms) / base_ms
    whose = ", each step its slowest host's time" if pod else ""
    medians = f"(median {base_ms:.3f} ms -> {new_ms:.3f} ms{whose})"
    if abs(pct) < 0.05:
        return f"NEW is as fast per step as BASE {medians}"
    return f"NEW is {abs(pct):.1f} % {'slower' if pct > 0 else 'faster'} per step than BASE " \
           f"{medians}"

