"""What each limit measures, read from the tables and shares the views show (never a second
computation of a number a card or a finding already quotes):

* step time: ``prof.steps.duration_ms`` (its median by default; the overview's average is
  its mean);
* input wait: ``prof.result("input_wait")`` (:mod:`..analysis.findings.input_wait`), the
  number of the overview's "Waiting for input" card and of the ``input_bound`` finding;
* device duty cycle: ``prof.duty_cycle.attrs["device_duty_cycle_pct"]``, the overview's;
* device idle and host-bound time: the device rows (stream ``"all"``) of
  ``prof.gpu_utilization`` over the steps (over each device's active span without steps):
  on GPUs the rows of :func:`..analysis.findings.input_wait.active_devices`, which the
  ``gpu_idle`` and ``launch_bound`` findings sum; on TPUs their rows alike, as the device
  utilisation tab shows them (the overview's TPU idle figure is over the whole profile, time
  outside the steps included); host-bound time is measured on GPUs only;
* kernel launch: the step breakdown's share
  (:func:`..analysis.tf.input_pipeline.bottleneck_verdicts`, as the overview computes it);
* memory peak: ``prof.memory_summary.peak_bytes_in_use``, the largest allocator's.

Each measure returns a :class:`Measure`: the value (None when the profile lacks it, with the
reason as evidence) and evidence in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..analysis.findings.evidence import CAUSE_WORDS
from ..analysis.findings.input_wait import active_devices
from ..analysis.gpu.gpu_time import ALL_STREAMS, PROFILE_WINDOW, step_rows
from ..analysis.tf.input_pipeline import bottleneck_verdicts
from ..analysis.tf.memory import LABELS
from ..constants import TPU_PLANE_PREFIX
from ..plot.memory import human_bytes
from .regression import CONFIDENCE, step_regression

__all__ = ["Measure", "Subject", "STATISTICS", "device_rows", "duty_cycle", "host_bound", "idle",
           "input_wait", "kernel_launch", "memory_peak", "per_step", "regression", "step_time"]

# the statistics of step time a limit may take (name: function of the step times)
STATISTICS = {"median": np.median, "mean": np.mean, "p90": lambda x: np.percentile(x, 90),
              "p95": lambda x: np.percentile(x, 95), "p99": lambda x: np.percentile(x, 99),
              "max": np.max}
NO_STEPS = ("the profile has no steps (no step markers, no repeated XLA program on a device "
            "and no tf.function or jitted call to infer them from)")


@dataclass
class Subject:
    """What is checked: a profile (``prof``) or a steps table alone (``prof`` None)."""

    label: str
    steps: pd.DataFrame
    prof: object = None

    def needs_profile(self, what: str) -> "Measure | None":
        """An unknown measure when only a steps table was given, else None."""
        if self.prof is not None:
            return None
        return Measure(None, f"a steps table has no {what}: give the profile itself")


@dataclass
class Measure:
    """A measured value (None: unknown, ``evidence`` says why) and its evidence in words;
    ``details``: numbers for JSON; ``passed`` decides instead of the threshold when set."""

    value: float | None
    evidence: str
    details: dict = field(default_factory=dict)
    passed: bool | None = None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _hosts(steps: pd.DataFrame) -> int:
    return int(steps.host.nunique()) if "host" in steps else 1


def per_step(steps: pd.DataFrame) -> pd.DataFrame:
    """One row per step: on a pod, whose steps table has a row per step and host, each
    step's slowest host's row (the pod's step lasts until its last host is done), so that a
    step counts once however many hosts ran it."""
    if _hosts(steps) <= 1 or steps.index.is_unique:
        return steps
    order = np.argsort(-steps.duration_ms.to_numpy(dtype=float), kind="stable")
    first = ~pd.Index(steps.index[order]).duplicated()
    return steps.iloc[np.sort(order[first])]


def _steps_words(steps: pd.DataFrame) -> str:
    """"8 steps (source: markers)": how many steps (on a pod: "8 steps of 2 hosts, each its
    slowest host's time"), and where they come from."""
    n, hosts = len(steps), _hosts(steps)
    words = _count(n, "step") + (f" of {hosts} hosts, each its slowest host's time"
                                 if hosts > 1 else "")
    return f"{words} (source: {steps.source.iloc[0]})" if "source" in steps and n else words


def _step_names(steps: pd.DataFrame, rows) -> str:
    """The steps at positions ``rows``: "step 3", "steps 0, 4", on a pod "step 3 on host"."""
    numbers = [str(steps.index[i]) for i in rows]
    if _hosts(steps) > 1:
        numbers = [f"{k} on {h}" for k, h in zip(numbers, steps.host.iloc[list(rows)])]
    return f"step{'s' * (len(numbers) > 1)} {', '.join(numbers)}"


def step_time(subject: Subject, statistic: str, threshold: float) -> Measure:
    """A statistic of the step times (``steps.duration_ms``; on a pod each step's slowest
    host's), in ms."""
    steps = per_step(subject.steps)
    if steps.empty:
        return Measure(None, NO_STEPS if subject.prof is not None else "the steps table is "
                       "empty")
    d = steps.duration_ms.astype(float).to_numpy()
    value = float(STATISTICS[statistic](d))
    over = np.flatnonzero(d > threshold)
    others = [f"{k} {v:.4g}" for k, v in (("median", np.median(d)), ("mean", d.mean()))
              if k != statistic]
    words = (f"{statistic} of {_steps_words(steps)}: {value:.4g} ms ({', '.join(others)}, "
             f"slowest {_step_names(steps, [int(d.argmax())])}: {d.max():.4g} ms); "
             f"{len(over)} of {_count(len(d), 'step')} over {threshold:g} ms")
    if 0 < len(over) <= 5:
        words += f" ({_step_names(steps, over)})"
    return Measure(value, words, {"statistic": statistic, "steps": len(d),
                                  "median_ms": float(np.median(d)), "mean_ms": float(d.mean()),
                                  "max_ms": float(d.max()), "steps_over": len(over)})


def input_wait(subject: Subject) -> Measure:
    """The share of step time waiting for input: the overview card's and the ``input_bound``
    finding's number (:func:`..analysis.findings.input_wait.input_wait`)."""
    missing = subject.needs_profile("input accounting")
    if missing:
        return missing
    wait = subject.prof.result("input_wait")
    if not wait:
        return Measure(None, NO_STEPS)
    pct = float(wait["pct"])
    if wait["source"] == "devices":
        words = (f"the GPUs wait for input {pct:.1f}% of their step time (their own "
                 "accounting: idle while the host fetches input before launching the next "
                 f"kernel); the step-time breakdown, XProf's rule, counts {wait['steps_pct']:.1f}%")
    else:
        steps = subject.steps
        share = 100 * steps.input_ms / steps.duration_ms.where(steps.duration_ms > 0)
        words = (f"steps wait for input {pct:.1f}% of the step time (input_ms over "
                 f"duration_ms, {_count(len(steps), 'step')})")
        if share.notna().any():
            top = int(np.nanargmax(share.to_numpy()))
            words += f"; most in {_step_names(steps, [top])}: {share.iloc[top]:.1f}%"
    return Measure(pct, words, {"source": wait["source"],
                                "steps_pct": float(wait["steps_pct"])})


def _no_device(subject: Subject) -> str:
    env = subject.prof.result("environment")
    if env["device_type"] == "CPU":
        return "no GPU or TPU in this profile (CPU only)"
    return f"no {env['device_type']} of this profile was active"


def duty_cycle(subject: Subject) -> Measure:
    """The devices' busy time over their active spans, summed: the overview's device duty
    cycle (``prof.duty_cycle.attrs``)."""
    missing = subject.needs_profile("device activity")
    if missing:
        return missing
    table = subject.prof.duty_cycle
    pct = table.attrs.get("device_duty_cycle_pct")
    if pct is None:
        return Measure(None, _no_device(subject))
    low = table.loc[table.duty_cycle_pct.idxmin()]
    words = (f"devices busy {pct:.1f}% of their active spans (first to last activity) summed "
             f"over {_count(len(table), 'device')}; least busy: "
             f"{_device_name(subject, low)} at {low.duty_cycle_pct:.1f}%")
    return Measure(float(pct), words, {"devices": len(table)})


def _device_name(subject: Subject, row) -> str:
    return str(row.device) if len(subject.prof.hosts) <= 1 else f"{row.host} {row.device}"


def device_rows(util: pd.DataFrame, gpus_only: bool = False) -> pd.DataFrame:
    """The devices' own rows (stream "all") over the steps, or over each device's active span
    without steps: the GPUs' of :func:`active_devices`, else the TPUs' likewise (devices with
    some busy time)."""
    dev = active_devices(util)
    if len(dev) or gpus_only or not len(util):
        return dev
    tpu = step_rows(util[(util.stream == ALL_STREAMS)
                         & util.device.astype(str).str.startswith(TPU_PLANE_PREFIX)])
    return tpu[tpu.groupby(["host", "device"]).busy_us.transform("sum") > 0]


def _span_words(dev: pd.DataFrame, devices: int) -> str:
    whose = "its" if devices == 1 else "their"
    return f"{whose} active span (the profile has no steps)" \
        if (dev.step == PROFILE_WINDOW).all() else f"{whose} step time"


def _by_device(subject: Subject, dev: pd.DataFrame, column: str) -> tuple[str, float]:
    """The device with the largest share of ``column`` in its wall time, and that share."""
    sums = dev.groupby(["host", "device"], sort=False, observed=True)[[column, "wall_us"]].sum()
    share = 100 * sums[column] / sums.wall_us.where(sums.wall_us > 0)
    host, device = share.idxmax()
    name = str(device) if len(subject.prof.hosts) <= 1 else f"{host} {device}"
    return name, float(share.max())


def _device_share(subject: Subject, column: str, gpus_only: bool):
    """(rows, share of ``column`` in their wall time in %) or an unknown Measure."""
    missing = subject.needs_profile("device time accounting")
    if missing:
        return missing
    dev = device_rows(subject.prof.gpu_utilization, gpus_only)
    wall = float(dev.wall_us.sum()) if len(dev) else 0.0
    if wall <= 0:
        env = subject.prof.result("environment")
        if gpus_only and env["device_type"] == "TPU":
            return Measure(None, "this profile's devices are TPUs: host-bound time is "
                           "measured on GPUs (late kernel launches)")
        return Measure(None, _no_device(subject))
    return dev, 100 * float(dev[column].sum()) / wall


def idle(subject: Subject) -> Measure:
    """The devices' idle share of their step time (of their active span without steps), from
    ``prof.gpu_utilization``'s device rows (the ``gpu_idle`` finding's number on GPUs)."""
    got = _device_share(subject, "idle_us", gpus_only=False)
    if isinstance(got, Measure):
        return got
    dev, pct = got
    devices = dev.groupby(["host", "device"], observed=True).ngroups
    name, worst = _by_device(subject, dev, "idle_us")
    causes = dev[[f"{c}_us" for c in CAUSE_WORDS]].sum()
    top = str(causes.idxmax())
    top_pct = 100 * float(causes[top]) / float(dev.wall_us.sum())
    words = (f"{_count(devices, 'device')} idle {pct:.1f}% of {_span_words(dev, devices)}; "
             f"most idle: {name} at {worst:.1f}%; largest cause: "
             f"{CAUSE_WORDS[top.removesuffix('_us')]} ({top_pct:.1f}%)")
    return Measure(pct, words, {"devices": devices, "top_cause": top.removesuffix("_us"),
                                "top_cause_pct": top_pct})


def host_bound(subject: Subject) -> Measure:
    """The GPUs' time idle waiting for launches that come late from a busy host, in % of
    their step time (the ``launch_bound`` finding's host gaps)."""
    got = _device_share(subject, "host_bound_us", gpus_only=True)
    if isinstance(got, Measure):
        return got
    dev, pct = got
    name, worst = _by_device(subject, dev, "host_bound_us")
    devices = dev.groupby(["host", "device"], observed=True).ngroups
    words = (f"{_count(devices, 'GPU')} idle waiting for the host's late launches "
             f"{pct:.1f}% of {_span_words(dev, devices)}; most: {name} at {worst:.1f}%")
    return Measure(pct, words)


def kernel_launch(subject: Subject) -> Measure:
    """The step breakdown's kernel-launch share of step time, as the overview computes it."""
    missing = subject.needs_profile("devices")
    if missing:
        return missing
    if subject.steps.empty:
        return Measure(None, NO_STEPS)
    if subject.prof.result("environment")["device_type"] == "CPU":
        return Measure(None, _no_device(subject) + ": no kernels are launched")
    verdict = bottleneck_verdicts(subject.steps)
    pct = float(verdict["kernel_launch_pct"])
    words = (f"kernel launch takes {pct:.1f}% of the step time in the step-time breakdown "
             f"({_count(len(subject.steps), 'step')})")
    if verdict.get("kernel_launch_statement"):
        words += f"; {verdict['kernel_launch_statement']}"
    return Measure(pct, words)


def memory_peak(subject: Subject) -> Measure:
    """The largest peak of memory in use of any allocator (``prof.memory_summary``)."""
    missing = subject.needs_profile("memory events")
    if missing:
        return missing
    summary = subject.prof.memory_summary
    if summary.empty:
        return Measure(None, "no memory events in this profile (on CPU only some allocators "
                       "and workloads record them)")
    row = summary.loc[summary.peak_bytes_in_use.idxmax()]
    peak = int(row.peak_bytes_in_use)
    name = summary.attrs.get(LABELS, {}).get((str(row.host), str(row.allocator)),
                                             str(row.allocator))
    if len(subject.prof.hosts) > 1:
        name = f"{name} on {row.host}"
    words = f"largest peak in use: {name}, {human_bytes(peak)} ({peak:,} bytes)"
    if row.memory_capacity_bytes > 0:
        words += f" of its {human_bytes(float(row.memory_capacity_bytes))} capacity"
    if pd.notna(row.peak_step) and row.peak_step >= 0:
        words += f", in step {int(row.peak_step)}"
    words += f"; {_count(len(summary), 'allocator')}"
    return Measure(float(peak), words, {"allocator": name, "allocators": len(summary)})


def _verdict(r) -> str:
    if r.max_pct < 0:  # a speed-up asked for
        if r.regressed:
            return (f"not faster than the limit beyond the noise band: it reaches up to "
                    f"{r.high_pct:+.1f}% > {r.max_pct:+g}%")
        return f"faster than the limit beyond the noise band: {r.high_pct:+.1f}% at most"
    if r.regressed:
        return (f"slower than the limit beyond the noise band: by at least {r.low_pct:+.1f}% "
                f"> {r.max_pct:g}%")
    if r.change_pct > r.max_pct:
        return (f"the medians differ by more than the limit, but the noise band reaches "
                f"down to {r.low_pct:+.1f}%: not a regression beyond noise (more steps "
                "narrow the band)")
    return f"within the limit of {r.max_pct:g}%"


def regression(subject: Subject, baseline: Subject, max_pct: float) -> Measure:
    """The change of median step time from ``baseline`` to ``subject``, judged against
    ``max_pct`` beyond the noise band of the two step distributions (:mod:`.regression`)."""
    for which, s in (("baseline", baseline), ("profile", subject)):
        if s.steps.empty:
            return Measure(None, f"the {which} has no steps to compare")
    try:
        r = step_regression(per_step(baseline.steps).duration_ms,
                            per_step(subject.steps).duration_ms, max_pct)
    except ValueError as e:
        return Measure(None, str(e))
    pod = " (each its slowest host's time)" if max(_hosts(baseline.steps),
                                                     _hosts(subject.steps)) > 1 else ""
    words = (f"median step time {r.base_median_ms:.4g} ms over {r.base_steps} steps in the "
             f"baseline, {r.new_median_ms:.4g} ms over {r.new_steps} steps now{pod}: "
             f"{r.change_pct:+.1f}%; noise band {r.low_pct:+.1f}% to {r.high_pct:+.1f}% (the "
             f"{100 * CONFIDENCE:g}% interval of the ratio of new to baseline step times, "
             f"Mann-Whitney); {_verdict(r)}")
    details = {"baseline_median_ms": r.base_median_ms, "median_ms": r.new_median_ms,
               "baseline_steps": r.base_steps, "steps": r.new_steps,
               "band_low_pct": r.low_pct, "band_high_pct": r.high_pct}
    return Measure(r.change_pct, words, details, passed=not r.regressed)
