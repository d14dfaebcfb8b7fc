"""prof.plot's figures against the DataFrames they draw, from real profiles."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import tfprof_nb as tp
from tfprof_nb.constants import CATEGORY_COLUMNS
from tfprof_nb.plot._style import CATEGORY_LABELS, plain_all
from tfprof_nb.plot.memory_figures import HOVER_FIELDS, reduce_extremes

from ..conftest import DATA

MIB = 2.0**20


@pytest.fixture(scope="module")
def gpu(gpu_fixture_file):
    return tp.load(gpu_fixture_file)


@pytest.fixture(scope="module")
def cpu(cpu_file):
    return tp.load(cpu_file)


@pytest.fixture(scope="module")
def pod(tmp_path_factory, cpu_file, cpu_python_file):
    """Two CPU captures as the two workers of one run."""
    import shutil

    run = tmp_path_factory.mktemp("pod")
    shutil.copy(cpu_file, run / "worker-0.xplane.pb")
    shutil.copy(cpu_python_file, run / "worker-1.xplane.pb")
    return tp.load(run)


def test_step_time_bars_are_the_steps_table(cpu):
    steps = cpu.steps
    fig = cpu.plot.step_time()
    assert isinstance(fig, go.Figure)
    bars = {t.name: t for t in fig.data if t.type == "bar"}
    drawn = [c for c in CATEGORY_COLUMNS if steps[c].any()]
    assert list(bars) == [CATEGORY_LABELS[c] for c in drawn]  # empty categories left out
    for col in drawn:
        bar = bars[CATEGORY_LABELS[col]]
        np.testing.assert_allclose(np.asarray(bar.y, float), steps[col].to_numpy(float))
        assert list(bar.x) == [str(s) for s in steps.index]
        assert list(bar.customdata) == list(range(len(steps)))
    total = sum(np.asarray(b.y, float) for b in bars.values())
    np.testing.assert_allclose(total, steps[drawn].sum(axis=1).to_numpy(), rtol=1e-9)
    meta = fig.layout.meta
    np.testing.assert_allclose(meta["start_us"], steps.start_us)
    np.testing.assert_allclose(np.subtract(meta["end_us"], meta["start_us"]) / 1e3,
                               steps.duration_ms)
    assert fig.layout.barmode == "stack" and "ms" in fig.layout.yaxis.title.text


def test_step_time_fades_the_steps_xprofs_figures_leave_out(monkeypatch):
    """The chart is XProf's step breakdown, but of every step; the average on the same page is
    over the steps XProf counts.  Those it leaves out (here the first and last of the H200
    capture's 10) are drawn faded, said in the subtitle and in each one's hover; the others
    are XProf's own steps (its input_pipeline_analyzer's rows)."""
    from tfprof_nb.plot import step_figures as step_plots

    from ..analysis.oracle import step_table

    path = DATA / "jax_h200_inputbound.xplane.pb"
    prof = tp.load(path)
    steps = prof.steps
    xprof, _ = step_table(path)
    fig = prof.plot.step_time()
    bars = [t for t in fig.data if t.type == "bar"]
    assert bars
    for bar in bars:
        solid = [s for s, o in zip(steps.step_name, bar.marker.opacity) if o == 1.0]
        assert solid == xprof.stepnum.tolist()
        assert min(bar.marker.opacity) < 1.0
    left_out = len(steps) - len(xprof)
    assert left_out == 2
    assert fig.layout.title.subtitle.text == \
        f"faded: the {left_out} of {len(steps)} steps XProf's figures leave out " \
        "(the first and last)"
    notes = dict(zip(steps.step_name, fig.data[-1].text))
    assert {n for s, n in notes.items() if s not in set(xprof.stepnum)} == \
        {" (not in XProf's figures)"}
    assert {n for s, n in notes.items() if s in set(xprof.stepnum)} == {""}
    # past MAX_BARS steps (areas, no fading point by point) the subtitle gives the count
    monkeypatch.setattr(step_plots, "MAX_BARS", len(steps) - 1)
    areas = prof.plot.step_time()
    assert areas.layout.title.subtitle.text == \
        f"XProf's figures count {len(xprof)} of these {len(steps)} steps (they leave out " \
        "the first and last)"


def test_many_steps_stack_areas_with_the_same_values(cpu, monkeypatch):
    """Past MAX_BARS steps each category is one stacked area (a bar per step and category is
    an SVG element each: thousands of steps took seconds to draw), same values and clicks."""
    from tfprof_nb.plot import step_figures as step_plots

    bars = cpu.plot.step_time()
    monkeypatch.setattr(step_plots, "MAX_BARS", len(cpu.steps) - 1)
    areas = cpu.plot.step_time()
    assert {t.type for t in areas.data} == {"scatter"}
    stacked = [t for t in areas.data if t.stackgroup]
    assert [t.name for t in stacked] == [t.name for t in bars.data if t.type == "bar"]
    for area, bar in zip(stacked, (t for t in bars.data if t.type == "bar")):
        np.testing.assert_array_equal(np.asarray(area.y, float), np.asarray(bar.y, float))
        assert list(area.customdata) == list(bar.customdata) and area.fillcolor
    wait = cpu.plot.input_pipeline()
    assert any(t.type == "scatter" and t.stackgroup for t in wait.data)


def test_step_labels_name_the_host_in_a_pod(pod):
    steps = pod.steps
    assert steps.host.nunique() > 1
    x = list(pod.plot.step_time().data[0].x)
    assert x == [f"{h} {s}" for h, s in zip(steps.host, steps.index)]
    assert len(set(x)) == len(x)  # no two hosts' steps share a bar


def test_themes(cpu):
    light, dark = cpu.plot.step_time(), cpu.plot.step_time(theme="dark")
    assert light.layout.font.color != dark.layout.font.color
    assert dark.layout.paper_bgcolor == "rgba(0,0,0,0)"
    with pytest.raises(ValueError, match="theme"):
        cpu.plot.step_time(theme="neon")


def test_reduce_extremes_keeps_the_shape():
    rng = np.random.default_rng(0)
    time = np.sort(rng.uniform(0, 1000, 200_000))
    value = rng.normal(0, 1, len(time)).cumsum()
    value[123_457] = value.max() + 50  # one spike
    keep = reduce_extremes(time, value, 4000)
    assert len(keep) <= 4001 and np.all(np.diff(keep) > 0)
    assert 123_457 in keep and 0 in keep and len(time) - 1 in keep
    buckets = np.minimum((time / time[-1] * 1000).astype(int), 999)
    kept = pd.Series(value[keep]).groupby(buckets[keep])
    whole = pd.Series(value).groupby(buckets)
    # each bucket's lowest and highest values survive (bucket edges may differ by rounding)
    assert np.mean(np.isclose(kept.max(), whole.max())) > 0.99
    assert np.mean(np.isclose(kept.min(), whole.min())) > 0.99
    np.testing.assert_array_equal(reduce_extremes(time[:10], value[:10], 4000), np.arange(10))


def test_memory_figure_matches_the_timeline(gpu):
    fig = gpu.plot.memory()
    summary = gpu.memory_summary.sort_values("peak_bytes_in_use", ascending=False,
                                             kind="stable")
    buttons = fig.layout.updatemenus[0].buttons
    assert len(buttons) == len(summary)  # one menu entry per allocator, highest peak first
    assert buttons[0].label.endswith(summary.allocator.iloc[0])
    peaks = [t for t in fig.data if t.name == "Peak"]
    np.testing.assert_allclose([p.y[0] * MIB for p in peaks], summary.peak_bytes_in_use)
    np.testing.assert_allclose([p.x[0] for p in peaks], summary.peak_time_us / 1e3)
    shown = [t for t in fig.data if t.visible is not False]
    assert {t.name for t in shown} == {"Stack", "Heap", "Free", "Fragmentation", "Allocations",
                                      "Peak"}
    assert next(t for t in shown if t.name == "Free").visible == "legendonly"
    # the allocation points are the timeline's events with their fields
    first = summary.iloc[0]
    tl = gpu.memory_timeline
    tl = tl[(tl.host == first.host) & (tl.allocator == first.allocator)].reset_index(drop=True)
    points = next(t for t in shown if t.name == "Allocations")
    assert len(points.x) == len(tl)  # short timelines are drawn whole
    np.testing.assert_allclose(np.asarray(points.y, float) * MIB, tl.in_use_bytes)
    custom = np.asarray(points.customdata, dtype=object)
    assert custom.shape == (len(tl), len(HOVER_FIELDS))
    assert list(custom[:, HOVER_FIELDS.index("tf_op")]) == tl.tf_op.fillna("").tolist()
    for field in ("requested", "allocated", "shape", "region", "step", "in use"):
        assert field in points.hovertemplate
    json.loads(fig.to_json())  # the views ship it as JSON


def test_memory_figure_reduces_long_timelines(gpu):
    fig = gpu.plot.memory(max_points=200)
    summary = gpu.memory_summary
    longest = summary.sort_values("num_allocations").iloc[-1]
    points = [t for t in fig.data if t.name == "Allocations"]
    assert max(len(p.x) for p in points) <= 201
    peaks = [t for t in fig.data if t.name == "Peak"]
    for p, heap in zip(points, peaks):  # the reduced line still reaches the peak
        assert max(p.y) == pytest.approx(heap.y[0])
    assert longest.num_allocations + longest.num_deallocations > 201


def test_op_stats_pies_sum_to_the_self_time(gpu):
    ops = gpu.op_stats
    with_idle, without = gpu.plot.op_stats(), gpu.plot.op_stats(include_idle=False)
    for fig, table in ((with_idle, gpu.op_stats_table(include_idle=True)),
                       (without, gpu.op_stats_table(include_idle=False))):
        for pie in fig.data:
            side, key = pie.name.split(" ")
            part = table[table.host_or_device == side]
            assert sum(pie.values) == pytest.approx(part.total_self_time_us.sum())
            assert len(pie.labels) <= 11
            assert pie.labels[0] == str(part.groupby(key).total_self_time_us.sum().idxmax())
    labels = {lab for pie in with_idle.data for lab in pie.labels}
    assert "IDLE" in labels and (ops.type == "IDLE").any()
    assert "IDLE" not in {lab for pie in without.data for lab in pie.labels}


def test_kernels_chart_ranks_the_kernels(gpu):
    ks = gpu.kernel_stats
    bar = gpu.plot.kernels(top=5).data[0]
    top = ks.head(5)
    np.testing.assert_allclose(bar.x[::-1], top.total_duration_us)  # largest at the top
    assert bar.y[-1].startswith(f"{top['rank'].iloc[0]}. ")
    # (the full names in the hover as text: C++ templates' brackets escaped)
    assert list(bar.customdata[::-1, 0]) == plain_all(top.kernel_name)


def test_pod_chart_is_the_mean_per_host(pod):
    fig = pod.plot.pod()
    pod = pod.pod
    mean = pod.groupby("host")[CATEGORY_COLUMNS].mean()
    for bar in fig.data:
        col = next(c for c in CATEGORY_COLUMNS if CATEGORY_LABELS[c] == bar.name)
        np.testing.assert_allclose(bar.y, mean.loc[list(bar.x), col])
    buttons = fig.layout.updatemenus[0].buttons
    assert len(buttons) == pod.step.nunique() + 1
    assert buttons[0].label == f"Mean of the {pod.step.nunique()} steps XProf's pod viewer " \
        "aligns across the 2 hosts"  # (not "each host's first and last included": a host's
    # first and last steps need not be aligned ones)
    step = sorted(pod.step.unique())[0]
    one = pod[pod.step == step].set_index("host")
    # each host's own number of the aligned step, where it is not the first host's
    own = [f"{h}: {n}" for h, n in zip(one.index, one.host_step) if n != step]
    assert buttons[1].label == f"Step {step}" + (f" ({', '.join(own)})" if own else "")
    first_bar = fig.data[0]
    col = next(c for c in CATEGORY_COLUMNS if CATEGORY_LABELS[c] == first_bar.name)
    np.testing.assert_allclose(buttons[1].args[0]["y"][0],
                               one[col].reindex(list(first_bar.x)).fillna(0))
    # the title says whose bars are shown: one step's alone, or back to the mean's
    assert all(b.method == "update" for b in buttons)
    assert buttons[1].args[1]["title.text"] == f"Step time per host: s{buttons[1].label[1:]} alone"
    assert buttons[0].args[1]["title.text"] == fig.layout.title.text
    assert fig.layout.title.text.startswith("Step time per host: mean of the ")


def test_input_pipeline_chart(cpu):
    fig = cpu.plot.input_pipeline()
    wait, rest, host = fig.data
    np.testing.assert_allclose(wait.y, cpu.steps.input_ms)
    np.testing.assert_allclose(np.add(wait.y, rest.y), cpu.steps.duration_ms)
    side = cpu.input_pipeline.host_side
    assert list(host.x) == side.category.tolist()
    np.testing.assert_allclose(host.y, side.time_us / 1e3)


def test_compare_chart(cpu, cpu_slowmap_logdir):
    comparison = tp.compare(cpu, tp.load(cpu_slowmap_logdir), labels=("before", "after"))
    fig = comparison.plot()
    a, b = fig.data
    assert (a.name, b.name) == ("before", "after")
    labels_to_col = {v: k for k, v in CATEGORY_LABELS.items()}
    for bar, key in ((a, "a"), (b, "b")):
        np.testing.assert_allclose(bar.y, [comparison.steps.loc[labels_to_col[x], key]
                                           for x in bar.x])
    # the title gives both runs' median step times and which way they went (it gave the
    # speed-up as "0.07x", which reads either way)
    st = comparison.step_time
    pct = 100 * (st["new"] - st["base"]) / st["base"]
    assert (f"median step time {st['base']:,.3f} -> {st['new']:,.3f} ms (after "
            f"{abs(pct):.1f}% {'slower' if pct > 0 else 'faster'})") in fig.layout.title.text


def test_kernel_labels_are_short_and_distinct(gpu):
    from tfprof_nb.plot.op_figures import kernel_label, short_kernel_name

    assert short_kernel_name("void tensorflow::functor::FillKernel<float, 3>(float*)") == \
        "FillKernel"
    assert short_kernel_name("ampere_sgemm_128x64_nn") == "ampere_sgemm_128x64_nn"
    assert kernel_label("k", "a/b/c/MatMul") == "k · c/MatMul"
    assert len(kernel_label("x" * 200, None)) == 60
    labels = list(gpu.plot.kernels().data[0].y)
    assert len(set(labels)) == len(labels)
    assert all(len(label) <= 104 for label in labels)
    # fourteen EigenMetaKernel templates: told apart without their rank, by their arguments
    bert = tp.load(DATA / "gpu_bert_multiworker" / "34.83.195.179_6003.xplane.pb")
    names = [y.split(". ", 1)[1] for y in bert.plot.kernels().data[0].y]
    eigen = [n for n in names if n.startswith("EigenMetaKernel")]
    assert len(eigen) > 10 and len(set(eigen)) == len(eigen)
    assert sum("TensorConversionOp" in n for n in eigen) >= 3


@pytest.fixture(scope="module")
def xla_gpu(tmp_path_factory):
    from ..analysis.xla_profiles import make

    return make(tmp_path_factory, "gpu")


def test_roofline_places_every_op_with_flops(xla_gpu):
    """As XProf's chart: each op at its bottleneck intensity (FLOPs per byte of the memory
    that bounds it), under the HBM roofline and the shared memory/L1 one (the GPU's peaks
    give both), so that a memory-bound op's height under its roof is its roofline
    efficiency, the table's."""
    prof = tp.load(xla_gpu / "full.xplane.pb")
    table = prof.roofline
    peaks = table.attrs["peaks"]
    fig = prof.plot.roofline()
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text.startswith("Bottleneck arithmetic intensity")
    roof = next(t for t in fig.data if t.name == "Roofline (HBM)")
    # the roof: bandwidth-bound below the ridge, flat at the peak past it
    np.testing.assert_allclose(roof.y[0] * 1e9, roof.x[0] * peaks.memory_bw_bytes_per_s)
    assert roof.y[-1] * 1e9 == pytest.approx(peaks.peak_flops_per_s)
    assert peaks.ridge_point_flops_per_byte in roof.x
    shm = next(t for t in fig.data if t.name == "Roofline (Shm/L1)")
    np.testing.assert_allclose(shm.y[0] * 1e9, shm.x[0] * peaks.shared_memory_bw_bytes_per_s)
    x = table.bottleneck_arithmetic_intensity_flops_per_byte
    placed = table[(table.category != "Program") & (table.flop_rate_flops_per_s > 0) & (x > 0)]
    points = [t for t in fig.data if t.mode == "markers" and t.name != "Whole program"]
    assert sum(len(t.x) for t in points) == len(placed)
    shown = {(row[0], round(x, 9), round(y, 6)) for t in points
             for row, x, y in zip(t.customdata, t.x, t.y)}
    assert shown == {(op, round(x, 9), round(rate / 1e9, 6)) for op, x, rate in zip(
        placed.operation, placed.bottleneck_arithmetic_intensity_flops_per_byte,
        placed.flop_rate_flops_per_s)}
    hbm = placed[placed.bound_by == "HBM"]
    assert len(hbm)
    under = hbm.flop_rate_flops_per_s / np.minimum(
        peaks.peak_flops_per_s, hbm.bottleneck_arithmetic_intensity_flops_per_byte
        * peaks.memory_bw_bytes_per_s)
    np.testing.assert_allclose(100 * under, hbm.roofline_efficiency_pct, rtol=1e-9)
    star = next(t for t in fig.data if t.name == "Whole program")
    program = table[table.category == "Program"].iloc[0]
    assert star.x[0] == pytest.approx(program.bottleneck_arithmetic_intensity_flops_per_byte)
    assert "bottleneck intensity" in star.customdata[0][7]


