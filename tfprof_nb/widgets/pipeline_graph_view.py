"""The tf.data pipeline graph as a standalone widget (the dashboard's "tf.data" tab)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from ._view import View, ViewState
from .traits import TableTrait

__all__ = ["PipelineGraph", "PipelineGraphView", "tf_data_nodes", "tf_data_suggestions"]


def tf_data_nodes(tfd) -> pd.DataFrame:
    """The iterators of every pipeline call, one row each, grouped by call (host, pipeline,
    rank): what the graph view draws."""
    g = tfd.graph.sort_values(["host", "pipeline", "rank"], kind="stable")
    return pd.DataFrame({
        "host": g["host"].astype(str), "pipeline": g["pipeline"].astype(str),
        "rank": g["rank"].astype(np.int64), "id": g["iterator_id"].astype(str),
        "parent": g["parent_id"].astype(str), "name": g["name"].astype(str),
        "long_name": g["long_name"].astype(str), "start_us": g["start_us"].astype(float),
        "total_us": g["total_us"].astype(float), "self_us": g["self_us"].astype(float),
        "calls": g["calls"].astype(np.int64), "critical": g["critical"].astype(bool),
        "bottleneck": g["bottleneck"].astype(bool)}).reset_index(drop=True)


def tf_data_suggestions(tfd) -> dict[str, str]:
    """{"host|pipeline": the bottleneck and what to do about it}."""
    b = tfd.bottlenecks
    keys = b["host"].astype(str) + "|" + b["pipeline"].astype(str)
    text = "Bottleneck: " + b["iterator_long_name"].astype(str) + ". " + \
        b["suggestion_text"].astype(str)
    return dict(zip(keys.tolist(), text.tolist()))


class PipelineGraphView(View):
    """The tf.data iterator graph of each pipeline call: critical path in bold, the
    bottleneck in red, the suggestion for it (``prof.tf_data``)."""

    tab, title, bundle, position = "tfdata", "tf.data", "pipelinegraph", 80
    nodes = TableTrait()
    suggestions = traitlets.Dict(value_trait=traitlets.Unicode()).tag(sync=True)
    summary = traitlets.Unicode("").tag(sync=True)

    @classmethod
    def reason(cls, prof) -> str | None:
        tfd = prof.tf_data
        return tfd.summary["message"] if tfd.pipelines.empty else None

    @classmethod
    def state(cls, prof) -> ViewState:
        tfd = prof.tf_data
        return ViewState({"nodes": tf_data_nodes(tfd), "suggestions": tf_data_suggestions(tfd),
                          "summary": str(tfd.summary["message"])})


PipelineGraph = PipelineGraphView  # its name in DESIGN.md's contract: an alias, without a warning
