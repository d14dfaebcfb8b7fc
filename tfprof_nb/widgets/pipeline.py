"""The tf.data pipeline graph and the pod viewer as standalone widgets (the dashboard's
"tf.data" and "Pod viewer" tabs)."""

from __future__ import annotations

import traitlets

from ._view import View, ViewState
from .traits import FigureTrait

__all__ = ["PipelineGraph", "PodView", "tf_data_spec"]


def tf_data_spec(tfd) -> dict:
    """The pipeline graph's payload: every pipeline call's iterator graph, the suggestions."""
    executions = []
    for (host, pipeline, rank), nodes in tfd.graph.groupby(["host", "pipeline", "rank"],
                                                           sort=True):
        executions.append({"host": str(host), "pipeline": str(pipeline), "rank": int(rank),
                           "nodes": [{"id": str(r.iterator_id), "parent": str(r.parent_id),
                                      "name": str(r.name), "long_name": str(r.long_name),
                                      "start_us": float(r.start_us),
                                      "total_us": float(r.total_us),
                                      "self_us": float(r.self_us), "calls": int(r.calls),
                                      "critical": bool(r.critical),
                                      "bottleneck": bool(r.bottleneck)}
                                     for r in nodes.itertuples()]})
    suggestions = {f"{r.host}|{r.pipeline}": f"Bottleneck: {r.iterator_long_name}. "
                   f"{r.suggestion_text}" for r in tfd.bottlenecks.itertuples()}
    return {"executions": executions, "suggestions": suggestions,
            "summary": tfd.summary["message"]}


class PipelineGraph(View):
    """The tf.data iterator graph of each pipeline call: critical path in bold, the
    bottleneck in red, the suggestion for it (``prof.tf_data``)."""

    tab, title, bundle, position = "tfdata", "tf.data", "pipelinegraph", 80
    tf_data = traitlets.Dict().tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        tfd = prof.tf_data
        return tfd.summary["message"] if tfd.pipelines.empty else None

    @classmethod
    def state(cls, prof) -> ViewState:
        return ViewState({"tf_data": tf_data_spec(prof.tf_data)})


class PodView(View):
    """The step-time breakdown of every host side by side, the mean of all steps or one step
    (``prof.plot.pod()``)."""

    tab, title, bundle, position = "pod", "Pod viewer", "podview", 90
    figure = FigureTrait()

    @classmethod
    def reason(cls, prof) -> str | None:
        if len(prof.hosts) < 2:
            return ("This profile has one host: the pod viewer compares the step times of "
                    "several hosts (capture with tp.capture_remote).")
        if prof.pod.empty:
            return "No step was run by every host of this profile."
        return None

    @classmethod
    def state(cls, prof) -> ViewState:
        return ViewState({"figure": prof.plot.pod()})
