"""The share of step time waiting for input that sentences quote (``input_wait``), from one
source, so that a card, a statement and a finding about it agree, and the page's
input-bound verdict from it (:func:`input_verdict`).

With GPUs computing in the steps, the devices' own accounting (:mod:`..gpu.time`: the
device idles and the host fetches input before it launches the next kernel) over the devices'
step time; else the step breakdown's input share (the reference's, which on GPUs counts only
copies named ``MemcpyHToD`` and the device waiting on the host).  Where the two differ, the
measure's ``xprof_value`` and the verdict's ``xprof_statement`` say so, as XProf's.  (The
other share quoted from one source: :mod:`.precision`.)

The devices' accounting sees input only in the host's input events (tf.data's
``IteratorGetNext``, host-to-device copies, infeed: :func:`..gpu.activity.host_input_events`).
Where the host has none (a JAX loop fed from Python or numpy), the devices' wait for input
cannot be told from their wait for the host's other work: the measure is unknown (NaN) and the
verdict says so, and why, instead of calling the program not input-bound.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...constants import GPU_PLANE_PREFIX, HIGHLY_INPUT_BOUND_PCT, MODERATELY_INPUT_BOUND_PCT
from ..gpu.activity import host_input_events
from ..runtime.unit import Analysis
from ..tf.input_pipeline import NO_STEPS, bottleneck_verdicts
from .measure_words import device_words, get, idle_part_words, scope_tail
from .measures import INFERRED_FOR_XPROF, MARK_INPUT, NO_INPUT_EVENTS, kind_rows

__all__ = ["ANALYSES", "active_devices", "devices_input_unknown", "input_verdict",
           "input_wait", "input_wait_per_step"]


def active_devices(util: pd.DataFrame) -> pd.DataFrame:
    """The GPUs' own rows (stream "all") over the steps (or the profile window) of the GPUs
    that compute in some step; not their rows outside the steps, nor TPUs (their idle time
    has no launch to blame: the overview's TPU figures say it)."""
    return kind_rows(util, GPU_PLANE_PREFIX)


def _gpu_input(util: pd.DataFrame) -> float | None:
    """Input wait of the GPUs computing in the steps, in % of their step time (None: none)."""
    dev = active_devices(util)
    dev = dev[dev.step >= 0] if len(dev) else dev
    wall = float(dev.wall_us.sum()) if len(dev) else 0.0
    return 100 * float(dev.input_us.sum()) / wall if wall > 0 else None


def input_wait(parts: dict, steps: pd.DataFrame, gpu_utilization: pd.DataFrame,
               input_events: int = 1) -> dict:
    """The share of step time waiting for input from one source (see the module doc):
    ``pct``, ``source`` ("devices" or "steps"), ``steps_pct`` (the step breakdown's share,
    XProf's rule); {} without steps; ``pct`` NaN and ``no_input_events`` True where the
    devices' accounting would be the source and the host has no input events
    (``input_events``: their count).  ``prof.measures``' ``input_wait_pct`` row is this
    share with its scope."""
    verdict = bottleneck_verdicts(steps)
    if verdict.get("classification") in (None, "unknown"):
        return {}
    steps_pct = float(verdict["input_pct"])
    gpu_pct = _gpu_input(gpu_utilization)
    if gpu_pct is None:
        return {"pct": steps_pct, "source": "steps", "steps_pct": steps_pct}
    if not input_events:
        return {"pct": float("nan"), "source": "devices", "steps_pct": steps_pct,
                "no_input_events": True}
    return {"pct": gpu_pct, "source": "devices", "steps_pct": steps_pct}


def devices_input_unknown(result) -> bool:
    """Whether the devices' own wait for input (``prof.gpu_utilization``'s ``input_us``) is
    unknown, so that pages leave it blank: the host has no input events, so the GPUs'
    accounting cannot tell input from the host's other work (with steps, ``input_wait_pct``
    is unknown then; TPUs' input wait is the step breakdown's, known).  ``result``: a
    profile's ``result`` (a result by name)."""
    wait = result("input_wait")
    if wait:
        return bool(wait.get("no_input_events"))
    return result("environment")["device_type"] != "TPU" and not result("input_events")


def _input_event_total(parts: dict) -> int:
    return int(sum(parts.values()))


def input_wait_per_step(steps: pd.DataFrame, gpu_utilization: pd.DataFrame,
                        wait: dict) -> tuple[np.ndarray, str]:
    """Input wait in each step (ms, one per row of ``steps``) from the source of the one
    input-wait measure (``wait``: :func:`input_wait`), and that source in words: the GPUs'
    own accounting (each step's share of their wall time waiting for input, times the step's
    duration) or the step breakdown's ``input_ms`` (XProf's rule); NaN where it is unknown
    (the host has no input events)."""
    if not len(steps):
        return np.empty(0), ""
    if wait.get("no_input_events"):  # (NaN: unknown, not none; the chart draws no bar)
        return np.full(len(steps), np.nan), "unknown: no input events XProf's rule counts"
    if wait.get("source") != "devices":
        return steps.input_ms.to_numpy(dtype=float), "step-time breakdown"
    dev = active_devices(gpu_utilization)
    sums = dev.groupby([dev.host.astype(str), dev.step])[["input_us", "wall_us"]].sum()
    keys = pd.MultiIndex.from_arrays([steps.host.astype(str), steps.index])
    mine = sums.reindex(keys)
    share = (mine.input_us / mine.wall_us.where(mine.wall_us > 0)).fillna(0.0).to_numpy()
    names = sorted({str(d).replace("/device:", "") for d in dev.device.unique()})
    who = ", ".join(names) if 0 < len(names) <= 3 and dev.host.nunique() == 1 else \
        f"the {len(names)} GPUs active in the steps"
    return share * steps.duration_ms.to_numpy(dtype=float), \
        f"{who} idle while the host fetches input"


_LEVELS = ((HIGHLY_INPUT_BOUND_PCT, "host", "HIGHLY", "Therefore, you should first focus on "
            "reducing the input time."),
           (MODERATELY_INPUT_BOUND_PCT, "both", "MODERATELY", "Therefore, you would need to "
            "reduce both the input time and other time."))
_XPROF_WORDS = {"host": "HIGHLY", "device": "NOT"}


def _xprof_word(xprof: dict) -> str:
    """XProf's classification as its statement words it (its 'both' is MODERATELY or, for
    much 'All Others' time, POTENTIALLY input-bound)."""
    text = xprof.get("input_statement", "")
    return next((w for w in ("HIGHLY", "MODERATELY", "POTENTIALLY", "NOT") if f" {w} " in text),
                _XPROF_WORDS.get(xprof.get("classification"), ""))


def input_verdict(measures: pd.DataFrame, xprof: dict) -> dict:
    """The page's input-bound verdict from the one input-wait measure (``prof.measures``'
    ``input_wait_pct``) with XProf's thresholds: ``classification``, ``statement``, and
    where XProf's rule (the step-time breakdown alone, ``xprof``: its verdicts) classifies
    the program otherwise, ``xprof_statement`` saying so as XProf's."""
    # (the row even where its value is unknown: then the verdict says why)
    row = measures.loc["input_wait_pct"] if "input_wait_pct" in measures.index else None
    if row is None and xprof.get("input_statement") == NO_STEPS:
        # (no steps: no verdict, said as such, not as XProf's "cannot tell where the
        # bottleneck is" above the device figures the page does give)
        idle, steps = get(measures, "device_idle_pct"), get(measures, "step_time_mean_ms")
        over = ("; the device figures are over " + ("its active span" if
                idle["device_count"] == 1 else "each device's active span")) \
            if idle is not None and idle["time"] == "profile" else ""
        # (steps, but none in the breakdown XProf's verdict reads: a pod's first host without
        # a device, or hosts whose steps do not align)
        why = "No steps, so no input-bound verdict" if steps is None else \
            "No input-bound verdict: the step breakdown XProf's verdict reads has no step" + \
            ("; XProf reads the first host's, which has no device"
             if "no breakdown" in str(steps["scope"]) else "")
        return {"classification": "unknown", "rule": "xprof",
                "statement": f"{why} (XProf: '{NO_STEPS}'){over}."}
    if row is None or row["rule"] == "xprof":  # the page's measure is XProf's own
        text = xprof.get("input_statement", "")
        # (on steps inferred here XProf's sentence says so itself; elsewhere a pod's scope,
        # of the figure the statement quotes: its input share, or for POTENTIALLY its 'All
        # Others' share)
        if row is not None and text and INFERRED_FOR_XPROF not in str(row["scope"]):
            text += _aligned_scope(row, float(row["value"])) if _xprof_word(xprof) != \
                "POTENTIALLY" else _aligned_scope(get(measures, "all_other_pct"),
                                                  float(xprof["all_other_pct"]))
        return {"classification": xprof.get("classification", "unknown"), "rule": "xprof",
                "statement": text, "xprof_shares": _xprof_shares(measures, xprof, True)}
    pct, (who, one) = float(row["value"]), device_words(row)
    said = f"{who} wait{'s' * one} for input"
    of = f"of {'its' if one else 'their'} time {scope_tail(row)}"
    level = next((lv for lv in _LEVELS if pct >= lv[0]), None)
    if np.isnan(pct):
        cls, text = "unknown", (f"This page cannot tell whether your program is input-bound: "
                                f"{NO_INPUT_EVENTS}.{_host_wait_words(measures)} {MARK_INPUT}")
    elif level:
        cls, text = level[1], (f"Your program is {level[2]} input-bound: {said} {pct:.1f}% "
                               f"{of}. {level[3]}")
    else:
        cls, text = "device", f"Your program is NOT input-bound: {said} only {pct:.1f}% {of}."
    out = {"classification": cls, "rule": "tfprof", "statement": text,
           "xprof_shares": _xprof_shares(measures, xprof, False)}
    word = _xprof_word(xprof)
    if word and (word == "POTENTIALLY" or xprof.get("classification") != cls):
        out["xprof_statement"] = (
            f"XProf's rule, which reads only the step-time breakdown, calls it {word} "
            f"input-bound: that breakdown counts {xprof['input_pct']:.1f}% of the step time "
            f"waiting for input and {xprof['all_other_pct']:.1f}% as 'All Others' (host time "
            f"in none of its categories, input or Python){_over(measures)}; this page's "
            "verdict reads the devices' own time.")
    return out


def _aligned_scope(row, pct: float) -> str:
    """" (XProf's rule: 38.6% over the 138 steps XProf aligns across 2 hosts (...).)" where
    the measure ``row`` is a pod's (one host's breakdown over the aligned steps, while
    XProf's text says "the total step time sampled"); "" elsewhere."""
    scope = str(row["scope"]) if row is not None else ""
    if "XProf aligns" not in scope:
        return ""
    scope = scope.removesuffix(" (step-time breakdown)").removesuffix(
        " (XProf's step-time breakdown)")
    return f" (XProf's rule: {pct:.1f}% over {scope}.)"


# XProf's other breakdown verdicts: (its statement, its share)
_XPROF_SHARES = (("all_other_statement", "all_other_pct"),
                 ("kernel_launch_statement", "kernel_launch_pct"),
                 ("device_collectives_statement", "device_collectives_pct"))


def _xprof_shares(measures: pd.DataFrame, xprof: dict, xprof_rule: bool) -> list[str]:
    """XProf's other step-breakdown verdicts the page says ('All Others', kernel launch:
    only where the page's input measure is XProf's own, beside whose verdict they are; its
    collectives' always), each with its scope where a pod's breakdown aligns its steps (one
    breakdown, one scope: the 'All Others' measure's)."""
    row = get(measures, "all_other_pct")
    return [xprof[key] + _aligned_scope(row, float(xprof[pct]))
            for key, pct in _XPROF_SHARES
            if xprof.get(key) and (xprof_rule or key == "device_collectives_statement")]


def _over(measures: pd.DataFrame) -> str:
    """" over the 18 steps XProf counts, without ..." where XProf's step-breakdown shares
    leave steps out, or a pod's align them (``all_other_pct``'s scope); "" where they count
    every step."""
    row = get(measures, "all_other_pct")
    scope = str(row["scope"]).removesuffix(" (XProf's step-time breakdown)") if row is not None \
        else ""
    return f" over {scope}" if "XProf counts" in scope or "XProf aligns" in scope else ""


def _host_wait_words(measures: pd.DataFrame) -> str:
    """" GPU:0 idles 77.9% of its time in the 10 steps waiting for kernels the host launches
    late (...)." from ``host_wait_pct``; "" without it."""
    row = get(measures, "host_wait_pct")
    if row is None or not row["value"] >= 0:
        return ""
    who, one = device_words(row)
    return (f" {who} idle{'s' * one} {row['value']:.1f}% of {'its' if one else 'their'} time "
            f"{scope_tail(row)} waiting for kernels the host launches late (any input made in "
            f"Python is part of that host work){idle_part_words(measures, row)}.")


ANALYSES = (Analysis("input_events", host=host_input_events, combine=_input_event_total,
                     shifted=False, host_cost=0.05),
            Analysis("input_wait", combine=input_wait,
                     needs=("steps", "gpu_utilization", "input_events")),)
