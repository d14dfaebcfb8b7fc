"""The monitor's cost budget (``monitor_budget``) on a real jitted JAX loop (CPU): with the
default spacing a window waits until the last one's measured cost is within 2 % of the run,
and says so in its row; a spacing given is kept as given."""

from __future__ import annotations

import re
import time

import pytest

import tfprof_nb as tp
from tfprof_nb.capturing.monitor_budget import DEFAULT_OVERHEAD_PCT, MAX_STRETCH, check_overhead

from .test_monitor import jax_step  # noqa: F401 (fixture)

_NOTE = re.compile(r"opened ([\d.]+)x the schedule's spacing after window 0"
                   r"(?: \(the most it waits\))?: a window costs ([\d,.]+) ms of training "
                   r"\(window 0's, as measured\), ([\d.]+)% of the ([\d,.]+) s from window "
                   r"0's opening to this one's step on the schedule, and windows are spaced to "
                   r"cost at most 2% \(max_overhead_pct\)"
                   r"(; it waited for that measure: no window's analysis had ended when it was "
                   r"due)?")


def _two_windows(mon, step, deadline_s: float = 120.0):
    """Train until the monitor's two windows have opened (or the deadline)."""
    end = time.monotonic() + deadline_s
    for _ in mon.iterate(range(10**7)):
        step()
        counts = mon.counts  # (cheap at every step; the history is a DataFrame)
        if sum(counts.values()) >= 2 and not counts["profiling"] or time.monotonic() > end:
            break
    mon.wait()
    return mon.history


def _lost_s(mon, opened: int, ended: int, upto: int) -> float:
    """A window's cost recomputed from the step table (one row a step here): the time rows
    ``opened`` to ``ended`` took beyond the pace of the rows from ``ended`` to ``upto``, less
    their compiling."""
    times = mon.step_times
    start = times.start_s.to_numpy()
    pace = (start[upto - 1] - start[ended]) / (upto - 1 - ended)
    return start[ended] - start[opened] - (ended - opened) * pace \
        - times.compile_ms.iloc[opened:ended].sum() / 1e3


def test_windows_wait_for_the_budget_at_the_default_spacing(jax_step):
    """Steps of about a millisecond: a window (its traced steps, its save, its analysis
    beside training) costs more than 2 % of the 500 steps after it, or its cost is not known
    when the next is due (the worker's first analysis): the second window opens later than
    step 503 and its row says why, by the rule; the cost is the step table's."""
    mon = tp.Monitor(max_windows=2, backend="jax")
    assert mon.max_overhead_pct == DEFAULT_OVERHEAD_PCT
    assert "further apart where windows would cost training more than 2%" in repr(mon)

    def step():
        jax_step()
        time.sleep(0.001)
    hist = _two_windows(mon, step)
    assert list(hist.status) == ["analysed", "analysed"], hist[["status", "error"]]
    first, second = hist.iloc[0], hist.iloc[1]
    assert first.first_step == 3 and first.note == ""
    budget, t0 = mon._driver.budget, mon._driver.t0
    ended_s = mon._log.ended_at(0) - t0  # (as the history's times: from the first step)
    budget._measure(mon._timer, mon._log.ended_at)  # (its cost, measured once known)
    (cost,) = budget.costs
    ((window, opened, ended, upto, lost),) = budget.measured
    assert (window, lost) == (0, cost) and upto - ended >= 50
    # rows: the steps' (one a row); the first window's session started the step before it
    assert opened == first.first_step - 1 and mon.step_times.step.iloc[opened] == opened
    assert mon.step_times.start_s.iloc[ended] >= ended_s > mon.step_times.start_s.iloc[ended - 1]
    assert cost == pytest.approx(_lost_s(mon, opened, ended, upto), abs=1e-6)
    if not second.note:  # within the budget: on the schedule
        assert second.first_step == first.first_step + 500
        assert cost <= DEFAULT_OVERHEAD_PCT / 100 * (second.time_s - first.time_s) * 1.02
        return
    assert second.first_step > first.first_step + 500
    if "cost was measured yet" in second.note:  # its analysis ended after the wait
        assert re.match(r"opened [78]\.\dx the schedule's spacing after window 0 \(the most "
                        r"it waits\): no window's cost was measured yet", second.note), \
            second.note
        assert ended_s > second.time_s
        return
    said = _NOTE.search(second.note)
    assert said, second.note
    stretch, cost_ms, pct, elapsed_s = (float(g.replace(",", "")) for g in said.groups()[:4])
    assert cost_ms == pytest.approx(max(cost, 0) * 1e3, abs=0.06)
    # (each figure as printed, rounded: elapsed to 10 ms, so over a short spacing the
    # share recomputed from them is good to a few percent of itself)
    assert pct == pytest.approx(100 * cost_ms / 1e3 / elapsed_s, rel=0.05, abs=0.06)
    needs = min(pct / DEFAULT_OVERHEAD_PCT, MAX_STRETCH)  # (the wait its cost asks)
    if said.group(5):  # the cost came after that: it opened once measured
        assert stretch > needs and ended_s < second.time_s
    else:
        assert pct > DEFAULT_OVERHEAD_PCT and stretch == pytest.approx(needs, abs=0.1)
    # the window opened no sooner than the wait said (its figures as printed: rounded)
    assert second.time_s - first.time_s >= (stretch - 0.05) * (elapsed_s - 0.005)


def test_a_spacing_given_is_kept(jax_step):
    """every_steps given: no budget unless asked, the second window at step 503 exactly."""
    mon = tp.Monitor(every_steps=500, max_windows=2, backend="jax")
    assert mon.max_overhead_pct is None
    hist = _two_windows(mon, jax_step)
    assert list(hist.first_step) == [3, 503] and (hist.note == "").all()
    assert tp.Monitor(every_steps=500, max_overhead_pct=5).max_overhead_pct == 5.0


def test_the_budget_is_a_share_of_the_run():
    assert check_overhead(None, schedule_given=False) == DEFAULT_OVERHEAD_PCT
    assert check_overhead(None, schedule_given=True) is None
    assert check_overhead(0.5, schedule_given=True) == 0.5
    for bad in (0, 100, -1, True, "2"):
        with pytest.raises(ValueError, match="max_overhead_pct"):
            tp.Monitor(max_overhead_pct=bad)
