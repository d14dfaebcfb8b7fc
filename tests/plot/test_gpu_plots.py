"""GPU charts against the tables they draw (real captures)."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.plot.step_figures import NO_HOST_SIDE_INPUT
from tfprof_nb.analysis.findings.measure_words import get
from tfprof_nb.plot.gpu_figures import HOST_BOUND_WITH_INPUT, UTILIZATION_PARTS

from ..conftest import DATA


@pytest.fixture(scope="module", params=["gpu_bert_multiworker/34.83.195.179_6003.xplane.pb",
                                        "mi300x_jax08_conv.xplane.pb"])
def prof(request):
    return tp.load(DATA / request.param)


def _bars(fig, axis: str) -> list:
    """The bar traces of ``fig`` on x axis ``axis`` ("x": per step, "x2": outside the steps)."""
    return [t for t in fig.data if t.type == "bar" and (t.xaxis or "x") == axis]


def _parts(prof) -> list:
    """The drawn parts: without the input part where the host has no input event (the
    devices' wait for input is unknown there: MI300X JAX), its time in the host-bound part."""
    if prof.result("input_events"):
        return UTILIZATION_PARTS
    assert (prof.gpu_utilization.input_us == 0).all()  # (so no time goes missing)
    return [(col, HOST_BOUND_WITH_INPUT if col == "host_bound_us" else label, c)
            for col, label, c in UTILIZATION_PARTS if col != "input_us"]


def test_utilization_bars_are_the_table(prof):
    """Per-step bars (and each device's time outside the steps, on its own axis) are the
    table's rows; each bar is its step's wall time."""
    fig = prof.plot.gpu_utilization()
    dev = prof.gpu_utilization.query("stream == 'all'")
    parts = _parts(prof)
    labels = [label for _, label, _ in parts]
    for axis, rows in (("x", dev[dev.step != -2]), ("x2", dev[dev.step == -2])):
        bars = _bars(fig, axis)
        assert [t.name for t in bars] == (labels if len(rows) else [])
        for trace, (col, _, _) in zip(bars, parts):
            np.testing.assert_allclose(trace.y, rows[col] / 1e3)
        if len(rows):
            stacked = np.sum([t.y for t in bars], axis=0)
            np.testing.assert_allclose(stacked, rows.wall_us / 1e3)
    steps = dev[dev.step != -2]
    assert [c[0] for c in _bars(fig, "x")[0].customdata] == steps.device.tolist()


def test_step_windows_are_named_in_words(prof):
    """A device's active span (a profile without steps) says so, never a negative step
    number or "profile"; time outside every step is never a step's bar."""
    fig = prof.plot.gpu_utilization()
    dev = prof.gpu_utilization.query("stream == 'all'")
    steps = dev[dev.step != -2].step
    names = [c[1] for c in _bars(fig, "x")[0].customdata]
    for step, name in zip(steps, names):
        assert name == {-1: "active span"}.get(step, f"step {step}")
    assert (dev.step < 0).any()
    assert "outside steps" not in names and "outside steps" not in fig.layout.xaxis.ticktext
    assert bool(_bars(fig, "x2")) == (dev.step == -2).any()


def test_tpu_outside_steps_apart_and_ticks_bounded():
    """The TPU capture: four 13-15 s outside-steps bars beside 784 ms steps; they stand on
    their own axis, and 400 step bars get at most MAX_STEP_TICKS step numbers, spaced."""
    from tfprof_nb.plot.step_bars import MAX_STEP_TICKS

    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    fig = prof.plot.gpu_utilization()
    dev = prof.gpu_utilization.query("stream == 'all'")
    steps = _bars(fig, "x")
    assert len(steps[0].x) == (dev.step >= 0).sum() == 400
    assert max(np.sum([t.y for t in steps], axis=0)) < 1000  # ms: no 13 s bar among them
    outside = _bars(fig, "x2")
    assert list(outside[0].x) == ["TPU:0", "TPU:1", "TPU:2", "TPU:3"]
    assert min(np.sum([t.y for t in outside], axis=0)) > 12_000
    assert fig.layout.yaxis2.title.text and fig.layout.xaxis2.anchor == "y2"
    ticks = np.asarray(fig.layout.xaxis.tickvals)
    span = fig.layout.xaxis.range[1] - fig.layout.xaxis.range[0]
    assert 4 <= len(ticks) <= MAX_STEP_TICKS + 1
    assert np.diff(ticks).min() >= span / MAX_STEP_TICKS - 1  # none crowds the next
    # each device starts with its step 0, named above its bars
    assert list(fig.layout.xaxis.ticktext).count("0") == 4
    assert {a.text for a in fig.layout.annotations} >= {"TPU:0", "TPU:1", "TPU:2", "TPU:3",
                                                        "Outside the steps"}


def test_tpu_step_time_chart_lets_plotly_space_its_ticks():
    """The step-time graph's 100 TPU steps: category steps, at most MAX_STEP_TICKS of their
    numbers written (plotly spaces them; every one of them collided, rotated)."""
    from tfprof_nb.plot.step_bars import MAX_STEP_TICKS

    fig = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb").plot.step_time()
    assert len(fig.data[0].x) == 100 and fig.layout.xaxis.type == "category"
    assert 0 < fig.layout.xaxis.nticks <= MAX_STEP_TICKS


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


def test_input_wait_chart_plots_the_pages_input_measure(prof):
    """The input tab's chart shows per step the one input-wait measure the verdict above it
    quotes (BERT: GPU:6 waits 7.9% of the step; XProf's step breakdown, 0.0%, is not a second
    figure for it), its title naming the rule, and each step's bars add up to the step."""
    fig = prof.plot.input_pipeline()
    wait, rest = fig.data[0], fig.data[1]
    steps = prof.steps
    row = get(prof.measures, "input_wait_pct")
    if row is None:  # no steps (the conv capture): no input wait, no bars
        assert steps.empty and not len(wait.y)
        return
    share = 100 * float(np.sum(wait.y)) / float(steps.duration_ms.sum())
    assert f"{share:.1f}%" in prof.overview().verdict["statement"]
    assert f"{share:.1f}" == f"{row['value']:.1f}"
    np.testing.assert_allclose(np.add(wait.y, rest.y), steps.duration_ms)
    title = fig.layout.annotations[0].text
    assert title == "Input wait per step (" + (
        f"{row['devices']} idle while the host fetches input)" if row["rule"] == "tfprof"
        else "step-time breakdown)"), title  # (the devices the measure counts, by name)
    assert fig.layout.title.text is None  # (the bars are the measure's: no second figure)


def test_step_time_chart_is_titled_as_xprofs_rule(prof):
    """The overview's step chart draws the step-time breakdown (XProf's rule); on BERT its
    input (none) differs from the page's input wait (GPU:6's own, 7.9%), so the title says
    whose rule the chart is, not a second verdict on input."""
    fig = prof.plot.step_time()
    assert fig.layout.title.text == "Step-time breakdown (XProf's rule)"
    # on steps inferred here (TPU v6e), XProf's rule is applied to steps XProf does not find
    tpu = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    assert tpu.steps.source.iloc[0].startswith("inferred")
    assert tpu.plot.step_time().layout.title.text == (
        f"Step-time breakdown (XProf's rule, on the {len(tpu.steps)} steps inferred here: "
        "XProf itself finds none)")
    drawn = {t.name for t in fig.data if t.type == "bar"}
    row = get(prof.measures, "input_wait_pct")
    if row is not None and row["rule"] == "tfprof" and row["value"] > 0:
        assert "Input" not in drawn  # the breakdown gives input another figure (none)


def test_host_side_input_time_names_its_scope(prof):
    """BERT's input ops ran 26.6 ms on the host, more than its one step (21.3 ms): the
    host-side chart counts the whole profile, and its title says so."""
    fig = prof.plot.input_pipeline()
    host = next(t for t in fig.data if t.name == "Host-side input")
    if not prof.steps.empty and float(np.sum(host.y)) > float(prof.steps.duration_ms.sum()):
        assert "whole profile" in fig.layout.annotations[1].text
    assert fig.layout.annotations[1].text == "Host-side input time (whole profile)"


def test_unknown_input_wait_draws_no_input_bars():
    """The H200 input-bound JAX capture has no input event on its host, so its input wait is
    unknown: the chart draws each step's time alone, not a 0 ms 'Waiting for input' bar the
    card and the verdict would contradict."""
    prof = tp.load(DATA / "jax_h200_inputbound.xplane.pb")
    assert np.isnan(prof.measures.at["input_wait_pct", "value"])
    fig = prof.plot.input_pipeline()
    names = [t.name for t in fig.data]
    assert "Waiting for input" not in names and "Rest of the step" not in names
    steps = next(t for t in fig.data if t.name == "Step time (input unknown)")
    np.testing.assert_allclose(steps.y, prof.steps.duration_ms)
    assert fig.layout.annotations[0].text == \
        "Input wait per step (unknown: no input events XProf's rule counts)"
    # the host-side chart's bars are all 0 ms: it says why instead of an input of no cost
    assert (prof.input_pipeline.host_side.time_us == 0).all()
    assert [a.text for a in fig.layout.annotations][2:] == [NO_HOST_SIDE_INPUT]
    tf = tp.load(DATA / "tf_cpu_epochs.xplane.pb")
    assert (tf.input_pipeline.host_side.time_us > 0).any()
    assert NO_HOST_SIDE_INPUT not in [a.text for a in tf.plot.input_pipeline().layout.annotations]


def test_the_device_time_titles_scope_fits_what_is_drawn():
    """One GPU without steps: "its active span" (the overview's words), not "each one's";
    a CPU profile with steps and no device: says there is no device activity, not "no
    steps"."""
    one = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb").plot.gpu_utilization()
    assert one.layout.title.text.startswith("Device time over its active span (no steps)")
    cpu = tp.load(DATA / "tf_two_workers_loaded")
    assert len(cpu.steps)
    assert cpu.plot.gpu_utilization().layout.title.text == \
        "Device time: no GPU or TPU activity in this profile"


def test_a_pods_input_bars_say_the_overviews_figure_is_another_scope():
    """Two workers: the bars draw every host's steps (13.5% waiting for input); the overview's
    13.9% is the first host's breakdown over the 138 steps XProf aligns: the title says both,
    each with its scope."""
    prof = tp.load(DATA / "tf_two_workers_loaded")
    fig = prof.plot.input_pipeline()
    wait = next(t for t in fig.data if t.name == "Waiting for input")
    drawn = 100 * float(np.sum(wait.y)) / float(prof.steps.duration_ms.sum())
    row = get(prof.measures, "input_wait_pct")
    assert f"{drawn:.1f}" != f"{row['value']:.1f}"
    title = fig.layout.title.text.replace("<br>", " ")
    assert title.startswith(f"These bars, every step of every host: {drawn:.1f}% waiting")
    assert f"The overview's {row['value']:.1f}% is over the 138 steps XProf aligns" in title


def test_the_device_chart_names_the_devices_idle_through_the_steps():
    """BERT: GPU:1 and GPU:4 ran no kernel in the step, drawn as all idle: the chart's title
    says so (the page's figures leave them out); the view, whose note says it, passes
    left_out=False; a capture whose GPU ran in its steps adds nothing."""
    bert = tp.load(DATA / "gpu_bert_multiworker")
    title = bert.plot.gpu_utilization().layout.title.text
    assert "<sup>GPU:1, GPU:4 ran no kernel in the step: idle in it throughout" in title
    assert "<sup>" not in bert.plot.gpu_utilization(left_out=False).layout.title.text
    h200 = tp.load(DATA / "jax_h200_counters")
    assert "<sup>" not in h200.plot.gpu_utilization().layout.title.text


def test_empty_charts_say_what_is_missing():
    """MI300X gemm: no steps and no collective: the step chart says there are no steps (it
    drew an empty chart), the collectives chart that none ran (it drew zero bars under
    'hidden under compute vs exposed')."""
    prof = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb")
    steps = prof.plot.step_time()
    assert not steps.data and [a.text for a in steps.layout.annotations] == \
        ["No steps in this profile"]
    assert prof.plot.gpu_overlap().layout.title.text == "Collectives: none ran in this profile"
    # TPU v6e: its 12 all-reduces ran before the first step: none in the steps, not none
    tpu = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    outside = tpu.gpu_overlap.attrs["collectives_outside"]
    assert tpu.plot.gpu_overlap().layout.title.text == (
        f"Collectives: none in the steps ({outside['ms']:,.1f} ms ran outside every step, "
        "on 4 devices)")


def test_the_roofline_hover_counts_device_events_and_says_why_an_op_reads_above_its_roof():
    """H200 (no command buffers): custom-call.18 runs 20 device events for 10 runs of its
    kernel (a memset beside each), so XProf's rule counts its FLOPs twice and its efficiency
    reads above 100%: the hover counts 'device events (XProf's occurrences)', not 'calls',
    and says why the efficiency is above 100% on those points only."""
    from tfprof_nb.plot.roofline_figures import OVER_THE_ROOF

    prof = tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb")
    fig = prof.plot.roofline()
    points = [t for t in fig.data if t.mode == "markers" and t.customdata is not None]
    rows = [row for t in points for row in t.customdata]
    assert all("device events (XProf's occurrences)" in t.hovertemplate
               and "calls" not in t.hovertemplate for t in points)
    over = [row for row in rows if float(row[5] or 0) > 100]
    assert over and all(row[6] == OVER_THE_ROOF for row in over)
    assert all(row[6] == "" for row in rows if float(row[5] or 0) <= 100)
    table = prof.roofline
    (call,) = [row for row in over if row[0] == "custom-call.18"]
    assert call[2] == int(table.loc[table.operation == "custom-call.18", "occurrences"].iloc[0])


def test_launch_latency_names_the_copies_among_its_launches():
    """BERT: GPU:1 ran no kernel, only copies, yet it has launches in the latency histogram
    (its copies' launches): the chart's and the table's titles say the launches are kernels,
    copies and memsets (the chart said 'Kernel launch latency')."""
    from tfprof_nb.analysis.gpu.activity import is_copy
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(DATA / "gpu_bert_multiworker")
    ll = prof.launch_latency
    copies = ll.per_kernel[[is_copy(n) for n in ll.per_kernel.kernel_name.astype(str)]]
    assert len(copies) and set(copies.kernel_name) >= {"MemcpyD2H", "MemcpyH2D"}
    gpu1 = prof.duty_cycle[prof.duty_cycle.device == "/device:GPU:1"]
    assert int(gpu1.kernels.iloc[0]) == 0 and int(gpu1.copies.iloc[0]) > 0
    hist = ll.histogram
    assert hist[hist.device.astype(str) == "/device:GPU:1"].launches.sum() > 0
    assert prof.plot.launch_latency().layout.title.text == \
        "Launch latency: kernels, copies and memsets"
    view = GpuUtilizationView.state(prof).values
    assert view["kernels"].title == "Launch latency per kernel, copy and memset"


def test_the_gpu_tabs_sentences_name_devices_as_its_measures_do():
    """TPU v6e: the duty cycle's sentence names 'TPU:0' (as every measure does); the
    sentences on the devices busy outside the steps and on the last to finish named the
    same devices '/device:TPU:0': now each names them one way."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    said = GpuUtilizationView.state(prof).values["statements"]
    assert "TPU:0" in prof.measures.at["duty_cycle_pct", "scope"]
    (outside,) = [s for s in said if s.startswith("Busy outside every step: ")]
    (last,) = [s for s in said if "last most often: " in s]
    assert outside.startswith("Busy outside every step: TPU:0 ")
    assert last.split("last most often: ")[1].startswith("TPU:")
    assert not any("/device:" in s for s in said), said
