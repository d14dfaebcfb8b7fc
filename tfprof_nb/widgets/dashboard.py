"""The dashboard: every view of a profile in tabs (overview, trace viewer, TensorFlow stats,
GPU kernel stats, memory, input pipeline, tf.data, pod viewer)."""

from __future__ import annotations

import pandas as pd
import traitlets

from ._base import BaseWidget, bundle
from .memory import memory_payload
from .pipeline import pod_spec, tf_data_spec
from .stepgraph import step_graph_spec
from .tables import table_spec
from .timeline import TimelineSource

__all__ = ["Dashboard"]


def _overview_payload(prof) -> dict:
    ov = prof.overview()
    cards = []
    st = ov.step_time
    if st.get("steps"):
        cards.append(("Average step time", f"{st['avg_ms']:.3f} ms"))
        cards.append(("Steps", f"{st['steps']} ({st['source']})"))
    ib = ov.input_bound
    if ib.get("classification") not in (None, "unknown"):
        cards.append(("Waiting for input", f"{ib.get('input_pct', 0.0):.1f}%"))
    if ov.precision:
        cards.append(("16-bit device compute",
                      f"{ov.precision['device_compute_16bit_pct']:.1f}%"))
    env = ov.environment
    cards.append(("Hosts / devices", f"{env['host_count']} / {env['device_count']} "
                                     f"{env['device_type']}"))
    statements = [s for s in (ib.get("input_statement"), ib.get("all_other_statement"),
                              ib.get("kernel_launch_statement"),
                              ov.precision.get("statement")) if s]
    statements += [f"Note: {r}" for r in ov.reasons]
    return {"cards": cards, "statements": statements,
            "recommendations": [str(f) for f in ov.recommendations]}


def _input_graph(steps) -> dict:
    spec = step_graph_spec(steps)
    wait = spec["values"]["input_ms"]
    rest = [max(d - w, 0.0) for d, w in zip(spec["duration"], wait)]
    return {"steps": spec["steps"], "duration": spec["duration"],
            "categories": [{"name": "input_ms", "label": "Waiting for input"},
                           {"name": "rest", "label": "Rest of the step"}],
            "values": {"input_ms": wait, "rest": rest}}


def _environment(prof) -> dict:
    from ..analysis.overview import run_environment

    devices = run_environment(prof)["devices"]
    if devices.empty:
        devices = pd.DataFrame({"host": prof.hosts, "device": "CPU only"})
    return table_spec(devices, "Devices", "device", 50)


def _pies(ops) -> dict:
    out = {}
    for side, prefix in (("Host", "host"), ("Device", "device")):
        part = ops[ops.host_or_device == side]
        by_op = part.groupby("operation", sort=False).total_self_time_us.sum()
        by_type = part.groupby("type", sort=False).total_self_time_us.sum()
        for key, series in ((f"{prefix}_op", by_op), (f"{prefix}_type", by_type)):
            top = series.sort_values(ascending=False)
            out[key] = [{"label": str(k), "value": float(v)} for k, v in top.head(200).items()]
    return out


def _scopes(prof) -> list:
    table = prof.scope_stats(side="all")
    return [{"scope": str(r.scope), "parent": None if r.parent is None or
             (isinstance(r.parent, float)) else str(r.parent), "name": str(r.name),
             "time": float(r.self_time_us), "bytes": float(r.allocated_bytes)}
            for r in table.itertuples()]


