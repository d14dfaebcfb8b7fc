"""Step progress during a capture: a line updated in place in a notebook, a text line elsewhere."""

from __future__ import annotations

from .._progress import ProgressLine, in_notebook

__all__ = ["StepProgress"]


class StepProgress:
    """Shows "warm-up i/K" then "profiling step j/N"; silent when ``enabled`` is False."""

    def __init__(self, steps: int, warmup: int, enabled: bool = True):
        self.steps, self.warmup, self.enabled = steps, warmup, enabled
        self._line = ProgressLine(warmup + steps) if enabled else None
        if self._line is not None and in_notebook():
            self._line.show()  # the bar appears with the cell, text waits for a step

    def update(self, done: int) -> None:
        if self._line is None:
            return
        if done < self.warmup:
            text = f"warm-up {done + 1}/{self.warmup}"
        else:
            text = f"profiling step {min(done - self.warmup + 1, self.steps)}/{self.steps}"
        self._line.update(done, text)

    def finish(self, message: str) -> None:
        if self._line is not None:
            self._line.finish(message)
