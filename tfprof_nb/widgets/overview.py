"""The overview view: summary cards (with the device figures: duty cycle, and on TPUs idle
time, MXU/HBM counters and roofline utilisations), the step-time graph (saying where inferred
steps come from), verdicts, top ops, the run environment and the recommendations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import traitlets

from ..analysis.findings.overview import device_text
from ..constants import TPU_TENSOR_CORE_PLANE
from ._view import View, ViewState
from .opstats import typed_op_stats
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["OverviewView", "overview_statements", "profile_header"]


def profile_header(prof) -> list[list[str]]:
    """The profile's key facts as [label, value] pairs (the dashboard's header); devices are
    counted where they have events (the others said apart)."""
    facts = [["Hosts", f"{len(prof.hosts)}"],
             ["Devices", device_text(prof.result("environment"))],
             ["Events", f"{prof.n_events:,}"],
             ["Duration", f"{prof.duration_us / 1e3:,.1f} ms"]]
    if prof.start_time is not None:
        facts.append(["Captured", f"{prof.start_time:%Y-%m-%d %H:%M:%S} UTC"])
    if prof.load_errors:
        facts.append(["Not loaded", ", ".join(prof.load_errors)])
    return facts


def _known(value) -> bool:
    return value is not None and not np.isnan(value)


def _device_cards(ov) -> list[list[str]]:
    """The device figures (TPU: duty cycle, idle, MXU and HBM counters, roofline
    utilisations; GPU: the duty cycle) as cards, those the profile has (a note says why one
    is missing); none without them."""
    dev = ov.device
    if dev:
        kind = dev["device_type"]
        cards = [(f"{kind} duty cycle", dev["duty_cycle_pct"]), (f"{kind} idle", dev["idle_pct"]),
                 ("MXU utilisation", dev["mxu_utilization_pct"]),
                 ("HBM utilisation", dev["hbm_utilization_pct"]),
                 ("FLOP rate of the roofline", dev["flop_rate_utilization_pct"]),
                 ("HBM bandwidth of its peak", dev["hbm_bw_utilization_pct"])]
        return [[label, f"{value:.1f}%"] for label, value in cards if _known(value)]
    if _known(ov.device_duty_cycle_pct):
        return [["Device duty cycle", f"{ov.device_duty_cycle_pct:.1f}%"]]
    return []


# where steps come from (the step table's source), in words
_SOURCE_WORDS = {"markers": "step markers", "device": "device",
                 "group_id": "the profiler's step groups",
                 "group_id (device)": "the profiler's step groups, device",
                 "device (TPU Steps line)": "the TPUs' Steps lines"}


def _cards(ov) -> list[list[str]]:
    cards = []
    st = ov.step_time
    if st.get("steps"):
        cards.append(["Average step time", f"{st['avg_ms']:.3f} ms"])
        source = "inferred" if st["source"].startswith("inferred") else \
            _SOURCE_WORDS.get(st["source"], st["source"])
        cards.append(["Steps", f"{st['steps']} ({source})"])  # inferred: the note says how
    if ov.input_wait:
        cards.append(["Waiting for input", f"{ov.input_wait['pct']:.1f}%"])
    if ov.precision:
        cards.append([ov.precision["label"], f"{ov.precision['pct16']:.1f}%"])
    env = ov.environment
    cards.append(["Hosts / devices", f"{env['host_count']} / {device_text(env)}"])
    return cards + _device_cards(ov)


def overview_statements(ov) -> list[str]:
    """The overview's statements: the verdicts (the reference's wording), where the input
    wait's sources differ, the precision, and the notes (not the inferred steps' one, which
    the step graph shows)."""
    ib = ov.input_bound
    statements = [s for s in (ib.get("input_statement"), ov.input_wait.get("statement"),
                              ib.get("all_other_statement"),
                              ib.get("kernel_launch_statement"),
                              ov.precision.get("statement")) if s]
    step_note = ov.step_time.get("statement", "")
    return statements + [f"Note: {r}" for r in ov.reasons if r != step_note]


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
        return ViewState({
            "cards": _cards(ov), "statements": overview_statements(ov),
            "step_figure": prof.plot.step_time() if len(steps) else {},
            "step_note": step_note[:1].upper() + step_note[1:] + "." if step_note else "",
            "no_steps": "" if len(steps) else "No steps: the profile has no step markers and "
            "no repeated tf.function or jitted call to infer them from.",
            "top_ops": TableData(top, "Top 10 operations by self time", "operation", 10),
            "environment": _environment(prof, ov.environment),
            "recommendations": [str(f) for f in ov.recommendations]})
