"""Step progress during a capture: an ipywidgets bar in a notebook, a text line elsewhere."""

from __future__ import annotations

import sys

__all__ = ["StepProgress"]


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


class StepProgress:
    """Shows "warm-up i/K" then "profiling step j/N"; silent when ``enabled`` is False."""

    def __init__(self, steps: int, warmup: int, enabled: bool = True):
        self.steps, self.warmup, self.enabled = steps, warmup, enabled
        self._bar = self._label = None
        if enabled and _in_notebook():
            try:
                import ipywidgets as w
                from IPython.display import display

                self._bar = w.IntProgress(min=0, max=warmup + steps, description="tfprof")
                self._label = w.Label("")
                display(w.HBox([self._bar, self._label]))
            except Exception:  # no widget support: fall back to text
                self._bar = None

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        if done < self.warmup:
            text = f"warm-up {done + 1}/{self.warmup}"
        else:
            text = f"profiling step {min(done - self.warmup + 1, self.steps)}/{self.steps}"
        if self._bar is not None:
            self._bar.value = done
            self._label.value = text
        else:
            print(f"\r[tfprof_nb] {text}   ", end="", file=sys.stderr, flush=True)

    def finish(self, message: str) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.value = self._bar.max
            self._label.value = message
            self._bar.bar_style = "success"
        else:
            print(f"\r[tfprof_nb] {message}", file=sys.stderr, flush=True)
