"""GPU charts against the tables they draw (real captures)."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.plot.gpu import UTILIZATION_PARTS

from ..conftest import DATA


@pytest.fixture(scope="module", params=["gpu_bert_multiworker/34.83.195.179_6003.xplane.pb",
                                        "mi300x_jax08_conv.xplane.pb"])
def prof(request):
    return tp.load(DATA / request.param)


def test_utilization_bars_are_the_table(prof):
    fig = prof.plot.gpu_utilization()
    dev = prof.gpu_utilization.query("stream == 'all'")
    assert [t.name for t in fig.data] == [label for _, label, _ in UTILIZATION_PARTS]
    for trace, (col, _, _) in zip(fig.data, UTILIZATION_PARTS):
        np.testing.assert_allclose(trace.y, dev[col] / 1e3)
    stacked = np.sum([t.y for t in fig.data], axis=0)
    np.testing.assert_allclose(stacked, dev.wall_us / 1e3)  # each bar is its step's wall
    assert list(fig.data[0].x[0]) == dev.device.tolist()


def test_step_windows_are_named_in_words(prof):
    """A bar of time outside every step says so, and so does a device's active span on a
    profile without steps (never a negative step number or "profile")."""
    fig = prof.plot.gpu_utilization()
    steps = prof.gpu_utilization.query("stream == 'all'").step
    names = list(fig.data[0].x[1])
    for step, name in zip(steps, names):
        assert name == {-2: "outside steps", -1: "active span"}.get(step, str(step))
    assert (steps < 0).any()


def test_tpu_devices_are_busy_with_ops():
    fig = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb").plot.gpu_utilization()
    assert fig.data[0].name == "Busy (ops)"


def test_overlap_bars_are_the_table(prof):
    fig = prof.plot.gpu_overlap()
    ov = prof.gpu_overlap
    np.testing.assert_allclose(fig.data[0].y, ov.hidden_us / 1e3)
    np.testing.assert_allclose(fig.data[1].y, ov.exposed_us / 1e3)


def test_latency_histogram_and_queue_are_the_tables(prof):
    ll = prof.launch_latency
    fig = prof.plot.launch_latency()
    assert sum(int(np.sum(t.y)) for t in fig.data) == ll.histogram.launches.sum() > 0
    for trace, (_, rows) in zip(fig.data, ll.histogram.groupby("device", sort=False)):
        assert list(trace.x) == rows.bin.tolist()
        assert list(trace.y) == rows.launches.tolist()
    q = prof.plot.launch_queue()
    assert sum(len(t.y) for t in q.data) == len(ll.queue)
    first = ll.queue[ll.queue.device == ll.queue.device.iloc[0]]
    np.testing.assert_allclose(q.data[0].x, first.time_us / 1e3)
    assert q.data[0].line.shape == "hv"


def test_labels_escape_markup():
    from tfprof_nb.plot._style import plain

    assert plain("<b>gpu</b> & co") == "&lt;b&gt;gpu&lt;/b&gt; &amp; co"


def test_empty_profile_gives_empty_figures(cpu_file):
    prof = tp.load(cpu_file)
    for name in ("gpu_utilization", "gpu_overlap", "launch_latency", "launch_queue"):
        fig = getattr(prof.plot, name)()
        assert all(len(t.y) == 0 for t in fig.data)