def test_tpu_roofline_draws_xprofs_roofs_and_places_the_program_under_its_own():
    """TPU v6e (merged VMEM): the HBM roofline and VMEM's read and write ones, as XProf
    draws them; the whole program at its HBM intensity (0.063 FLOP/byte, not the 0.042 of
    all its bytes), where its height under the HBM roof is its 4.3% roofline efficiency (at
    0.042 it read 6.5%)."""
    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    fig = prof.plot.roofline()
    assert [t.name for t in fig.data if t.name.startswith("Roofline")] == [
        "Roofline (HBM)", "Roofline (VMEM Read)", "Roofline (VMEM Write)"]
    program = prof.roofline.iloc[0]
    assert program.category == "Program" and program.bound_by == "HBM"
    star = next(t for t in fig.data if t.name == "Whole program")
    assert star.x[0] == program.hbm_arithmetic_intensity_flops_per_byte
    assert star.x[0] != pytest.approx(program.arithmetic_intensity_flops_per_byte, rel=0.1)
    roof = next(t for t in fig.data if t.name == "Roofline (HBM)")
    attainable = np.exp(np.interp(np.log(star.x[0]), np.log(roof.x), np.log(roof.y)))
    assert 100 * star.y[0] / attainable == pytest.approx(program.roofline_efficiency_pct)