class Dashboard(BaseWidget):
    """Every view of a profile in one tabbed widget; ``prof.show()`` and ``display(prof)``
    give it.  Tabs without data say why instead of showing empty charts."""

    _esm = bundle("dashboard")
    overview = traitlets.Dict().tag(sync=True)
    reasons = traitlets.Dict().tag(sync=True)
    step_graph = traitlets.Dict().tag(sync=True)
    clicked_step = traitlets.Int(-1).tag(sync=True)
    top_ops = traitlets.Dict().tag(sync=True)
    environment = traitlets.Dict().tag(sync=True)
    ops_table = traitlets.Dict().tag(sync=True)
    ops_pies = traitlets.Dict().tag(sync=True)
    scopes = traitlets.List().tag(sync=True)
    kernels_table = traitlets.Dict().tag(sync=True)
    memory_table = traitlets.Dict().tag(sync=True)
    input_summary = traitlets.Dict().tag(sync=True)
    input_graph = traitlets.Dict().tag(sync=True)
    input_host = traitlets.Dict().tag(sync=True)
    input_ops = traitlets.Dict().tag(sync=True)
    tf_data = traitlets.Dict().tag(sync=True)
    pod = traitlets.Dict().tag(sync=True)
    mem_meta = traitlets.Dict().tag(sync=True)
    mem_num = traitlets.Bytes(b"").tag(sync=True)
    mem_txt = traitlets.Bytes(b"").tag(sync=True)
    tl_ev_start = traitlets.Bytes(b"").tag(sync=True)
    tl_ev_dur = traitlets.Bytes(b"").tag(sync=True)
    tl_ev_name = traitlets.Bytes(b"").tag(sync=True)
    tl_meta = traitlets.Dict().tag(sync=True)
    tl_view = traitlets.List(traitlets.Float(), default_value=[]).tag(sync=True)
    tl_selected_index = traitlets.Int(-1).tag(sync=True)
    tl_details = traitlets.Dict().tag(sync=True)
    tl_height = traitlets.Int(520).tag(sync=True)

    def __init__(self, prof, **kwargs):
        self._prof = prof
        self._timeline = TimelineSource(prof)
        reasons = {}
        steps = prof.steps
        if steps.empty:
            reasons["steps"] = ("No steps: the profile has no step markers and no repeated "
                                "tf.function call to infer them from.")
        ops = prof.op_stats
        if ops.empty:
            reasons["ops"] = "No TensorFlow ops in this profile."
        kernels = prof.kernel_stats
        if kernels.empty:
            reasons["kernels"] = "No GPU in this profile: there are no kernels to show."
        memory = prof.memory_breakdown
        if memory.empty:
            reasons["memory"] = ("No memory events in this profile (on CPU only some "
                                 "allocators and workloads record them).")
        if not len(prof.events):
            reasons["timeline"] = "No events in this profile."
        if steps.empty:
            reasons["input"] = reasons["steps"]
        tfd = prof.tf_data
        if tfd.pipelines.empty:
            reasons["tfdata"] = tfd.summary["message"]
        if len(prof.hosts) < 2:
            reasons["pod"] = ("This profile has one host: the pod viewer compares the step "
                              "times of several hosts (capture with tp.capture_remote).")
        ip = prof.input_pipeline
        top = ops[ops["type"] != "IDLE"].head(10)[["host_or_device", "type", "operation",
                                                   "occurrences", "total_self_time_us"]]
        super().__init__(
            overview=_overview_payload(prof), reasons=reasons,
            step_graph=step_graph_spec(steps),
            top_ops=table_spec(top, "Top 10 operations by self time", "operation", 10),
            environment=_environment(prof),
            ops_table=table_spec(ops, "TensorFlow stats", "operation"),
            kernels_table=table_spec(kernels, "GPU kernel stats", "kernel_name"),
            **memory_payload(prof),
            input_summary={"statement": ip.summary.get("input_statement", ""),
                           "next_step": ip.summary.get("next_step", "")},
            input_graph=_input_graph(steps),
            input_host=table_spec(ip.host_side.reset_index(drop=True),
                                  "Host-side input time", "category", 10),
            input_ops=table_spec(ip.input_ops, "Input ops", "operation"),
            tf_data=tf_data_spec(tfd), pod=pod_spec(prof.pod),
            ops_pies={"with_idle": _pies(ops),
                      "without_idle": _pies(prof.op_stats_table(include_idle=False))},
            scopes=_scopes(prof),
            **{f"tl_{k}": v for k, v in self._timeline.columns.items()},
            tl_meta=self._timeline.meta, **kwargs)

    def _timeline_source(self):
        return self._timeline

    @traitlets.observe("tl_selected_index")
    def _on_select(self, change) -> None:
        self._safely(lambda: setattr(self, "tl_details",
                                     self._timeline.describe(change["new"])))
