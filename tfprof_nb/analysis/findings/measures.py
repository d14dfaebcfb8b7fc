"""The headline measures, each defined once with its scope and its rule, computed once, and
read by every sentence a page prints (cards, verdicts, findings, tab notes, ``tfprof
summary``, ``tp.check``, the monitor): ``prof.measures``, one row per measure.

A row says what the number counts:

* ``time``: ``"steps"`` (inside the profiled steps), ``"profile"`` (the whole profile: each
  device's span from its first to its last activity) or ``"kernels"`` (every kernel run);
* ``devices``: the devices it sums over.  Device measures count the devices *active in the
  steps* (a kernel or op inside some step); a device whose work all ran outside the steps
  (BERT's GPU:4 ran its own step on its own executor 650 ms before the profile's step) idles
  through them for no cause of its own, so it is left out of the totals and named once in
  ``excluded``;
* ``rule``: ``"tfprof"`` where our accounting measures it (the devices' own time:
  :mod:`..gpu.time`), ``"xprof"`` where it is XProf's rule (the step-time breakdown);
  where XProf's rule gives another number for the same question, ``xprof_value`` holds it and
  ``xprof_note`` says why they differ: a page quotes it as XProf's, never as a verdict;
* ``min``/``median``/``max`` (and ``min_of``/``max_of``): its spread over the devices (over
  the steps for step time), beside any figure summed over several.

:data:`DEFINITIONS` names each measure's words (``label``) and unit; :mod:`.measure_words`
reads a row and writes it as every page does, so one measure reads the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...constants import GPU_PLANE_PREFIX, TPU_PLANE_PREFIX
from ..gpu.time import ALL_STREAMS, PROFILE_WINDOW, step_rows
from ..runtime.unit import Analysis
from ..steps.per_step import judged_steps
from ..steps.xprof_counted import xprof_count
from ..tf.input_pipeline import bottleneck_verdicts
from .tpu_figures import device_figures

__all__ = ["ANALYSES", "DEFINITIONS", "MARK_INPUT", "MEASURE_COLUMNS", "NO_INPUT_EVENTS",
           "Definition", "active_device_rows", "device_label", "kind_rows", "measures",
           "step_count_words", "steps_words", "wait_and_duty", "xprof_steps_words",
           "INFERRED_FOR_XPROF"]


@dataclass(frozen=True)
class Definition:
    """A measure's words and unit (``"%"`` or ``"ms"``), its rule and what it counts."""

    label: str
    unit: str
    rule: str
    about: str


DEFINITIONS = {
    "step_time_mean_ms": Definition("Average step time", "ms", "xprof",
                                    "the mean duration of the profiled steps"),
    "step_time_median_ms": Definition("Median step time", "ms", "tfprof",
                                      "the median duration of the profiled steps (what "
                                      "tp.check, tp.compare and tfprof diff judge)"),
    "input_wait_pct": Definition("Waiting for input", "%", "tfprof",
                                 "the share of step time the devices idle while the host "
                                 "fetches input (without devices: the step breakdown's)"),
    "device_idle_pct": Definition("Devices idle in the steps", "%", "tfprof",
                                  "the share of the devices' step time with nothing running"),
    "duty_cycle_pct": Definition("Device duty cycle", "%", "xprof",
                                 "the devices' busy time over their active spans"),
    "host_wait_pct": Definition("Waiting for the host's late launches", "%", "tfprof",
                                "the share of step time the GPUs idle until a kernel the "
                                "host launched late"),
    "launch_gap_pct": Definition("Idle in short launch gaps", "%", "tfprof",
                                 "the share of step time in gaps of at most 10 us between "
                                 "kernels"),
    "copy_sync_pct": Definition("Idle in copies and host synchronisation", "%", "tfprof",
                                "the share of step time the GPUs copy or wait for the host "
                                "to synchronise"),
    "dependency_wait_pct": Definition("Idle waiting on dependencies", "%", "tfprof",
                                      "the share of step time a queued kernel waits (events, "
                                      "other streams, untraced work)"),
    "kernel_launch_pct": Definition("Kernel launch (XProf's step breakdown)", "%", "xprof",
                                    "XProf's step-time category 'Kernel Launch'"),
    "all_other_pct": Definition("'All Others' (XProf's step breakdown)", "%", "xprof",
                                "the steps' host time XProf's breakdown puts in no category "
                                "('All Others': Python and framework code between the ops it "
                                "counts)"),
    "small_kernels_pct": Definition("Kernel runs under 10 us", "%", "tfprof",
                                    "the share of kernel runs lasting under 10 us"),
}

