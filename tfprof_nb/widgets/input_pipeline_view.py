"""The input pipeline view: the verdict, input wait per step, where input time goes on the
host, and the input ops."""

from __future__ import annotations

import traitlets

from ..analysis.steps.breakdown import NO_STEPS_WHY
from ._view import View, ViewState
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["InputPipelineView"]


# XProf's input-pipeline tool and its tf.data tool give an iterator two self times: said here
INPUT_OPS_TITLE = ("Input ops (every call; self time: minus the ops nested under each on its "
                   "thread, XProf's input-pipeline rule; the tf.data tab shows one call, each "
                   "iterator minus the iterators it waited on)")


class InputPipelineView(View):
    """Is the program input-bound, input wait per step, host-side breakdown, input ops
    (``prof.input_pipeline``)."""

    tab, title, bundle, position = "input", "Input pipeline", "input_pipeline", 70
    statements = traitlets.List().tag(sync=True)
    figure = FigureTrait()
    host_table = TableTrait()
    ops_table = TableTrait()

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.steps) else (
            f"No steps: the profile has {NO_STEPS_WHY}, so input wait per step cannot be "
            "measured.")

    @classmethod
    def state(cls, prof) -> ViewState:
        ip = prof.input_pipeline
        verdict = prof.overview().verdict  # the page's verdict, from the one input wait
        return ViewState({
            "statements": [s for s in (verdict.get("statement", ""),
                                       verdict.get("xprof_statement", ""),
                                       ip.summary.get("next_step", "")) if s],
            "figure": prof.plot.input_pipeline(),
            "host_table": TableData(ip.host_side.reset_index(drop=True),
                                    "Host-side input time (whole profile)", "category", 10),
            "ops_table": TableData(ip.input_ops, INPUT_OPS_TITLE, "operation")})
