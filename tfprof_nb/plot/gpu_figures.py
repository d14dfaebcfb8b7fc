"""GPU charts: busy and idle time by cause per device and step, compute/communication overlap,
kernel launch latency and the launch queue.  Each draws one table of the profile as it is
(``prof.gpu_utilization``, ``prof.gpu_overlap``, ``prof.launch_latency``)."""

from __future__ import annotations

import pandas as pd

from ..analysis.gpu.activity import is_copy
from ..analysis.gpu.time import (ALL_STREAMS, OUTSIDE_STEPS, PROFILE_WINDOW, has_steps,
                                 the_steps)
from .._words import counted
from ._style import PALETTE, new_figure, plain, titled_with_note
from .step_bars import stacked_per_step

__all__ = ["utilization_figure", "overlap_figure", "launch_latency_figure", "launched_words",
           "queue_figure", "UTILIZATION_PARTS", "HOST_BOUND_WITH_INPUT"]

# (column, label, colour) of the stacked busy/idle parts, busy first
UTILIZATION_PARTS = [
    ("busy_us", "Busy (kernels)", "#4e79a7"),
    ("sync_memcpy_us", "Copies / sync", "#76b7b2"),
    ("input_us", "Waiting for input", "#e15759"),
    ("launch_bound_us", "Launch-bound", "#edc948"),
    ("host_bound_us", "Host-bound", "#f28e2b"),
    ("other_us", "Other idle", "#bab0ac"),
]


def _device_labels(table: pd.DataFrame) -> pd.Series:
    many_hosts = table.host.nunique() > 1
    label = table.device.astype(str)
    if many_hosts:
        label = table.host.astype(str) + " " + label
    return label.map(plain)


_STEP_WINDOWS = {OUTSIDE_STEPS: "outside steps", PROFILE_WINDOW: "active span"}


# the host-bound part's label where the trace cannot tell input apart (no input events)
HOST_BOUND_WITH_INPUT = "Host-bound (input made on the host included)"


def utilization_figure(table: pd.DataFrame, theme: str = "light", input_known: bool = True,
                       left_out: str = ""):
    """Stacked busy and idle time by cause (ms), one bar per device and step (the devices'
    own rows, stream "all"); the parts of a bar add up to its step's wall time.  TPUs run
    ops, not kernels.  ``input_known`` False (the host has no input events, so waiting for
    input is unknown): no input part, and the host-bound part says it holds any input.
    ``left_out``: the devices that ran nothing in any step, which the page's device figures
    leave out (prof.measures' ``excluded``), named in the title."""
    dev = table[table.stream == ALL_STREAMS] if len(table) else table
    tpu = len(dev) and dev.device.astype(str).str.contains("TPU").all()
    parts = [("busy_us", "Busy (ops)", c) if col == "busy_us" and tpu else (col, label, c)
             for col, label, c in UTILIZATION_PARTS]
    if not input_known:
        parts = [(col, HOST_BOUND_WITH_INPUT if col == "host_bound_us" else label, c)
                 for col, label, c in parts if col != "input_us"]
    if not len(dev):
        title = "Device time: no GPU or TPU activity in this profile"
    elif has_steps(dev):
        title = "Device time per step: busy and idle by cause"
    else:
        span = "its active span" if dev.device.nunique() == 1 and dev.host.nunique() == 1 \
            else "each one's active span"
        title = f"Device time over {span} (no steps): busy and idle by cause"
    if left_out:  # (their bars in the steps are all idle)
        said = the_steps(dev)
        title = titled_with_note(title, f"{left_out} ran no {'op' if tpu else 'kernel'} in "
                                 f"{said}: idle in {'it' if said == 'the step' else 'them'} "
                                 "throughout (the page's device figures leave "
                                 f"{'them' if ',' in left_out else 'it'} out)")
    return _stacked_ms(dev, parts, title, "gpu_utilization", theme)