# device_idle_pct's label on a profile without steps
IDLE_WITHOUT_STEPS = "Devices idle in their active spans"
IDLE_WITHOUT_STEPS_ONE = "Device idle in its active span"  # (one device)

MEASURE_COLUMNS = ["label", "value", "unit", "time", "devices", "device_count", "excluded",
                   "scope", "when", "rule", "min", "median", "max", "min_of", "max_of",
                   "xprof_value", "xprof_note", "about"]
_CAUSES = {"host_wait_pct": "host_bound_us", "launch_gap_pct": "launch_bound_us",
           "copy_sync_pct": "sync_memcpy_us", "dependency_wait_pct": "other_us"}


def device_label(host, device, hosts: int) -> str:
    """A device as pages name it: ``GPU:6``; with several hosts ``host GPU:6``."""
    name = str(device).removeprefix("/device:")
    return name if hosts <= 1 else f"{host} {name}"


def kind_rows(util: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """The rows (stream "all") over the steps (or the profile window) of the devices whose
    name starts with ``prefix`` and that are busy in some step."""
    if not len(util):
        return util
    dev = step_rows(util[(util.stream == ALL_STREAMS)
                         & util.device.astype(str).str.startswith(prefix)])
    return dev[dev.groupby(["host", "device"], observed=True).busy_us.transform("sum") > 0]


def active_device_rows(util: pd.DataFrame) -> pd.DataFrame:
    """The device rows (stream "all") over the steps (over each device's active span without
    steps) of the devices active in them: the GPUs', else the TPUs'."""
    if not len(util):
        return util
    gpus = kind_rows(util, GPU_PLANE_PREFIX)
    return gpus if len(gpus) else kind_rows(util, TPU_PLANE_PREFIX)


def _row(key: str, value, time: str, names=(), excluded=(), scope: str = "",
         spread: dict | None = None, xprof=None, note: str = "", rule: str | None = None,
         label: str | None = None, when: str = "") -> dict:
    d = DEFINITIONS.get(key)
    unit = d.unit if d else ("ms" if key.endswith("_ms") else "%")
    return {"key": key, "label": label or d.label, "value": _num(value), "unit": unit,
            "time": time, "devices": ", ".join(names), "device_count": len(names),
            "excluded": ", ".join(excluded), "scope": scope, "when": when or scope,
            "rule": rule or d.rule,
            **(spread or {}), "xprof_value": _num(xprof), "xprof_note": note,
            "about": d.about if d else ""}


def _num(value) -> float:
    return float("nan") if value is None else float(value)


def _spread(values: pd.Series) -> dict:
    """min/median/max of per-device (or per-step) values and whose they are."""
    values = values.dropna()
    if len(values) < 2:
        return {}
    return {"min": float(values.min()), "median": float(values.median()),
            "max": float(values.max()), "min_of": str(values.idxmin()),
            "max_of": str(values.idxmax())}


@dataclass
class _Devices:
    """The devices a device measure sums over, and what it leaves out."""

    rows: pd.DataFrame  # their rows over the steps (or active spans)
    sums: pd.DataFrame  # per device label: wall_us, busy_us, idle_us and each cause
    excluded: list
    time: str  # "steps" or "profile"
    kind: str  # "GPU" or "TPU"

    @property
    def names(self) -> list:
        return list(self.sums.index)

    def share(self, column: str) -> float | None:
        wall = float(self.sums.wall_us.sum())
        return 100 * float(self.sums[column].sum()) / wall if wall > 0 else None

    def spread(self, column: str) -> dict:
        return _spread(100 * self.sums[column] / self.sums.wall_us.where(self.sums.wall_us > 0))


def _devices(util: pd.DataFrame, hosts: int) -> _Devices | None:
    rows = active_device_rows(util)
    if not len(rows):
        return None
    kind = "GPU" if str(rows.device.iloc[0]).startswith(GPU_PLANE_PREFIX) else "TPU"
    prefix = GPU_PLANE_PREFIX if kind == "GPU" else TPU_PLANE_PREFIX
    labels = [device_label(h, d, hosts) for h, d in zip(rows.host, rows.device)]
    cols = ["wall_us", "busy_us", "idle_us", "input_us", *_CAUSES.values()]
    sums = rows[cols].groupby(pd.Index(labels, name="device"), sort=False).sum()
    everyone = util[(util.stream == ALL_STREAMS) & util.device.astype(str).str.startswith(prefix)]
    others = {device_label(h, d, hosts) for h, d in zip(everyone.host, everyone.device)}
    time = "profile" if (rows.step == PROFILE_WINDOW).all() else "steps"
    return _Devices(rows, sums, sorted(others - set(sums.index)), time, kind)


def _names(names: list, kind: str) -> str:
    return ", ".join(names) if len(names) <= 4 else f"{len(names)} {kind}s"


def step_count_words(steps: pd.DataFrame) -> tuple[str, int]:
    """How many steps, as every page counts them: ("10", 1) on one host; on a pod each
    host's count ("10", or "140 to 143" where they differ) and the number of hosts.  Hosts
    that train apart number their steps apart (step 1500 of one is 1442 of the other), so a
    pod's count is never of distinct step numbers."""
    if "host" not in steps or not len(steps) or steps.host.nunique() < 2:
        return f"{len(steps)}", 1
    each = steps.groupby(steps.host.astype(str), sort=False).size()
    low, high = int(each.min()), int(each.max())
    return (f"{low}" if low == high else f"{low} to {high}"), len(each)


def steps_words(steps: pd.DataFrame) -> str:
    """"the 10 steps", "the step", on a pod "the 10 steps of each of 2 hosts (20 host
    steps)" (the figures are over the host steps, each host's rows)."""
    count, hosts = step_count_words(steps)
    words = "the step" if count == "1" else f"the {count} steps"
    return words if hosts < 2 else f"{words} of each of {hosts} hosts ({len(steps)} host steps)"


# the steps XProf's rule is applied to where they were inferred (XProf itself finds none)
INFERRED_FOR_XPROF = "inferred here; XProf itself finds no steps"


def xprof_steps_words(steps: pd.DataFrame, breakdown: bool = False) -> str:
    """The steps XProf's step-time figures count, in words: "the 18 steps XProf counts,
    without the first and last of the 20" (or only the first, or the last, where the window
    cut the other); all of them: :func:`steps_words`; inferred ones: that and
    :data:`INFERRED_FOR_XPROF`; a pod's: :func:`_pod_words` (``breakdown``: for a share of
    XProf's step breakdown, which is one host's over its own time)."""
    if len(steps) and str(steps.source.iloc[0]).startswith("inferred"):
        return f"{steps_words(steps)} {INFERRED_FOR_XPROF}"
    xprof = xprof_count(steps)
    if xprof.pod:
        return _pod_words(xprof, breakdown)
    counted = xprof.rows
    if len(counted) == len(steps):
        return steps_words(steps)
    kept = np.asarray(xprof.counted, bool)  # (by place: a step number may come twice)
    ends = " and ".join(w for w, gone in (("first", not kept[0]), ("last", not kept[-1]))
                        if gone)
    return f"{steps_words(counted)} XProf counts, without the {ends} of the {len(steps)}"


def _pod_words(xprof, breakdown: bool = False) -> str:
    """"the 8 steps XProf aligns across 2 hosts (...)": which steps, and whose time and
    breakdown they take (see steps.xprof_counted); ``breakdown``: the words of a share of
    the breakdown, one host's time over its own steps' time (not the slowest host's)."""
    n, k = len(xprof.step_ms), len(xprof.hosts)
    steps = "no step" if not n else "the step" if n == 1 else f"the {n} steps"
    where = f"XProf aligns across {k} hosts" if k > 1 else f"XProf counts on {xprof.hosts[0]}"
    parts = ["without each host's first and last where it has more than five"]
    if xprof.left_out:
        parts.append(f"{', '.join(xprof.left_out)} left out: no device")
    if k > 1 and n and not breakdown:
        parts.append("a step's time is its slowest host's")
    host = xprof.rows.host.iloc[0] if n and len(xprof.rows) else None
    if n and host is None:
        parts.append("no breakdown: XProf reads the first host's, which has no device")
    elif n:
        parts.append(f"{host}'s breakdown, over its own time in them" if breakdown
                     else f"the breakdown {host}'s")
    return f"{steps} {where} ({'; '.join(parts)})"


def _active_span(devs: _Devices, each: str) -> str:
    """"its active span" for one device, else "each {each} active span"."""
    return "its active span" if len(devs.names) == 1 else f"each {each} active span"


def _when(devs: _Devices, steps: pd.DataFrame) -> str:
    if devs.time == "steps":
        return f"in {steps_words(steps)}"
    span = _active_span(devs, "device's")
    return f"over {span} (the profile has no steps)"


def _device_scope(devs: _Devices, steps: pd.DataFrame) -> str:
    """"GPU:6, in the step" (whom it leaves out is ``excluded``: :func:`excluded_note`)."""
    return f"{_names(devs.names, devs.kind)}, {_when(devs, steps)}"


def _step_rows(steps: pd.DataFrame) -> list[dict]:
    if steps.empty:
        return []
    # the mean is XProf's (over the steps it counts), the median ours (over every step)
    xprof = xprof_count(steps)
    # (steps inferred from a repeated program are ours: XProf has no step time there)
    inferred = str(steps.source.iloc[0]).startswith("inferred")
    counted = _slowest_rows(steps, xprof)
    spread = _step_spread(counted)
    spread.pop("median", None)  # (the median is a measure of its own, over every step)
    mean = _row("step_time_mean_ms", xprof.step_ms.mean(), "steps",
                scope=f"over {xprof_steps_words(steps)}",
                spread=spread, rule="tfprof" if inferred else None)
    # (the median is of the steps tp.check judges: a pod's each at its slowest host)
    judged, words = judged_steps(steps)
    return [mean, _row("step_time_median_ms", judged.duration_ms.astype(float).median(),
                       "steps", scope=f"over {words}", spread=_step_spread(judged))]


def _slowest_rows(steps: pd.DataFrame, xprof) -> pd.DataFrame:
    """The step rows XProf's mean counts, each step's as its time is (``xprof``:
    :func:`xprof_count`'s): on a pod, each aligned step's slowest host's row (its own
    number), else the rows its figures read."""
    if len(xprof.rows) != len(xprof.step_ms):
        return xprof.rows.iloc[:0]
    if not xprof.pod or not xprof.aligned or len(xprof.aligned) < 2:
        return xprof.rows.assign(duration_ms=xprof.step_ms.to_numpy())
    at = np.array(list(xprof.aligned.values()), dtype=np.int64)  # (worker, aligned step)
    times = steps.duration_ms.to_numpy(dtype=float)[at]
    return steps.iloc[at[np.argmax(times, axis=0), np.arange(at.shape[1])]]


def _step_spread(steps: pd.DataFrame) -> dict:
    """The steps' spread (:func:`_spread`), its extremes named "step N" ("on HOST" where the
    table has several hosts): the names are made for those two steps alone."""
    out = _spread(pd.Series(steps.duration_ms.astype(float).to_numpy()))
    several = "host" in steps and steps.host.nunique() > 1
    for key in ("min_of", "max_of"):
        if key in out:
            at = int(out[key])
            out[key] = f"step {steps.index[at]}" + (f" on {steps.host.iloc[at]}" if several
                                                     else "")
    return out


# why the input wait is unknown where the host has no input events (.input_wait): the
# measure's scope, the verdict's reason
NO_INPUT_EVENTS = ("the host has none of the events XProf's rule counts as input (tf.data's "
                   "IteratorGetNext, MemcpyHtoD copies, infeed; not JAX's MemcpyH2D, which "
                   "it counts as compute), so input made another way (a Python loader, "
                   "numpy, device_put) is not told apart from the host's other work")
# how a capture makes that input measurable (tfprof_nb.capturing.backends.INPUT_MARKER)
MARK_INPUT = ("To have it measured, fetch each batch through tp.Capture's or tp.Monitor's "
              "iterate(), or inside their input() block: the fetch is then traced as input.")


def _input_row(wait: dict, devs: _Devices | None, steps: pd.DataFrame) -> list[dict]:
    if not wait:
        return []
    over = xprof_steps_words(steps, breakdown=True)  # (the steps XProf's figure counts)
    if wait["source"] != "devices" or devs is None:
        return [_row("input_wait_pct", wait["pct"], "steps", rule="xprof",
                     scope=f"{over} (step-time breakdown)")]
    if wait.get("no_input_events"):  # (unknown: the module doc of .input_wait)
        return [_row("input_wait_pct", None, "steps", devs.names, devs.excluded,
                     f"{_device_scope(devs, steps)}: {NO_INPUT_EVENTS}", None,
                     wait["steps_pct"], f"XProf's step breakdown, over {over}",
                     when=_when(devs, steps))]
    differs = f"{wait['pct']:.1f}" != f"{wait['steps_pct']:.1f}"
    note = ("XProf's step breakdown counts as input on GPUs only MemcpyHToD copies and the "
            "device waiting on the host, not the devices' idle time while the host fetches "
            f"input; it counts {over}") if differs else ""
    return [_row("input_wait_pct", wait["pct"], "steps", devs.names, devs.excluded,
                 _device_scope(devs, steps), devs.spread("input_us"),
                 wait["steps_pct"] if differs else None, note,
                 when=_when(devs, steps))]


def _idle_rows(devs: _Devices | None, steps: pd.DataFrame,
               tpu_idle: float | None) -> list[dict]:
    """Device idle time and each cause of it (GPUs: host, launch gaps, copies, dependencies;
    input is :func:`_input_row`'s) over the devices active in the steps."""
    if devs is None:
        return []
    scope, when = _device_scope(devs, steps), _when(devs, steps)
    note = ("XProf's overview counts TPU idle time over the whole profile, time outside the "
            "steps included") if tpu_idle is not None else ""
    # (without steps the measure is over each device's active span, and its label says so)
    one = len(devs.names) == 1
    if devs.time == "profile":
        label = IDLE_WITHOUT_STEPS_ONE if one else IDLE_WITHOUT_STEPS
    else:  # ("Device idle in the step" for one device and one step)
        label = f"{'Device' if one else 'Devices'} idle in the step{'s' * (len(steps) != 1)}"
    out = [_row("device_idle_pct", devs.share("idle_us"), devs.time, devs.names, devs.excluded,
                scope, devs.spread("idle_us"), tpu_idle, note, when=when, label=label)]
    if devs.kind == "GPU":
        out += [_row(key, devs.share(col), devs.time, devs.names, devs.excluded, scope,
                     devs.spread(col), when=when) for key, col in _CAUSES.items()]
    return out


def _duty_row(duty: pd.DataFrame, devs: _Devices | None, hosts: int) -> list[dict]:
    """Busy time over active spans (the whole profile) of the devices active in the steps
    (of every device with activity, without steps); XProf's figure (TPUs: its overview shows
    none on GPUs) counts them all."""
    xprof = duty.attrs.get("device_duty_cycle_pct") if len(duty) else None
    if xprof is None or devs is None:
        return []
    labels = pd.Index([device_label(h, d, hosts) for h, d in zip(duty.host, duty.device)])
    mine = duty[labels.isin(devs.names)]
    span = float(mine.span_us.sum())
    if span <= 0:
        return []
    pct = 100 * float(mine.busy_us.sum()) / span
    if devs.kind != "TPU":  # (XProf's overview gives a duty cycle on TPUs only)
        xprof = None
    differs = xprof is not None and f"{pct:.1f}" != f"{xprof:.1f}"
    note = (f"XProf sums every device with activity ({len(duty)}), those idle through the "
            "steps too") if differs else ""
    span = _active_span(devs, "one's")
    scope = f"{_names(devs.names, devs.kind)}, over {span} (whole profile)"
    spread = _spread(pd.Series(mine.duty_cycle_pct.to_numpy(dtype=float),
                               index=labels[labels.isin(devs.names)]))
    return [_row("duty_cycle_pct", pct, "profile", devs.names, devs.excluded, scope, spread,
                 xprof if differs else None, note, "xprof" if xprof is not None and not
                 differs else "tfprof",
                 when=f"over {span} (whole profile)")]


def _xprof_rows(steps: pd.DataFrame, device_type: str) -> list[dict]:
    """XProf's step-breakdown shares that findings quote: 'Kernel Launch', 'All Others'
    (none where its breakdown has no step)."""
    if steps.empty or xprof_count(steps).rows.empty:
        return []
    verdict = bottleneck_verdicts(steps)
    scope = f"{xprof_steps_words(steps, breakdown=True)} (XProf's step-time breakdown)"
    out = [_row("all_other_pct", verdict["all_other_pct"], "steps", scope=scope)]
    if device_type == "GPU":
        out.append(_row("kernel_launch_pct", verdict["kernel_launch_pct"], "steps",
                        scope=scope))
    return out


def _kernel_rows(duty: pd.DataFrame, devs: _Devices | None) -> list[dict]:
    if devs is None or devs.kind != "GPU" or "kernels" not in duty or not duty.kernels.sum():
        return []
    pct = 100 * float(duty.kernels_under_10us.sum()) / float(duty.kernels.sum())
    return [_row("small_kernels_pct", pct, "kernels",
                 scope=f"all {int(duty.kernels.sum()):,} kernel runs of the profile")]


def _precision_row(precision: dict, steps: pd.DataFrame) -> list[dict]:
    if not precision:
        return []
    # (a share of a part of the devices' time: the scope says of which part)
    scope = ("the share of the matrix multiplications' time with 16-bit operands (their "
             "operand types in the HLO)") if precision["source"] == "hlo" else \
        (f"the share of the device compute time in {xprof_steps_words(steps)} that is 16 bit "
         "(XProf's step-time breakdown)")
    xprof = precision.get("xprof_pct16")
    differs = xprof is not None and f"{xprof:.1f}" != f"{precision['pct16']:.1f}"
    note = (f"its overview's 16-bit share of the device compute in {xprof_steps_words(steps)}, "
            "from kernel names, which it reads as 16 bit only for fp16 or half, never bf16") \
        if differs else ""
    return [_row(precision["evidence_key"], precision["pct16"], "steps", scope=scope,
                 label=precision["label"], xprof=xprof if differs else None, note=note,
                 rule="tfprof" if precision["source"] == "hlo" else "xprof")]


_TPU_FIGURES = (("mxu_utilization_pct", "MXU utilisation"),
                ("hbm_utilization_pct", "HBM utilisation"),
                ("flop_rate_utilization_pct", "FLOP rate relative to the roofline"),
                ("hbm_bw_utilization_pct", "HBM bandwidth of its peak"))


# what a TPU figure is a share of, where its label alone does not say
_TPU_OF = {"flop_rate_utilization_pct": ": the program's FLOP rate over the rate the roofline "
           "allows at its arithmetic intensity (XProf's rule), not over the chip's peak; "
           "where the program is memory-bound it equals the bandwidth share"}


# the figures XProf's roofline gives over the whole profile (its Total program row), which its
# overview counts over the ops of complete steps only
_ROOFLINE_FIGURES = ("flop_rate_utilization_pct", "hbm_bw_utilization_pct")
_OVERVIEW_WITHOUT_STEPS = ("its overview's, which counts only the ops of complete steps and "
                           "finds no steps here; the figure above is its roofline tool's Total "
                           "row")


def _tpu_rows(figures: dict, steps: pd.DataFrame) -> list[dict]:
    scope = f"{figures['cores']} TPU cores, whole profile"
    no_steps = not len(steps) or str(steps.source.iloc[0]).startswith("inferred")
    rows = []
    for key, label in _TPU_FIGURES:
        if pd.isna(figures.get(key)):
            continue
        roofline = key in _ROOFLINE_FIGURES
        where = " (XProf's roofline, its Total program row)" if roofline else ""
        rows.append(_row(key, figures[key], "profile",
                         scope=scope + where + _TPU_OF.get(key, ""), label=label, rule="xprof",
                         xprof=0.0 if roofline and no_steps else None,
                         note=_OVERVIEW_WITHOUT_STEPS if roofline and no_steps else ""))
    return rows


def measures(parts: dict, steps: pd.DataFrame, gpu_utilization: pd.DataFrame,
             duty_cycle: pd.DataFrame, input_wait: dict, precision: dict, environment: dict,
             tpu=None, xla=None, roofline=None, host_ops=None) -> pd.DataFrame:
    """The headline measures of a profile, one row each (see the module's docstring)."""
    hosts = len(environment["hosts"])
    devs = _devices(gpu_utilization, hosts)
    duty = duty_cycle.attrs.get("device_duty_cycle_pct") if len(duty_cycle) else None
    figures = device_figures(tpu, xla, roofline, host_ops, duty) if tpu is not None else {}
    tpu_idle = figures.get("idle_pct") if figures else None
    rows = (_step_rows(steps) + _input_row(input_wait, devs, steps)
            + _idle_rows(devs, steps, tpu_idle if pd.notna(tpu_idle) else None)
            + _duty_row(duty_cycle, devs, hosts)
            + _xprof_rows(steps, environment["device_type"]) + _kernel_rows(duty_cycle, devs)
            + _precision_row(precision, steps) + (_tpu_rows(figures, steps) if figures else []))
    return _table(rows)


def wait_and_duty(steps: pd.DataFrame, gpu_utilization: pd.DataFrame,
                  duty_cycle: pd.DataFrame, input_wait: dict, hosts: int) -> pd.DataFrame:
    """The ``input_wait_pct`` and ``duty_cycle_pct`` rows of :func:`measures` alone (the same
    rows, from the results they need; ``hosts``: the profile's number of hosts): what a
    monitor's window shows, without the analyses the other measures need."""
    devs = _devices(gpu_utilization, hosts)
    return _table(_input_row(input_wait, devs, steps) + _duty_row(duty_cycle, devs, hosts))


def _table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["key", *MEASURE_COLUMNS]).set_index("key")


ANALYSES = (Analysis("measures", combine=measures,
                     needs=("steps", "gpu_utilization", "duty_cycle", "input_wait", "precision",
                            "environment", "tpu", "xla", "roofline", "host_ops")),)
