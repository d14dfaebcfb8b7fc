"""Profile strings are text in every chart: plotly reads ``<b>``, ``<a href>``, ``<br>``... in
labels, tick labels, legend and menu entries, titles and hover text, so op, kernel, host,
device and allocator names are escaped there (``plot._style.plain``).

Each chart is drawn from a real capture's table whose names are made hostile, and must show
them escaped and never as markup."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.plot import gpu_figures as gpu, memory_figures as memory, op_figures as ops
from tfprof_nb.plot import pod_figures as pod, roofline_figures as roofline
from tfprof_nb.plot import step_figures as steps
from tfprof_nb.plot.compare_figures import compare_figure, waterfall_figure

from ..conftest import DATA

HOSTILE = "<b>x</b><a href='https://example.invalid'>y</a>"
ESCAPED = "&lt;b&gt;x&lt;/b&gt;&lt;a href='https://example.invalid'&gt;y&lt;/a&gt;"


def _strings(obj):
    """Every string in a figure's JSON that plotly may draw (``meta`` is data for the views'
    clicks, never drawn: it keeps the names as they are)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if k != "meta":
                yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)
    elif isinstance(obj, np.ndarray):
        yield from _strings(obj.tolist())


def _assert_escaped(fig, what: str) -> None:
    texts = list(_strings(fig.to_plotly_json()))
    raw = [t for t in texts if "<b>x</b>" in t or "<a href" in t]
    assert not raw, f"{what}: markup from the profile in {raw[:3]}"
    assert any(ESCAPED in t for t in texts), f"{what}: the name is not shown"


def _hostile(table: pd.DataFrame, *columns) -> pd.DataFrame:
    """``table`` with each value of ``columns`` prefixed by HOSTILE (still distinct)."""
    out = table.copy()
    for col in columns:
        out[col] = [HOSTILE + str(v) for v in out[col]]
    return out


@pytest.fixture(scope="module")
def gpu_prof(gpu_fixture_file):
    return tp.load(gpu_fixture_file)


@pytest.fixture(scope="module")
def cpu_html(cpu_html_logdir):
    return tp.load(cpu_html_logdir)


def test_op_and_step_charts(cpu_html):
    ops_table = cpu_html.op_stats_table(include_idle=True)
    _assert_escaped(ops.op_stats_figure(_hostile(ops_table, "operation", "type")), "op_stats")
    two_hosts = cpu_html.steps.assign(host=[HOSTILE + str(i % 2)
                                            for i in range(len(cpu_html.steps))])
    _assert_escaped(steps.step_time_figure(two_hosts), "step_time")
    _assert_escaped(steps.step_time_figure(cpu_html.steps, title=HOSTILE), "step_time title")
    _assert_escaped(steps.input_pipeline_figure(cpu_html.input_pipeline, two_hosts),
                    "input_pipeline")
    pod_table = cpu_html.pod
    _assert_escaped(pod.pod_figure(_hostile(pod_table, "host")), "pod")
    hostile = tp.compare(cpu_html, cpu_html, labels=(HOSTILE, "b"))
    _assert_escaped(compare_figure(hostile), "compare")
    _assert_escaped(waterfall_figure(hostile), "compare waterfall")


def test_gpu_charts(gpu_prof):
    _assert_escaped(ops.kernels_figure(_hostile(gpu_prof.kernel_stats, "kernel_name",
                                                "op_name")), "kernels")
    util = _hostile(gpu_prof.gpu_utilization, "device")
    _assert_escaped(gpu.utilization_figure(util), "gpu_utilization")
    _assert_escaped(gpu.overlap_figure(_hostile(gpu_prof.gpu_overlap, "device")),
                    "gpu_overlap")
    latency = gpu_prof.launch_latency
    _assert_escaped(gpu.launch_latency_figure(_hostile(latency.histogram, "device")),
                    "launch_latency")
    _assert_escaped(gpu.queue_figure(_hostile(latency.queue, "device")), "launch_queue")


def test_memory_chart(gpu_prof):
    timeline, summary = gpu_prof.memory_timeline, gpu_prof.memory_summary
    assert len(timeline) and len(summary)
    fig = memory.memory_figure(_hostile(timeline, "allocator", "tf_op"),
                               _hostile(summary, "allocator"))
    _assert_escaped(fig, "memory")


def test_roofline_chart():
    table = pd.DataFrame({
        "operation": [HOSTILE + "dot", "fusion", "program"],
        "category": [HOSTILE, "fusion", "Program"],
        "arithmetic_intensity_flops_per_byte": [2.0, 8.0, 4.0],
        "flop_rate_flops_per_s": [1e12, 3e12, 2e12],
        "total_self_time_us": [10.0, 20.0, 30.0], "occurrences": [1, 2, 3],
        "bound_by": [HOSTILE, "Compute", "Compute"],
        "roofline_efficiency_pct": [50.0, 60.0, 55.0]})
    _assert_escaped(roofline.roofline_figure(table), "roofline")


def test_the_html_capture_shows_no_markup(cpu_html):
    """Every chart of the capture whose trace names hold HTML: none of it as markup."""
    for name in ("step_time", "memory", "op_stats", "input_pipeline", "pod", "roofline"):
        fig = getattr(cpu_html.plot, name)()
        assert not [t for t in _strings(fig.to_plotly_json()) if "<img" in t], name


def test_xprof_capture_names_are_escaped_as_before():
    """Names with '<' and '&' in a real capture (C++ templates in kernel names) come out as
    entities in the labels and as themselves once plotly reads them."""
    prof = tp.load(DATA / "gpu_bert_multiworker" / "34.83.195.179_6003.xplane.pb")
    fig = prof.plot.kernels()
    names = fig.data[0].y
    assert all("<" not in n and ">" not in n for n in names)
    assert any("&lt;" in "".join(map(str, row)) for row in fig.data[0].customdata)
