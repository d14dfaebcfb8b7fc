"""The hardware findings (``analysis/findings/hardware_findings``) and the table their
sentences quote (``hardware_steps.hardware_table``), on a real H200 capture with the hardware
sampler's file (``tests/data/jax_h200_counters``) and a real input-bound CPU capture.  The
H200 ran at its full clock with an idle host CPU: no finding; the rules are then fed the same
real tables with the samples' values changed (a power cap in half of the steps, a saturated
CPU) and must say so with the table's numbers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.findings.hardware_findings import hardware_findings
from tfprof_nb.analysis.findings.hardware_steps import (CLOCK_LOW_WORDS, CPU_BUSY_WORDS,
                                                         clock_reason_words, device_context,
                                                         hardware_table, samples_in_steps)

COUNTERS = Path(__file__).resolve().parents[1] / "data" / "jax_h200_counters"


@pytest.fixture(scope="module")
def prof():
    return tp.load(COUNTERS)


def _findings(prof, counters: pd.DataFrame) -> list:
    return hardware_findings({}, counters, prof.steps, prof.result("environment"),
                             prof.gpu_utilization, prof.measures)


def _table(prof, counters: pd.DataFrame) -> pd.DataFrame:
    inside = samples_in_steps(counters, prof.steps)
    table = hardware_table(inside, *device_context(prof.result("environment"),
                                                   prof.gpu_utilization))
    return table.set_index(["device", "what"])


def test_reason_bits_in_words():
    assert clock_reason_words(0) == []
    assert clock_reason_words(0x4 | 0x40) == ["SW power cap", "HW thermal slowdown"]
    assert clock_reason_words(0x1ff) == [
        "GPU idle", "applications clocks setting", "SW power cap", "HW slowdown", "sync boost",
        "SW thermal slowdown", "HW thermal slowdown", "HW power brake slowdown",
        "display clock setting"]


def test_a_gpu_at_full_clock_and_an_idle_cpu_give_no_finding(prof):
    table = _table(prof, prof.result("counters"))
    assert table.loc[("GPU:0", "SM clock"), "mean"] == 1980.0  # the H200's clock rate
    assert table.loc[("GPU:0", CLOCK_LOW_WORDS), "mean"] == 0.0
    assert table.loc[("host", CPU_BUSY_WORDS), "mean"] == 0.0
    kinds = {f.kind for f in prof.recommendations()}
    assert not kinds & {"gpu_throttled", "host_cpu_saturated"}


def _first_half(prof, counters: pd.DataFrame, counter: str, value: float) -> pd.DataFrame:
    """``counters`` with ``counter`` set to ``value`` in the samples of the first half of the
    steps."""
    steps = prof.steps
    half = steps.iloc[: len(steps) // 2]
    end = float(half.start_us.iloc[-1] + half.duration_ms.iloc[-1] * 1e3)
    out = counters.copy()
    pick = (out.counter == counter) & (out.time_us >= half.start_us.iloc[0]) & (out.time_us < end)
    out.loc[pick, "value"] = value
    return out


def test_a_power_cap_and_a_low_clock_are_said_with_the_tables_numbers(prof):
    counters = _first_half(prof, prof.result("counters"), "throttle_reasons", 0x4 | 0x1)
    counters = _first_half(prof, counters, "sm_clock_mhz", 1500.0)
    table = _table(prof, counters)
    cap = table.loc[("GPU:0", "clock lowered: SW power cap"), "mean"]
    low = table.loc[("GPU:0", CLOCK_LOW_WORDS), "mean"]
    assert 0 < cap < 100 and 0 < low < 100
    (found,) = [f for f in _findings(prof, counters) if f.kind == "gpu_throttled"]
    assert f"SW power cap in {cap:.1f}% of its samples inside the steps" in found.what
    assert f"below its max in {low:.1f}% of its samples" in found.what
    clock = table.loc[("GPU:0", "SM clock"), "mean"]
    assert f"SM clock mean {clock:,.0f} MHz (max 1,980 MHz" in found.what
    assert "GPU idle" not in found.what  # a normal reason is no cause
    assert found.evidence["throttled_samples_pct"] == pytest.approx(max(cap, low))


def test_idle_or_applications_clocks_alone_are_no_throttling(prof):
    counters = _first_half(prof, prof.result("counters"), "throttle_reasons", 0x1 | 0x2)
    assert "clock lowered: GPU idle" in set(_table(prof, counters).index.get_level_values(1))
    assert not [f for f in _findings(prof, counters) if f.kind == "gpu_throttled"]


def _saturated_cpu(p, value: float) -> pd.DataFrame:
    """A machine CPU sample in the middle of each of ``p``'s steps, at ``value``."""
    steps = p.steps
    mid = steps.start_us.to_numpy() + steps.duration_ms.to_numpy() * 500
    return pd.DataFrame({"host": pd.Categorical(steps.host.astype(str)), "device": "host",
                         "counter": "cpu_util_pct", "time_us": mid,
                         "value": np.full(len(mid), value), "unit": "%",
                         "source": "sampler:psutil"})


def test_a_saturated_cpu_while_the_steps_wait_for_input(cpu_slowmap_logdir, prof):
    p = tp.load(cpu_slowmap_logdir)
    wait = p.measures.loc["input_wait_pct"]
    assert wait.value >= 5  # the slow map: input-bound
    (found,) = _findings(p, _saturated_cpu(p, 97.0))
    assert found.kind == "host_cpu_saturated" and found.measure == "input_wait_pct"
    assert re.search(rf"at 90% or more in 100\.0% of its samples inside the steps \(mean "
                     rf"97\.0%\), while the steps wait for input {wait.value:.1f}% ", found.what)
    assert _findings(p, _saturated_cpu(p, 60.0)) == []
    # the H200's GPU never waits for input: a busy CPU there is no finding
    assert _findings(prof, _saturated_cpu(prof, 97.0)) == []