def overlap_figure(table: pd.DataFrame, theme: str = "light"):
    """Collective time per device and step (ms), split into the part hidden under compute
    and the exposed part."""
    title = "Collectives: hidden under compute vs exposed"
    cols = [c for c in ("hidden_us", "exposed_us") if c in table]
    if not len(table) or not table[cols].to_numpy(dtype=float).any():  # (all zero bars)
        outside = table.attrs.get("collectives_outside", {})
        title = "Collectives: none ran in this profile" if not outside.get("devices") else \
            (f"Collectives: none in the steps ({outside['ms']:,.1f} ms ran outside every "
             f"step, on {counted(outside['devices'], 'device')})")
    return _stacked_ms(table, (("hidden_us", "Hidden under compute", "#59a14f"),
                               ("exposed_us", "Exposed", "#e15759")),
                       title, "gpu_overlap", theme)


def _stacked_ms(table: pd.DataFrame, parts, title: str, kind: str, theme: str):
    """One stacked bar per device and step of ``table`` (a trace per (column in us, label,
    colour) of ``parts``, in ms; a device's time outside every step apart, on its own
    scale: :func:`~tfprof_nb.plot.step_bars.stacked_per_step`)."""
    labels = _device_labels(table) if len(table) else pd.Series([], dtype=object)
    fig = stacked_per_step(table, labels, parts, OUTSIDE_STEPS, _STEP_WINDOWS, theme)
    fig.update_layout(title={"text": title}, meta={**fig.layout.meta, "kind": kind})
    return fig


def launched_words(per_kernel: pd.DataFrame) -> str:
    """What the launches are: "kernels", or "kernels, copies and memsets" where the launch
    latency table holds copies (BERT: GPU:1 ran no kernel, only 19 copies)."""
    names = per_kernel.kernel_name.astype(str) if len(per_kernel) else []
    return "kernels, copies and memsets" if any(is_copy(n) for n in names) else "kernels"


def launch_latency_figure(histogram: pd.DataFrame, theme: str = "light",
                          launched: str = "kernels"):
    """Launches per latency bin (launch call start to kernel start), one series per device
    (``launched``: what they launch, in the title)."""
    title = "Kernel launch latency" if launched == "kernels" else \
        f"Launch latency: {launched}"
    fig = new_figure(theme=theme, barmode="group",
                     title={"text": title},
                     xaxis={"title": {"text": "Latency (us)"}, "type": "category"},
                     yaxis={"title": {"text": "Launches"}, "rangemode": "tozero"},
                     meta={"kind": "launch_latency"})
    if not len(histogram):
        return fig
    labels = _device_labels(histogram)
    for i, (label, rows) in enumerate(histogram.groupby(labels, sort=False)):
        fig.add_bar(x=rows.bin.tolist(), y=rows.launches.to_numpy(), name=label,
                    marker={"color": PALETTE[i % len(PALETTE)]},
                    hovertemplate="%{x} us: %{y} launches<extra>" + label + "</extra>")
    return fig


def queue_figure(queue: pd.DataFrame, theme: str = "light"):
    """Kernels launched and not yet started, per device over time (a step line)."""
    fig = new_figure(theme=theme, title={"text": "Launch queue length"},
                     xaxis={"title": {"text": "Time (ms)"}},
                     yaxis={"title": {"text": "Kernels queued"}, "rangemode": "tozero"},
                     meta={"kind": "launch_queue"})
    if not len(queue):
        return fig
    labels = _device_labels(queue)
    for i, (label, rows) in enumerate(queue.groupby(labels, sort=False)):
        fig.add_scatter(x=(rows.time_us / 1e3).to_numpy(float), y=rows.queued.to_numpy(),
                        name=label, mode="lines", line={"shape": "hv",
                                                        "color": PALETTE[i % len(PALETTE)]},
                        hovertemplate="%{x:.3f} ms: %{y} queued<extra>" + label + "</extra>")
    return fig