def test_roofline_without_peaks_says_how_to_get_them(xla_gpu):
    prof = tp.load(xla_gpu / "unknown_gpu.xplane.pb")
    fig = prof.plot.roofline()
    assert not any(t.name.startswith("Roofline") for t in fig.data)
    assert fig.layout.xaxis.title.text == "Arithmetic intensity (FLOP/byte)"
    assert "set_device_peaks" in fig.layout.annotations[0].text
    with pytest.warns(DeprecationWarning, match="set_device_peaks"):
        fig = prof.plot.roofline(peak_flops_per_s=1e14, memory_bw_bytes_per_s=1e12)
    roof = next(t for t in fig.data if t.name == "Roofline (HBM)")
    assert roof.y[-1] == pytest.approx(1e14 / 1e9)
    with pytest.raises(ValueError, match="both"):
        prof.plot.roofline(peak_flops_per_s=1e14)
    prof.set_device_peaks(peak_flops_per_s=1e14, memory_bw_bytes_per_s=1e12)
    roof = next(t for t in prof.plot.roofline().data if t.name == "Roofline (HBM)")
    assert roof.y[-1] == pytest.approx(1e14 / 1e9)


def test_roofline_of_a_profile_without_xla(gpu):
    fig = gpu.plot.roofline()
    assert fig.data == () and "Nothing to place" in fig.layout.annotations[0].text


