"""The result of ``tp.check``: one row per limit given, shown as a text table in terminals,
an HTML table in notebooks (every string escaped: op, host and function names are the
profile's data), a DataFrame, a JSON-ready dict, or an exception."""

from __future__ import annotations

import html
import math
import textwrap
from dataclasses import asdict, dataclass, field

import pandas as pd

from ..errors import PerformanceCheckError
from ..plot.memory_figures import human_bytes

__all__ = ["CheckResult", "CheckRow", "format_value"]

_MARK = {"passed": "PASS", "failed": "FAIL", "unknown": "UNKNOWN"}
_COLOUR = {"passed": "#1a7f37", "failed": "#cf222e", "unknown": "#9a6700"}
TABLE_COLUMNS = ["limit", "what", "threshold", "value", "unit", "status", "passed", "evidence"]


def format_value(value, unit: str, signed: bool = False, extra: int = 0) -> str:
    """A measured value or threshold with its unit, for people ("unknown" when None);
    ``extra`` digits more than usual (to tell a value from a threshold close to it)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    if unit == "bytes":
        return human_bytes(float(value)) if not extra else f"{value:,.0f} bytes"
    if unit == "%":
        return f"{value:{'+' if signed else ''}.{1 + extra}f}%"
    return f"{value:.{4 + extra}g} {unit}"


@dataclass(frozen=True)
class CheckRow:
    """One limit: its keyword (``limit``), what it measures in words, the threshold, the
    measured value (None when unknown), its unit, the status ("passed", "failed" or
    "unknown"), the evidence in words, and ``details`` (numbers behind the evidence)."""

    limit: str
    what: str
    bound: str  # "max" (the value must not exceed the threshold) or "min"
    threshold: float
    value: float | None
    unit: str
    status: str
    evidence: str
    details: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def _fmt(self, value) -> str:
        """``value`` with the unit, with as many digits as tell the value from the threshold
        (30.04% against 30%: "30.04%", not "30.0%")."""
        signed = self.limit == "max_regression_pct"
        for extra in range(4):
            if self.value is None or self.value == self.threshold or \
                    format_value(self.value, self.unit, signed, extra) != \
                    format_value(self.threshold, self.unit, signed, extra):
                break
        return format_value(value, self.unit, signed, extra)

    def measured(self) -> str:
        """The measured value in words; a regression's with its noise band ("+13.3% (noise
        band -1.2% to +29.0%)"), which the limit is judged against."""
        text = self._fmt(self.value)
        low, high = self.details.get("band_low_pct"), self.details.get("band_high_pct")
        if self.limit == "max_regression_pct" and low is not None and high is not None:
            text += f" (noise band {low:+.1f}% to {high:+.1f}%)"
        return text

    def rule(self) -> str:
        """The limit in words: "<= 10 ms", ">= 50.0%"; a regression's "<= +5.0% beyond
        noise" (its band's lower end; a speed-up's, its upper end)."""
        text = ("<= " if self.bound == "max" else ">= ") + self._fmt(self.threshold)
        return text + " beyond noise" if self.limit == "max_regression_pct" else text

    def sentence(self) -> str:
        """One line: what, measured value against the threshold, and the limit's keyword."""
        if self.status == "unknown":
            return f"{self.what}: unknown ({self.limit}, {self.rule()}): {self.evidence}"
        broke = {"max": ">", "min": "<"}[self.bound] if self.status == "failed" else \
            self.rule()[:2]
        noise = " beyond noise" if self.limit == "max_regression_pct" else ""
        return (f"{self.what} {self.measured()} {broke} {self._fmt(self.threshold)}{noise} "
                f"({self.limit}): {self.evidence}")

    def to_dict(self) -> dict:
        out = asdict(self)
        out["passed"] = self.passed
        return _json_safe(out)


