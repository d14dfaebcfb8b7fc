"""A monitor's windows, one row each: opened and stopped by the training thread, filled in by
the analysis thread; ``WindowLog.frame()`` is ``Monitor.history``.

A window's ``status`` goes ``profiling`` (its steps run), ``pending`` (saved, waiting for or
in its analysis), then ``analysed`` or ``failed`` (``error`` says why: a profiler that would
not start or save, a profile that could not be read); a window ``dropped`` never ran (its
``note`` says why: too many windows waited for their analysis).  ``note`` says why a
window has fewer steps than asked (training ended or raised inside it) or what its profile
lacks.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd

from ..constants import CATEGORY_COLUMNS
from .monitor_rule import Baseline, RegressionRule

__all__ = ["COLUMNS", "WindowLog", "error_text"]

_INT = ["window", "first_step", "last_step", "steps"]
_FLOAT = ["time_s", "wall_s", "median_step_ms", "vs_baseline_pct", *CATEGORY_COLUMNS,
          "input_pct", "duty_cycle_pct", "memory_peak_bytes", "top_op_pct"]
_TEXT = ["status", "top_op", "backend", "run", "note", "error"]
COLUMNS = ["window", "status", "first_step", "last_step", "steps", "time_s", "wall_s",
           "median_step_ms", "vs_baseline_pct", "regressed", *CATEGORY_COLUMNS, "input_pct",
           "duty_cycle_pct", "memory_peak_bytes", "top_op", "top_op_pct", "backend", "run",
           "note", "error"]


def error_text(error) -> str:
    """An error as one line: ``Type: message``."""
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}".strip().rstrip(":")
    return str(error)


def _floats(values: list) -> np.ndarray:
    """A float column's values as float64, None or anything not a number NaN (as
    ``pd.to_numeric(errors="coerce")``)."""
    try:
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    except (TypeError, ValueError):  # (a text value: none is)
        return pd.to_numeric(pd.Series(values, dtype=object), errors="coerce") \
            .to_numpy(dtype=np.float64)


def _text(value) -> str:
    """A text column's value: None or NaN as ``""``."""
    return "" if value is None or isinstance(value, float) and value != value else str(value)


class WindowLog:
    """The windows' rows (thread-safe); the regression rule judges them when read."""

    def __init__(self, rule: RegressionRule):
        self.rule = rule
        self._lock = threading.Lock()
        self._rows: list[dict] = []
        self._step_ms: dict[int, np.ndarray] = {}  # analysed windows with steps
        self._ended: dict[int, float] = {}  # when each window's analysis ended (perf_counter)

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)

    def open(self, first_step: int, time_s: float) -> int:
        """A new window, profiling from ``first_step``; its index."""
        with self._lock:
            index = len(self._rows)
            self._rows.append({"window": index, "status": "profiling", "first_step": first_step,
                               "last_step": first_step - 1, "steps": 0, "time_s": time_s,
                               "note": "", "error": ""})
            return index

    def dropped(self, first_step: int, time_s: float, reason: str) -> int:
        """A window due at ``first_step`` that was not profiled, and why; its index."""
        index = self.open(first_step, time_s)
        self.update(index, status="dropped", note=reason)
        return index

    def pending(self) -> list[int]:
        """The windows saved and not yet analysed."""
        with self._lock:
            return [r["window"] for r in self._rows if r["status"] == "pending"]

    def update(self, index: int, **values) -> None:
        """Set some of a window's values."""
        with self._lock:
            self._rows[index].update(values)

    def analysed(self, index: int, values: dict, step_ms: np.ndarray) -> None:
        """A window's analysis: its values, and its steps' durations for the rule (unless
        the window is too short to judge: the rule's ``too_short``)."""
        with self._lock:
            row = self._rows[index]
            short = self.rule.too_short(row["steps"])
            note = "; ".join(n for n in (row.get("note"), values.pop("note", ""), short) if n)
            row.update(values, status="analysed", note=note)
            self._ended[index] = time.perf_counter()
            if len(step_ms) and np.isfinite(values.get("median_step_ms", np.nan)) \
                    and not short:
                self._step_ms[index] = np.asarray(step_ms, dtype=float)

    def drop(self, index: int) -> None:
        """Remove the last window, ``index`` (it ended before its first step)."""
        with self._lock:
            if index == len(self._rows) - 1:
                self._rows.pop()

    def add_note(self, index: int, note: str) -> None:
        """Add ``note`` to window ``index``'s."""
        with self._lock:
            row = self._rows[index]
            row["note"] = "; ".join(n for n in (row.get("note"), note) if n)

    def failed_streak(self, n: int) -> str:
        """The error of the last ``n`` windows (dropped ones aside) when all failed with the
        same error, else ``""``."""
        with self._lock:
            last = [r for r in self._rows if r["status"] != "dropped"][-n:]
            errors = {r["error"] for r in last}
            if len(last) == n and all(r["status"] == "failed" for r in last) \
                    and len(errors) == 1:
                return errors.pop()
            return ""

    def fail(self, index: int, error) -> None:
        """A window that failed, and why."""
        self.update(index, status="failed", error=error_text(error))
        self._ended[index] = time.perf_counter()

    def ended_at(self, index: int) -> float | None:
        """When window ``index``'s analysis ended (or it failed; perf_counter), None
        before."""
        return self._ended.get(index)

    def row(self, index: int) -> dict:
        """A copy of window ``index``'s values."""
        with self._lock:
            return dict(self._rows[index])

    def statuses(self) -> list[str]:
        """Every window's status, in window order."""
        with self._lock:
            return [r["status"] for r in self._rows]

    def baseline(self) -> Baseline | None:
        """The regression rule's baseline, None until enough windows are analysed."""
        with self._lock:
            step_ms = dict(self._step_ms)
        return self.rule.baseline(step_ms)

    def frame(self) -> pd.DataFrame:
        """The history: one row per window (columns: ``COLUMNS``), judged by the rule."""
        with self._lock:
            rows = [dict(r) for r in self._rows]
        base = self.baseline()
        # (each column made whole from the rows: a frame of objects converted a column at a
        # time cost 10 ms of the training process's GIL at each refresh of a view)
        values = {c: [r.get(c) for r in rows] for c in COLUMNS}
        df = pd.DataFrame({**{c: np.array(values[c], dtype=np.int64) for c in _INT},
                           **{c: _floats(values[c]) for c in _FLOAT},
                           **{c: pd.array([_text(v) for v in values[c]], dtype=str)
                              for c in _TEXT}}, columns=COLUMNS)
        with self._lock:
            samples = np.array([len(self._step_ms.get(w, ())) for w in df["window"]], dtype=int)
        vs, regressed = self.rule.judge(df["median_step_ms"].to_numpy(), df["window"].to_numpy(),
                                        base, samples)
        df["vs_baseline_pct"] = vs
        df["regressed"] = regressed.astype(bool)
        return df