def test_op_stats_pies_leave_out_a_side_whose_ops_take_no_time():
    tpu = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")  # its host ops: 0 us, and IDLE
    host = tpu.op_stats_table(include_idle=False).query("host_or_device == 'Host'")
    assert len(host) and (host.total_self_time_us == 0).all()
    without = tpu.plot.op_stats(include_idle=False)
    assert {pie.name.split(" ")[0] for pie in without.data} == {"Device"}
    assert [a.text for a in without.layout.annotations] == ["Device self time by op",
                                                            "Device self time by type"]
    with_idle = tpu.plot.op_stats()  # host IDLE time alone: the host has sentences, no pie
    assert {pie.name.split(" ")[0] for pie in with_idle.data} == {"Device"}
    assert {a.name for a in with_idle.layout.annotations if a.name} == {"Host operation",
                                                                        "Host type", "caption"}


def test_the_pod_charts_title_says_whose_mean_it_draws():
    """One host of 20 steps: the bars average all 20 (XProf's pod viewer) while the
    overview's average counts 18 (without the first and last): the title says so and gives
    the overview's figure with its scope, not a second unexplained mean."""
    prof = tp.load(DATA / "jax_h200_counters")
    fig = prof.plot.pod()
    bars = sum(float(bar.y[0]) for bar in fig.data)
    page = prof.measures.loc["step_time_mean_ms"]
    assert abs(bars - page["value"]) > 0.5  # (two figures: 8.735 against 7.728 ms)
    title = fig.layout.title.text.replace("<br>", " ")  # (its note wrapped: plotly does not)
    assert title.startswith("Step time per host: mean of the 20 steps (the first and last "
                            "included")
    assert f"{page['value']:.3f} ms" in title and str(page["scope"]) in title


def test_bytes_are_written_as_the_pages_javascript_writes_them():
    """Three significant digits, every digit from 100 on (js/src/xlamemory.ts' humanBytes, whose
    test holds the same cases): a program's peak read 786.6 MiB in its menu, 787 MiB in its
    chart's title, and 1,000 MiB read 1e+03 MiB."""
    from tfprof_nb.plot.memory_figures import human_bytes

    assert human_bytes(21474836512) == "20 GiB"
    assert human_bytes(786.6 * 2**20) == "787 MiB"
    assert human_bytes(1000 * 2**20) == "1,000 MiB"
    assert human_bytes(3 * 2**20 + 2**19) == "3.5 MiB"
    assert human_bytes(1536) == "1.5 KiB" and human_bytes(12) == "12 B"
