"""The GPU tab's "what the trace lacks" on a real H200 capture with the hardware sampler's
file beside it (``tests/data/jax_h200_counters``): the samples inside the steps as a table
and a figure per step, NVML's utilisation said for what it is; a profile without samples
keeps the tab as it was."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

from .harness import WidgetPage, plot_traces, wait_for_plot

DATA = Path(__file__).resolve().parents[1] / "data"
SCREENS = os.environ.get("TFPROF_NB_SCREENSHOTS")


@pytest.fixture(scope="module")
def prof():
    return tp.load(DATA / "jax_h200_counters")


def test_the_table_holds_the_samples_inside_the_steps(prof):
    view = GpuUtilizationView(prof)
    table = view.hardware.frame.set_index(["device", "what"])
    counters = prof.result("counters")
    steps = prof.steps
    clock = counters[counters.counter == "sm_clock_mhz"]
    start = steps.start_us.to_numpy()
    end = start + steps.duration_ms.to_numpy() * 1e3
    inside = [any((s <= t < e) for s, e in zip(start, end)) for t in clock.time_us]
    row = table.loc[("GPU:0", "SM clock")]
    assert row.samples == sum(inside) > 0
    assert row["mean"] == pytest.approx(clock.value[inside].mean())
    assert table.loc[("GPU:0", "clock-event reasons")].note.startswith("none")
    assert table.loc[("host", "machine CPU")].unit == "%"
    assert table.loc[("host", "process resident memory")].unit == "GiB"
    # NVML's utilisation is in the table as what it is; never the device memory it sees
    nvml = [w for w in table.index.get_level_values("what") if w.startswith("NVML utilisation")]
    assert nvml == ["NVML utilisation: any kernel resident in its sample window"]
    assert not any("memory used" in w for w in table.index.get_level_values("what"))
    assert any("not the device's busy time" in n for n in view.hardware_notes)
    # the count of samples says over how many counters, as the table's column counts each
    in_any = np.zeros(len(counters), bool)
    for s, e in zip(start, end):
        in_any |= ((counters.time_us >= s) & (counters.time_us < e)).to_numpy()
    sizes = counters[in_any].groupby(["host", "device", "counter"], observed=True).size()
    nvml_memory = sizes[sizes.index.get_level_values("counter").isin(
        ["memory_used_bytes", "memory_total_bytes"])]
    assert len(nvml_memory) == 2  # (sampled, not in the table: the note says so, and counts)
    # the table's counters: each row of a counter's own, not the shares derived from one
    own = [w for w, u in zip(table.index.get_level_values("what"), table.unit)
           if u != "% of samples"]
    assert len(own) == len(sizes) - len(nvml_memory)
    assert view.hardware_notes[0].startswith(
        f"Hardware samples inside the {len(steps)} steps: {int(in_any.sum()):,} of "
        f"{len(counters):,}, over {len(sizes)} counters: the table gives {len(own)} of them "
        "(its samples column counts each one's), not the device memory NVML sees "
        f"(memory_total_bytes, memory_used_bytes: {int(nvml_memory.sum())} samples; ")
    assert table.loc[("GPU:0", "SM clock")].samples == int(in_any[
        (counters.counter == "sm_clock_mhz").to_numpy()].sum())
    assert "nvlink_tx_bytes_per_s" in " ".join(view.hardware_notes)  # what NVML could not
    panels = {t.yaxis for t in prof.plot.hardware().data}
    assert len(panels) == 3
    # a step without samples is a gap in its line (it joined steps 0 and 3 across 1 and 2)
    (mean,) = [t for t in prof.plot.hardware().data if t.name == "GPU:0" and t.yaxis == "y"]
    gaps = [int(s) for s, y in zip(mean.x, mean.y) if y != y]  # (NaN: no sample there)
    unsampled = [int(n) for n, s, e in zip(steps.index, start, end)
                 if not ((clock.time_us >= s) & (clock.time_us < e)).any()]
    assert list(mean.x) == sorted(steps.index) and gaps == unsampled and gaps


def test_the_tab_shows_what_the_trace_lacks(prof, tmp_path):
    with WidgetPage(GpuUtilizationView(prof), tmp_path, bundle("gpu")) as page:
        page.page.wait_for_selector(".gpu-hardware table")
        wait_for_plot(page.page, ".gpu-hardware")
        text = page.js("() => document.querySelector('.gpu-hardware').textContent")
        assert "SM clock" in text and "NVML utilisation: any kernel resident" in text
        names = {t["name"] for t in plot_traces(page.page, ".gpu-hardware")}
        assert "GPU:0" in names and "host" in names
        if SCREENS:
            Path(SCREENS).mkdir(parents=True, exist_ok=True)
            page.page.locator(".tfprof-gpu").screenshot(path=str(Path(SCREENS) / "gpu_tab.png"))
        assert page.console_errors == [] and page.blocked == []


def test_without_samples_the_tab_is_unchanged(tmp_path):
    view = GpuUtilizationView(tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb"))
    assert view.hardware.frame.empty and view.hardware_figure == {} and not view.hardware_notes
    with WidgetPage(view, tmp_path, bundle("gpu")) as page:
        wait_for_plot(page.page)
        assert page.js("() => document.querySelector('.gpu-hardware')") is None
        assert np.isfinite(page.js("() => document.querySelectorAll('.gpu-chart').length"))
