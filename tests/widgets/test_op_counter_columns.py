"""Hardware counters beside the XLA and kernel tables, on a real H200 capture with CUPTI PM
sampling (``tests/data/jax_h200_counters``): each counter some op has enough samples of gets
its mean and sample count; an op with fewer than 5 samples an empty mean saying so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.kernel_stats_view import KernelStatsView
from tfprof_nb.widgets.xla_view import XlaView

from .harness import WidgetPage

DATA = Path(__file__).resolve().parents[1] / "data"
MEAN, COUNT = "sm__cycles_active.avg mean", "sm__cycles_active.avg samples"


@pytest.fixture(scope="module")
def prof():
    return tp.load(DATA / "jax_h200_counters")


def _rows(prof, kind: str):
    ops = prof.result("op_counters")
    return ops[(ops.kind == kind) & (ops.counter == "sm__cycles_active.avg")]


def test_kernel_and_xla_tables_get_the_counters_mean_and_samples(prof):
    kernels = KernelStatsView(prof).table
    assert kernels.labels[MEAN] == "sm__cycles_active.avg (cycles, mean)"
    assert kernels.missing[MEAN] == "fewer than 5 samples"
    ops = _rows(prof, "kernel").set_index("op")
    frame = kernels.frame.set_index("kernel_name")
    assert (ops.samples >= 5).any() and (ops.samples < 5).any()
    for name, row in ops.iterrows():
        assert frame.at[name, COUNT] == row.samples
        if row.samples >= 5:
            assert frame.at[name, MEAN] == pytest.approx(row["mean"])
        else:
            assert np.isnan(frame.at[name, MEAN])
    # no column for a counter no op has a mean of (the NVML ones: 10 ms apart)
    assert not any(c.startswith("sm_clock_mhz") for c in frame.columns)
    hlo = XlaView(prof).table.frame.set_index(["module", "hlo_op_name"])
    ops = _rows(prof, "hlo_op").set_index(["program", "op"])
    assert ops.samples.max() >= 5
    top = ops.samples.idxmax()
    assert hlo.at[top, COUNT] == ops.samples.max()
    assert hlo.at[top, MEAN] == pytest.approx(ops.at[top, "mean"])


def test_without_counters_the_tables_are_unchanged():
    prof = tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb")
    table = KernelStatsView(prof).table
    assert list(table.frame.columns) == list(prof.kernel_stats.columns) and not table.labels


def test_an_empty_mean_says_why_in_the_browser(prof, tmp_path):
    with WidgetPage(KernelStatsView(prof), tmp_path, bundle("kernel_stats")) as page:
        page.page.wait_for_selector("th[data-column='sm__cycles_active.avg mean']")
        label = page.js("() => document.querySelector(\"th[data-column='sm__cycles_active.avg "
                        "mean']\").textContent")
        assert label.startswith("sm__cycles_active.avg (cycles, mean)")
        titles = page.js("""() => {
          const ths = [...document.querySelectorAll('th')];
          const k = ths.findIndex(t => t.dataset.column === 'sm__cycles_active.avg mean');
          return [...document.querySelectorAll('tr')].slice(1)
            .map(tr => [tr.children[k].textContent, tr.children[k].title]); }""")
        assert ["", "fewer than 5 samples"] in titles
        assert any(text and title == text for text, title in titles)
        assert page.console_errors == []