def _json_safe(value):
    """NaN and infinities as None, numpy scalars as Python numbers, recursively."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class CheckResult:
    """The limits of one ``tp.check`` call and how the profile fared against each.

    ``ok``: every limit passed (a limit whose measure the profile lacks is "unknown" and
    counts as a failure unless the check was made with ``allow_missing=True``);
    ``failures``: the rows that make it not ok; ``table``: one row per limit (DataFrame);
    ``to_dict()``: the same for JSON; ``assert_ok()`` raises
    :class:`~tfprof_nb.errors.PerformanceCheckError` when not ok.
    """

    def __init__(self, rows: list[CheckRow], allow_missing: bool, profile: str,
                 baseline: str | None = None):
        self.rows = list(rows)
        self.allow_missing = bool(allow_missing)
        self.profile, self.baseline = profile, baseline

    @property
    def failures(self) -> list[CheckRow]:
        """The failed limits, and the unknown ones unless ``allow_missing``."""
        return [r for r in self.rows if r.status == "failed"
                or (r.status == "unknown" and not self.allow_missing)]

    @property
    def unknown(self) -> list[CheckRow]:
        """The limits whose measure the profile lacks (their evidence says why)."""
        return [r for r in self.rows if r.status == "unknown"]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def table(self) -> pd.DataFrame:
        """One row per limit: limit, what, threshold, value (NaN: unknown), unit, status,
        passed, evidence."""
        return pd.DataFrame([{**{k: getattr(r, k) for k in TABLE_COLUMNS},
                              "value": float("nan") if r.value is None else r.value}
                             for r in self.rows], columns=TABLE_COLUMNS)

    def verdict(self) -> str:
        """"OK" or "FAILED", with the counts in words."""
        counts = {s: sum(r.status == s for r in self.rows) for s in _MARK}
        parts = [f"{counts[s]} {s}" for s in _MARK if counts[s]]
        return f"{'OK' if self.ok else 'FAILED'} ({', '.join(parts)} of {len(self.rows)} " \
               f"limit{'s' * (len(self.rows) != 1)}" + \
               ("; unknown allowed" if self.allow_missing and counts["unknown"] else
                "; a limit the profile cannot measure fails without allow_missing (--allow-missing)"
                if counts["unknown"] and not counts["failed"] else "") + ")"

    def to_dict(self) -> dict:
        """The result as JSON-ready values: ok, the counts, and one dict per limit."""
        return _json_safe({
            "ok": self.ok, "allow_missing": self.allow_missing, "profile": self.profile,
            "baseline": self.baseline, "passed": sum(r.passed for r in self.rows),
            "failed": sum(r.status == "failed" for r in self.rows),
            "unknown": len(self.unknown), "checks": [r.to_dict() for r in self.rows]})

    def message(self) -> str:
        """The failures, one line each with their numbers (the exception's message)."""
        head = f"performance check {self.verdict()} on {self.profile}"
        return "\n".join([head] + [f"  {r.sentence()}" for r in self.failures])

    def assert_ok(self) -> "CheckResult":
        """Raise :class:`PerformanceCheckError` (this result as ``.result``) unless ok;
        returns the result when ok."""
        if not self.ok:
            raise PerformanceCheckError(self.message(), self)
        return self

    def __repr__(self) -> str:
        header = f"Performance checks on {self.profile}"
        if self.baseline is not None:
            header += f" (baseline {self.baseline})"
        lines = [f"{header}: {self.verdict()}"]
        width = max((len(r.what) for r in self.rows), default=0)
        for r in self.rows:
            lines.append(f"  {_MARK[r.status]:<8} {r.what:<{width}}  {r.measured():>11}  "
                         f"{r.rule()}  [{r.limit}]")
            lines.extend(textwrap.wrap(r.evidence, 96, initial_indent=" " * 11,
                                       subsequent_indent=" " * 11))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        cells = "".join(
            f"<tr><td style='color:{_COLOUR[r.status]};font-weight:bold'>{_MARK[r.status]}"
            f"</td><td>{esc(r.what)}<br><code>{esc(r.limit)}</code></td>"
            f"<td style='text-align:right'>{esc(r.measured())}</td><td>{esc(r.rule())}</td>"
            f"<td style='text-align:left'>{esc(r.evidence)}</td></tr>" for r in self.rows)
        colour = _COLOUR["passed" if self.ok else "failed"]
        base = f" (baseline {esc(self.baseline)})" if self.baseline is not None else ""
        return (f"<div class='tfprof-check'><p><strong style='color:{colour}'>Performance "
                f"checks: {esc(self.verdict())}</strong> on {esc(self.profile)}{base}</p>"
                "<table><thead><tr><th>status</th><th>limit</th><th>measured</th>"
                "<th>threshold</th><th style='text-align:left'>evidence</th></tr></thead>"
                f"<tbody>{cells}</tbody></table></div>")
