"""The tf.data pipeline graph and the pod viewer as standalone widgets (the dashboard's
"tf.data" and "Pod viewer" tabs)."""

from __future__ import annotations

import traitlets

from ._base import BaseWidget, bundle
from .stepgraph import LABELS

__all__ = ["PipelineGraph", "PodView", "pod_spec", "tf_data_spec"]


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


def pod_spec(pod) -> dict:
    """The pod viewer's payload: per step and host, each step-time category (ms)."""
    if pod.empty:
        return {"steps": [], "hosts": [], "categories": [], "values": {}, "duration": []}
    hosts = sorted(pod.host.unique())
    steps = sorted(pod.step.unique())
    table = pod.groupby(["step", "host"]).first()  # one row per (step, host)
    cats = [c for c in LABELS if c in pod.columns]

    def grid(col):  # steps x hosts (prof.pod keeps steps every host ran; fillna is a guard)
        wide = table[col].unstack("host").reindex(index=steps, columns=hosts)
        return wide.fillna(0.0).astype(float).to_numpy().tolist()

    return {"steps": [int(s) for s in steps], "hosts": [str(h) for h in hosts],
            "categories": [{"name": c, "label": LABELS[c]} for c in cats],
            "values": {c: grid(c) for c in cats}, "duration": grid("duration_ms")}


class PipelineGraph(BaseWidget):
    """The tf.data iterator graph of each pipeline call: critical path in bold, the
    bottleneck in red, the suggestion for it (``prof.tf_data``)."""

    _esm = bundle("pipelinegraph")
    tf_data = traitlets.Dict().tag(sync=True)

    def __init__(self, prof, **kwargs):
        super().__init__(tf_data=tf_data_spec(prof.tf_data), **kwargs)


class PodView(BaseWidget):
    """Steps of every host side by side, one step at a time (slider) (``prof.pod``)."""

    _esm = bundle("podview")
    pod = traitlets.Dict().tag(sync=True)

    def __init__(self, prof, **kwargs):
        super().__init__(pod=pod_spec(prof.pod), **kwargs)
