"""The step-time graph as its own view: stacked step-time categories per step."""

from __future__ import annotations

import traitlets

from ._view import View, ViewState
from .traits import FigureTrait

__all__ = ["StepTimeGraph", "StepTimeGraphView"]


class StepTimeGraphView(View):
    """Stacked bars of the step-time categories per step (``prof.plot.step_time()``);
    ``clicked_step`` is the row of ``prof.steps`` last clicked."""

    title, bundle = "Step-time graph", "stepgraph"
    figure = FigureTrait()
    clicked_step = traitlets.Int(-1).tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.steps) else "No steps in this profile."

    @classmethod
    def state(cls, prof) -> ViewState:
        return ViewState({"figure": prof.plot.step_time()})


StepTimeGraph = StepTimeGraphView  # its name in DESIGN.md's contract: an alias, without a warning
