"""A monitor's cost budget: with the default schedule a window opens no sooner than keeps the
training time the windows cost under ``max_overhead_pct`` of the run (2 %).

A window costs training time in its traced steps, while its session stops and saves (a thread
of the training process) and while a worker process analyses it (beside training, on the
same cores): all of it shows only as training steps running slower.  So a window's cost is
measured on the step timer once its analysis has ended: the time the steps from its opening to
that end took, less as many steps at the pace of the (at least 50) steps run after it, less
their compiling (training's own cost).  One window's figure carries the noise of a shared
machine's step times, so the budget uses the mean of the last ``MEAN_OF`` windows' costs (the
first windows', when it has no more).

When a window is due on the schedule, the next waits until that cost is at most the budget's
share of the time since the last window opened (a window due while the last one's cost is
not known yet waits for it), and never longer than ``MAX_STRETCH`` times the schedule's
spacing: a run's own slow steps (an evaluation, a checkpoint) landing in a window's stretch
count as its cost, and the stretch bounds what they delay.  The row of a window that waited
says why.  The measure needs the step timer: without it (``step_timer=False``) there is no
budget.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = ["DEFAULT_OVERHEAD_PCT", "MAX_STRETCH", "MEAN_OF", "Budget", "check_overhead"]

DEFAULT_OVERHEAD_PCT = 2.0
MAX_STRETCH = 8  # a window waits at most this many times the schedule's spacing
MEAN_OF = 5  # the windows whose mean cost the budget uses
_RECHECK_S = 0.01  # while a cost is unknown, how often a due window looks again


def check_overhead(max_overhead_pct, schedule_given: bool) -> float | None:
    """The budget (a share of the run, %) or None (no budget): ``max_overhead_pct`` when given,
    else DEFAULT_OVERHEAD_PCT with the default schedule and None with one given (a window
    every K steps or T seconds, as asked)."""
    if max_overhead_pct is None:
        return None if schedule_given else DEFAULT_OVERHEAD_PCT
    if isinstance(max_overhead_pct, bool) or not isinstance(max_overhead_pct, (int, float)) \
            or not 0 < max_overhead_pct < 100:
        raise ValueError("max_overhead_pct must be a share of the run in (0, 100) %, got "
                         f"{max_overhead_pct!r}")
    return float(max_overhead_pct)


@dataclass
class _Opened:
    index: int  # its row in the log
    time: float  # when its session started (perf_counter)
    row: int  # the step timer's row of the step it started in


class Budget:
    """When the next window may open under the budget (see the module's docstring).  The
    driver calls ``opened`` for each window that opens and ``allows`` while one is due;
    ``take_note`` gives the row note of the window opening (why it waited, or "")."""

    def __init__(self, pct: float | None):
        self.pct = pct
        self.costs: deque = deque(maxlen=MEAN_OF)  # the last windows' costs (s)
        # (window, step timer rows: opened, analysis ended, the pace's end; cost s) each
        self.measured: list[tuple[int, int, int, int, float]] = []
        self._unmeasured: list[_Opened] = []
        self._last: _Opened | None = None
        self._until: float | None = None  # when the window due may open, once known
        self._due: float | None = None  # when the window now due came due
        self._look_at = float("-inf")  # while a cost is unknown: when to look again
        self._note = ""

    def opened(self, index: int, now: float, row: int) -> None:
        self._last = _Opened(index, now, row)
        self._unmeasured.append(self._last)
        self._until, self._due, self._note = None, None, ""
        self._look_at = float("-inf")

    def allows(self, now: float, timer, ended_at) -> bool:
        """Whether the window due at ``now`` may open (``ended_at(index)``: when a window's
        analysis ended, None before)."""
        last = self._last
        if self.pct is None or last is None or not timer.enabled:
            return True
        if self._until is not None:
            return now >= self._until
        if self._due is None:
            self._due = now  # (its step on the schedule)
        if now < self._look_at:
            return False
        self._measure(timer, ended_at)
        if self.costs:
            self._until = self._wait_until(now, last)
            return now >= self._until
        if now - last.time < MAX_STRETCH * (self._due - last.time):  # wait for the cost
            self._look_at = now + _RECHECK_S
            return False
        self._until = now
        self._note = (f"opened {(now - last.time) / (self._due - last.time):.1f}x the "
                      f"schedule's spacing after window {last.index} (the most it waits): no "
                      "window's cost was measured yet (none's analysis had ended), and "
                      f"windows are spaced to cost at most {self.pct:g}% (max_overhead_pct)")
        return True

    def _measure(self, timer, ended_at) -> None:
        """Each window whose analysis has ended (with enough steps after it) measured."""
        left = []
        for i, w in enumerate(self._unmeasured):
            end = ended_at(w.index)
            nxt = self._unmeasured[i + 1].row if i + 1 < len(self._unmeasured) else len(timer)
            ended = None if end is None else timer.row_at(end)
            lost = None if ended is None else timer.lost_s(w.row, ended, nxt)
            if lost is None:
                left.append(w)
            else:
                self.costs.append(lost)
                self.measured.append((w.index, w.row, ended, min(nxt, len(timer)), lost))
        self._unmeasured = left

    def _wait_until(self, now: float, last: _Opened) -> float:
        """When the window due may open, the costs known (its note said where it waits)."""
        elapsed = self._due - last.time
        cost = max(0.0, sum(self.costs) / len(self.costs))
        wait = min(cost / (self.pct / 100), MAX_STRETCH * elapsed)
        opens = max(last.time + max(wait, elapsed), now)
        if opens - self._due <= 0.02 * elapsed:
            return opens
        most = " (the most it waits)" if wait == MAX_STRETCH * elapsed else ""
        which = [str(m[0]) for m in self.measured[-len(self.costs):]]
        measured = f"window {which[0]}'s, as measured" if len(which) == 1 \
            else f"the mean of windows {', '.join(which)}"
        self._note = (f"opened {(opens - last.time) / elapsed:.1f}x the schedule's spacing "
                      f"after window {last.index}{most}: a window costs {cost * 1e3:,.1f} ms "
                      f"of training ({measured}), {100 * cost / elapsed:.1f}% of the "
                      f"{elapsed:,.2f} s from window {last.index}'s opening to this one's step "
                      f"on the schedule, and windows are spaced to cost at most {self.pct:g}% "
                      "(max_overhead_pct)")
        if opens > last.time + max(wait, elapsed):
            self._note += ("; it waited for that measure: no window's analysis had ended when "
                           "it was due")
        return opens

    def take_note(self) -> str:
        """The note of the window opening now ("" unless it waited for the budget)."""
        note, self._note = self._note, ""
        return note
