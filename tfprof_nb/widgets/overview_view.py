"""The overview view: summary cards (with the device figures: duty cycle, and on TPUs idle
time, MXU/HBM counters and roofline utilisations), the step-time graph (saying where inferred
steps come from), verdicts, top ops, the run environment and the recommendations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from ..analysis.findings.measure_words import (busy_share_words, complement_duty, excluded_note,
                                               get, measure_text, spread_words)
from ..analysis.findings.overview import NO_STEPS_REASON, device_text, xprof_hosts_words
from ..analysis.steps.breakdown import NO_STEPS_WHY
from ..analysis.xla.buffer_words import xprof_buffer_words
from ..constants import TPU_TENSOR_CORE_PLANE
from ._view import View, ViewState
from .op_stats_view import typed_op_stats
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["OverviewView", "overview_statements", "profile_header"]


def profile_header(prof) -> list[list[str]]:
    """The profile's key facts as [label, value] pairs (the dashboard's header); devices are
    counted where they have events (the others said apart)."""
    facts = [["Hosts", f"{len(prof.hosts)}"],
             ["Devices", device_text(prof.result("environment"))],
             ["Events", f"{prof.n_events:,}"],
             ["Duration", _duration_words(prof)]]
    if prof.start_time is not None:
        facts.append(["Captured", f"{prof.start_time:%Y-%m-%d %H:%M:%S} UTC"])
    if prof.load_errors:
        facts.append(["Not loaded", ", ".join(prof.load_errors)])
    return facts


def _duration_words(prof) -> str:
    """"2,646.6 ms", and where the events run outside it on the profile's time axis (the
    axis of every time the pages give: a memory peak at 2,775.2 ms), where they do (BERT's
    GPU events end 128.7 ms past the capture's stop)."""
    timing = prof.result("timing")
    said = f"{timing['duration_us'] / 1e3:,.1f} ms"
    span = timing.get("events_span_us")
    if span is None or (span[0] >= 0 and span[1] <= timing["duration_us"] * 1.0005):
        return said
    return (f"{said} (the capture's start to stop; its events run from {span[0] / 1e3:,.1f} "
            f"to {span[1] / 1e3:,.1f} ms on the time axis the pages use)")


def _known(value) -> bool:
    return value is not None and not np.isnan(value)


# the measures the overview's cards show after the step time, in order (prof.measures' keys)
_CARD_MEASURES = ("input_wait_pct", "device_idle_pct", "duty_cycle_pct", "mxu_utilization_pct",
                  "hbm_utilization_pct", "flop_rate_utilization_pct", "hbm_bw_utilization_pct")


def measure_card(row) -> list[str]:
    """A measure as a card: [label, value, what it counts (and XProf's figure, as XProf's,
    where its rule gives another)]."""
    scope = str(row["scope"])
    if pd.notna(row["min"]) and row["device_count"]:
        scope += f". {spread_words(row)[:1].upper()}{spread_words(row)[1:]}"
    if pd.notna(row["xprof_value"]):
        scope += (f". XProf: {measure_text(row['xprof_value'], row['unit'])} "
                  f"({row['xprof_note']})")
    return [str(row["label"]), measure_text(row["value"], row["unit"]), scope]


# where steps come from (the step table's source), in words
_SOURCE_WORDS = {"markers": "step markers", "device": "device",
                 "group_id": "the profiler's step groups",
                 "group_id (device)": "the profiler's step groups, device",
                 "device (TPU Steps line)": "the TPUs' Steps lines"}


def _cards(ov) -> list[list[str]]:
    cards = []
    st, table = ov.step_time, ov.measures
    if st.get("steps"):
        cards.append(measure_card(table.loc["step_time_mean_ms"]))
        source = "inferred" if st["source"].startswith("inferred") else \
            _SOURCE_WORDS.get(st["source"], st["source"])
        # (inferred: the note says how; a pod's: each host's count, then all its rows)
        count = st["count"] if st.get("hosts", 1) < 2 else \
            f"{st['count']} on each of {st['hosts']} hosts, {st['steps']} host steps"
        cards.append(["Steps", f"{count} ({source})"])
    # (the input wait's card also where it is unknown: its scope says why)
    cards += [measure_card(table.loc[key]) for key in _CARD_MEASURES[:1] if key in table.index]
    if ov.precision:
        key = ov.precision["evidence_key"]
        cards.append(measure_card(table.loc[key]) if get(table, key) is not None else
                     [ov.precision["label"], f"{ov.precision['pct16']:.1f}%"])
    env = ov.environment
    cards.append(["Hosts / devices", f"{env['host_count']} / {device_text(env)}"
                  + xprof_hosts_words(env)])
    # (without steps the duty cycle is the idle share's complement: one card says both)
    duty = complement_duty(table)
    for key in _CARD_MEASURES[1:]:
        if get(table, key) is None or (key == "duty_cycle_pct" and duty is not None):
            continue
        cards.append(measure_card(table.loc[key]))
        if key == "device_idle_pct" and duty is not None:
            cards[-1][2] += f"; {busy_share_words(duty)}"
    return cards


def overview_statements(ov) -> list[str]:
    """The overview's statements: the page's input-bound verdict (from the one input-wait
    measure), XProf's where its rule classifies otherwise (as XProf's), XProf's other
    step-breakdown verdicts where they are the page's measures (no device accounting), the
    precision, and the notes (not the inferred steps' one, which the step graph shows)."""
    verdict = ov.verdict
    statements = [verdict.get("statement"), verdict.get("xprof_statement"),
                  excluded_note(ov.measures) if len(ov.measures) else "",
                  *verdict.get("xprof_shares", ()),
                  ov.precision.get("statement"), getattr(ov, "bound_by", "")]
    # (the inferred steps' note is the step graph's, the no-steps one stands for the chart)
    said_apart = (ov.step_time.get("statement", ""), NO_STEPS_REASON)
    return [s for s in statements if s] + [f"Note: {r}" for r in ov.reasons
                                           if r not in said_apart]


def _environment(prof, env) -> TableData:
    """The devices (GPUs with their capabilities, else the TPU planes, else "CPU only"),
    those with events first."""
    devices = env["devices"]
    if devices.empty and env["device_type"] == "TPU":
        planes = prof.planes
        tpus = planes[planes.plane.str.match(TPU_TENSOR_CORE_PLANE)]
        devices = pd.DataFrame({"host": tpus.host.astype(str), "device": tpus.plane.astype(str),
                                "events": tpus.events.astype("int64")}).reset_index(drop=True)
    if devices.empty:
        return TableData(pd.DataFrame({"host": prof.hosts, "device": "CPU only"}), "Devices",
                         "device", 50)
    devices = devices.sort_values("events", ascending=False, kind="stable",
                                  key=lambda e: e > 0).reset_index(drop=True)
    # (a column the capture fills for no device, such as BERT's GPU names: left out, not a
    # blank column that reads as a fault)
    blank = [c for c in devices.columns if c not in ("host", "device") and
             (devices[c].isna() | (devices[c].astype(str).str.strip() == "")).all()]
    devices = devices.drop(columns=blank)
    title = f"Devices: {device_text(env)}"
    return TableData(devices, title, "device", 50)


class OverviewView(View):
    """Summary cards, step-time graph (click a step to see it in the trace viewer), the
    input-bound verdict, top 10 ops, the run environment and the recommendations."""

    tab, title, bundle, position = "overview", "Overview", "overview", 10
    cards = traitlets.List().tag(sync=True)
    statements = traitlets.List().tag(sync=True)
    step_figure = FigureTrait()
    step_note = traitlets.Unicode("").tag(sync=True)  # where the steps come from, if inferred
    no_steps = traitlets.Unicode("").tag(sync=True)
    top_ops = TableTrait()
    environment = TableTrait()
    recommendations = traitlets.List().tag(sync=True)
    clicked_step = traitlets.Int(-1).tag(sync=True)

    @classmethod
    def state(cls, prof) -> ViewState:
        ov = prof.overview()
        step_note = ov.step_time.get("statement", "")
        steps = prof.steps
        ops = typed_op_stats(prof)
        top = ops[ops["type"] != "IDLE"].head(10)[["host_or_device", "type", "operation",
                                                   "occurrences", "total_self_time_us"]]
        # (device ops XProf's overview lists not: say why beside them)
        buffers = xprof_buffer_words(prof.hlo_stats, "op_stats") \
            if (top.host_or_device == "Device").any() else ""
        return ViewState({
            "cards": _cards(ov),
            "statements": overview_statements(ov) + ([buffers] if buffers else []),
            "step_figure": prof.plot.step_time() if len(steps) else {},
            "step_note": step_note[:1].upper() + step_note[1:] + "." if step_note else "",
            "no_steps": "" if len(steps) else f"No steps: the profile has {NO_STEPS_WHY}.",
            "top_ops": TableData(top, "Top 10 operations by self time", "operation", 10),
            "environment": _environment(prof, ov.environment),
            "recommendations": [str(f) for f in ov.recommendations]})
