"""Input pipeline analysis and the overview against xprof's input_pipeline_analyzer."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp

from ..conftest import DATA
from .oracle import gviz_frame, run_tool, step_table

LABELS = {"Preprocessing": "Data preprocessing", "Enqueue": "Enqueuing data to device",
          "Demanded file read": "Reading data from files on demand",
          "Advanced file read": "Reading data from files in advance"}
KEYS = {"enqueue": "enqueue_us", "demanded_file_read": "demanded_file_read_us",
        "advanced_file_read": "advanced_file_read_us", "preprocessing": "preprocessing_us",
        "unclassified": "unclassified_nonequeue_us"}


@pytest.fixture(params=["cpu_file", "gpu_fixture_file"])
def xplane(request):
    return request.getfixturevalue(request.param)


def test_verdict_and_statements_match_xprof(xplane):
    """The reference drops each profile's first and last step where it has more than five (we
    show every whole step, see test_steps); its figures count the steps it keeps, and so do
    ours (xprof_steps): verdicts, statements, step times and the overview's card are equal."""
    from tfprof_nb.analysis.steps.xprof_counted import xprof_steps
    from tfprof_nb.analysis.tf.input_pipeline import bottleneck_verdicts

    prof = tp.load(xplane)
    ref = run_tool(xplane, "input_pipeline_analyzer")
    props = ref[1]["p"]
    ref_steps = [int(s.split()[-1]) for s in gviz_frame(ref[1]).stepnum]
    # the verdicts count the steps the reference counts (xprof_steps), from every step
    assert xprof_steps(prof.steps).index.tolist() == ref_steps
    steps = prof.steps.loc[ref_steps]
    summary = bottleneck_verdicts(prof.steps)
    assert summary["input_statement"] == props["input_conclusion"]
    assert summary["all_other_statement"] == props["all_other_statement"]
    assert summary["kernel_launch_statement"] == props["kernel_launch_statement"]
    assert summary["device_collectives_statement"] == props["device_collectives_statement"]
    assert f"{steps.duration_ms.mean():.1f}" == props["steptime_ms_average"]
    assert f"{steps.duration_ms.min():.1f}" == props["steptime_ms_minimum"]
    assert f"{steps.duration_ms.max():.1f}" == props["steptime_ms_maximum"]
    # the profile's own analysis, overview and card give these figures
    assert prof.input_pipeline.summary["input_statement"] == props["input_conclusion"]
    assert prof.overview().input_bound["input_statement"] == props["input_conclusion"]
    assert f"{prof.input_pipeline.summary['duration_avg_ms']:.1f}" == \
        props["steptime_ms_average"]
    st = prof.overview().step_time
    assert (f"{st['avg_ms']:.1f}", f"{st['min_ms']:.1f}", f"{st['max_ms']:.1f}") == \
        (props["steptime_ms_average"], props["steptime_ms_minimum"],
         props["steptime_ms_maximum"])
    assert prof.measures.at["step_time_mean_ms", "value"] == st["avg_ms"]


def test_host_side_breakdown_and_input_ops_match_xprof(xplane):
    prof = tp.load(xplane)
    ref = run_tool(xplane, "input_pipeline_analyzer")
    ip = prof.input_pipeline
    for key, ref_key in KEYS.items():
        assert ip.host_side.loc[key, "time_us"] == pytest.approx(float(ref[2]["p"][ref_key]),
                                                                 abs=1e-3)
    ops = gviz_frame(ref[2])
    assert ip.input_ops.operation.tolist() == ops.opName.tolist()
    assert ip.input_ops["count"].tolist() == ops["count"].astype(int).tolist()
    np.testing.assert_allclose(ip.input_ops.self_time_ms, ops.selfTimeInMs, atol=1e-9)
    np.testing.assert_allclose(ip.input_ops.time_ms, ops.timeInMs, atol=1e-9)
    np.testing.assert_allclose(ip.input_ops.self_time_pct / 100, ops.selfTimeInPercent,
                               atol=1e-9)
    assert ip.input_ops.category.tolist() == [LABELS[c] for c in ops.category]


def test_overview_environment_and_reasons(gpu_fixture_file, cpu_file):
    from tfprof_nb.analysis.findings.overview import device_text

    gpu = tp.load(gpu_fixture_file).overview()
    env = gpu.environment
    # devices counted where they have events; the planes without any named apart
    assert env["device_type"] == "GPU" and env["device_planes"] == 8
    assert env["device_count"] == env["devices_with_activity"] == 3
    assert env["devices_without_events"] == [f"/device:GPU:{i}" for i in (0, 2, 3, 5, 7)]
    assert device_text(env) == "3 GPUs (5 more without events)"
    assert device_text({**env, "device_count": 1, "devices_without_events": []}) == "1 GPU"
    assert set(env["devices"].compute_capability) == {"7.0"}
    assert gpu.precision["device_compute_16bit_pct"] > 0
    assert not gpu.top_host_ops.empty
    cpu = tp.load(cpu_file).overview()
    assert cpu.environment["device_type"] == "CPU"
    assert any("no GPU" in r for r in cpu.reasons)
    assert len(cpu.top_host_ops) == 10
    assert "step time" in repr(cpu)


def test_recommendations_are_structured(cpu_file):
    findings = tp.load(cpu_file).recommendations()
    for f in findings:
        assert f.kind and f.what and f.fix and isinstance(f.evidence, dict)
        assert all(isinstance(v, (int, float, str)) for v in f.evidence.values())


def test_repr_names_xprofs_rule_where_the_page_measures_otherwise():
    """BERT: prof.input_pipeline is XProf's verdict from the step-time breakdown (input
    0.0%), the page's input wait is GPU:6's own (7.9%): its repr says whose rule it quotes."""
    prof = tp.load(DATA / "gpu_bert_multiworker")
    ip, row = prof.input_pipeline, prof.measures.loc["input_wait_pct"]
    text = repr(ip)
    assert f"input {ip.summary['input_pct']:.1f}% of step time" in text
    assert f"{ip.summary['input_pct']:.1f}" != f"{row['value']:.1f}"
    assert "XProf's rule" in text, text
    # one idle figure: the page's (prof.measures), none beside it in XProf's verdicts (a
    # former 'idle_pct' there, 100 minus some categories, read 100% on CPU)
    assert not [k for k in ip.summary if "idle" in k]


def test_xprof_figures_count_the_steps_xprof_counts_on_a_jax_gpu_capture():
    """The H200 capture of 20 device steps, whose last runs 27.8 ms (the others 7.4-8.5): the
    reference counts steps 1-18, and so do the figures said as XProf's (the average step
    time card, 'All Others' and the overview's breakdown), while the median counts all 20."""
    from tfprof_nb.analysis.steps.xprof_counted import xprof_steps

    path = DATA / "jax_h200_counters" / "vm.xplane.pb"
    prof = tp.load(path)
    table, props = step_table(path)
    counted = xprof_steps(prof.steps)
    assert len(prof.steps) == 20
    assert counted.step_name.tolist() == table.stepnum.tolist()
    st, m = prof.overview().step_time, prof.measures
    for ours, key in ((st["avg_ms"], "steptime_ms_average"), (st["min_ms"], "steptime_ms_minimum"),
                      (st["max_ms"], "steptime_ms_maximum"),
                      (st["std_ms"], "steptime_ms_standard_deviation"),
                      (counted.other_ms.mean(), "other_time_ms_avg")):
        assert f"{ours:.1f}" == props[key], key
    assert m.at["step_time_mean_ms", "value"] == st["avg_ms"]
    assert m.at["all_other_pct", "value"] == pytest.approx(
        100 * counted.other_ms.sum() / counted.duration_ms.sum())
    assert "the 18 steps XProf counts" in m.at["all_other_pct", "scope"]
    assert m.at["step_time_median_ms", "value"] == prof.steps.duration_ms.median()
    assert m.at["step_time_median_ms", "scope"] == "over the 20 steps"
    # the spreads name their extremes' steps: the mean's among those counted, the median's all
    from tfprof_nb.analysis.findings.measure_words import spread_words

    for key, steps in (("step_time_mean_ms", counted), ("step_time_median_ms", prof.steps)):
        d = steps.duration_ms
        assert (m.at[key, "min_of"], m.at[key, "max_of"]) == (f"step {d.idxmin()}",
                                                              f"step {d.idxmax()}")
        assert spread_words(m.loc[key]).startswith(f"per step: min {d.min():.1f} ms (step ")
    assert m.at["step_time_median_ms", "max_of"] == "step 19"  # the 27.8 ms step XProf drops


def test_a_step_the_window_cut_is_not_dropped_twice():
    """A load whose window cuts the H200 capture's last step keeps steps 0-18; XProf drops
    the first and last of the full 20, so it still counts 1-18 (the cut one is gone already)
    and the figures equal the whole file's."""
    from tfprof_nb.analysis.steps.xprof_counted import xprof_steps

    path = DATA / "jax_h200_counters"
    whole = tp.load(path)
    last_start = float(whole.steps.start_us.iloc[-1])
    cut = tp.load(path, window=(0.0, last_start + 1000.0))
    assert cut.steps.index.tolist() == list(range(19))
    assert xprof_steps(cut.steps).index.tolist() == list(range(1, 19))
    assert cut.measures.at["step_time_mean_ms", "value"] == pytest.approx(
        whole.measures.at["step_time_mean_ms", "value"], rel=1e-12)
    assert cut.measures.at["step_time_mean_ms", "scope"] == \
        "over the 18 steps XProf counts, without the first of the 19"


def test_a_pods_xprof_figures_take_its_aligned_steps(tmp_path):
    """Two GPU hosts (the 20-step H200 capture and the 10-step transformer) as one run: XProf
    aligns their counted steps (18 and 8) and keeps the 8 both have, a step's time the slower
    host's and the breakdown the first host's; the figures said as XProf's are those."""
    import shutil

    from tfprof_nb.analysis.steps.xprof_counted import xprof_count

    paths = [tmp_path / "a.xplane.pb", tmp_path / "b.xplane.pb"]
    shutil.copy(DATA / "jax_h200_counters" / "vm.xplane.pb", paths[0])
    shutil.copy(DATA / "jax_h200_transformer.xplane.pb", paths[1])
    prof = tp.load(tmp_path)
    table, props = step_table(paths)
    xprof = xprof_count(prof.steps)
    assert len(table) == len(xprof.step_ms) == 8 and xprof.hosts == ["a", "b"]
    assert (xprof.rows.host == "a").all()
    assert np.allclose(xprof.rows.duration_ms, table.stepTimeMs.astype(float), atol=1e-3)
    st, m = prof.overview().step_time, prof.measures
    for ours, key in ((st["avg_ms"], "steptime_ms_average"), (st["min_ms"], "steptime_ms_minimum"),
                      (st["max_ms"], "steptime_ms_maximum"),
                      (st["std_ms"], "steptime_ms_standard_deviation"),
                      (xprof.rows.other_ms.mean(), "other_time_ms_avg"),
                      (xprof.rows.device_compute_ms.mean(), "device_compute_time_ms_avg")):
        assert f"{ours:.1f}" == props[key], key
    assert m.at["step_time_mean_ms", "value"] == st["avg_ms"]
    assert m.at["step_time_mean_ms", "scope"].startswith(
        "over the 8 steps XProf aligns across 2 hosts (without each host's first and last")
    # (the median is tp.check's: of the 10 steps paired across the hosts, each its slowest's)
    assert m.at["step_time_median_ms", "scope"] == ("over the 10 steps of 2 hosts paired as "
                                                    "XProf's pod viewer aligns them, each its "
                                                    "slowest host's time")


def test_a_pods_steps_aligned_by_each_files_own_times():
    """Two TensorFlow workers on one machine, captured together under load (capture_remote):
    their sessions began 0.41 ms apart, and each file times its events from its own start.
    XProf lays those times side by side as they are: its best offset keeps the chief's 138
    steps; on the wall clock the best would be another (3 steps later, 136 kept).  Ours are
    XProf's steps, rows and figures; the page counts the steps one way."""
    from tfprof_nb.analysis.steps.xprof_counted import xprof_count
    from tfprof_nb.widgets.overview_view import OverviewView

    run = DATA / "tf_two_workers_loaded"
    prof = tp.load(run)
    table, props = step_table([run / f"{h}.xplane.pb" for h in prof.hosts])
    xprof = xprof_count(prof.steps)
    assert xprof.pod and len(xprof.hosts) == 2 and len(table) == 138
    assert xprof.rows.step_name.tolist() == table.stepnum.tolist()
    assert np.allclose(xprof.rows.duration_ms, table.stepTimeMs.astype(float), atol=1e-3)
    # the steps XProf's figures count (solid in the step-time chart): 138 of each worker's,
    # the first host's those its breakdown reads
    counted = prof.steps[xprof.counted]
    assert counted.groupby("host").size().tolist() == [138, 138]
    assert counted[counted.host == prof.hosts[0]].step_name.tolist() == table.stepnum.tolist()
    ov = prof.overview()
    st = ov.step_time
    assert st["counted"] == 138
    for ours, key in ((st["avg_ms"], "steptime_ms_average"), (st["min_ms"], "steptime_ms_minimum"),
                      (st["max_ms"], "steptime_ms_maximum"),
                      (st["std_ms"], "steptime_ms_standard_deviation")):
        assert f"{ours:.1f}" == props[key], key
    # one count of the steps on the page: the workers ran different step numbers (1498-1640
    # and 1442-1581: 199 numbers, which count no real step), 143 and 140 steps; the page
    # counts each host's, never the numbers
    rows, numbers = len(prof.steps), prof.steps.index.nunique()
    assert (rows, numbers) == (283, 199)
    assert prof.steps.groupby("host").size().tolist() == [143, 140]
    # the median (tp.check's, tp.compare's) is over the steps XProf's pod viewer pairs (140),
    # each its slowest host's time: equal step numbers would pair unrelated steps
    median = prof.measures.loc["step_time_median_ms"]
    slowest = prof.pod.groupby("step", sort=False).duration_ms.max()
    assert len(slowest) == 140 and median.value == slowest.median()
    assert median.scope == ("over the 140 steps of 2 hosts paired as XProf's pod viewer "
                            "aligns them, each its slowest host's time")
    check = tp.check(prof, max_step_ms=1e9).rows[0]
    assert check.value == median.value and "the 140 steps of 2 hosts" in check.evidence
    assert (f"{st['avg_ms']:.3f} ms avg (std {st['std_ms']:.3f}, min {st['min_ms']:.3f}, max "
            f"{st['max_ms']:.3f}) over the 138 steps XProf aligns across 2 hosts") in repr(ov)
    cards = dict((c[0], c[1]) for c in OverviewView.state(prof).values["cards"])
    assert cards["Steps"] == "140 to 143 on each of 2 hosts, 283 host steps (step markers)"


def test_pod_alignment_follows_the_overlap_of_the_steps():
    """Hand-made step tables: the second host's steps overlap the first's from its 4th on, so
    XProf's steps are the 6 both have there; hosts that never overlap align at their starts;
    a worker without steps leaves none; a host without a device is left out beside one."""
    import pandas as pd

    from tfprof_nb.analysis.steps.xprof_counted import (CUT_ENDS, FILE_TIME_NS, HOST_DEVICES,
                                                        xprof_count)

    def host(name, starts, ms):
        return pd.DataFrame({"host": name, "start_us": np.asarray(starts, float) * 1e3,
                             "duration_ms": np.asarray(ms, float), "other_ms": 0.0,
                             "source": "markers"},
                            index=pd.Index(range(len(starts)), name="step"))

    a = host("a", np.arange(12) * 10.0, [9.0] * 12)  # 12 steps: 1-10 counted
    b = host("b", 40.0 + np.arange(8) * 10.0, [9.5] * 8)  # 8: 1-6 counted, a's 5-10
    steps = pd.concat([a, b])
    steps.attrs[HOST_DEVICES] = {"a": True, "b": True}
    got = xprof_count(steps)
    assert got.rows.index.tolist() == [5, 6, 7, 8, 9, 10] and (got.rows.host == "a").all()
    assert got.step_ms.tolist() == [9.5] * 6  # the slower host's
    far = pd.concat([a, host("b", 1e6 + np.arange(8) * 10.0, [9.5] * 8)])
    assert xprof_count(far).rows.index.tolist() == [1, 2, 3, 4, 5, 6]  # no overlap: offset 0
    # the overlaps are of the files' own times: b's file times its steps 40 ms earlier than
    # the profile's axis does (its session began 40 ms later), so they overlap a's from a's 1st
    steps.attrs[FILE_TIME_NS] = {"a": 0, "b": -40_000_000}
    assert xprof_count(steps).rows.index.tolist() == [1, 2, 3, 4, 5, 6]
    steps.attrs[FILE_TIME_NS] = {"a": 10**18, "b": 10**18}  # (absolute: the same offset)
    assert xprof_count(steps).rows.index.tolist() == [5, 6, 7, 8, 9, 10]
    del steps.attrs[FILE_TIME_NS]
    steps.attrs[HOST_DEVICES] = {"a": True, "b": True, "c": True}  # c: a worker, no steps
    assert xprof_count(steps).rows.empty and xprof_count(steps).step_ms.empty
    steps.attrs[HOST_DEVICES] = {"a": True, "b": True, "c": False}  # c: a coordinator
    assert len(xprof_count(steps).rows) == 6
    steps.attrs[HOST_DEVICES] = {"c": False, "a": True, "b": True}  # the first host: no device
    assert xprof_count(steps).rows.empty and len(xprof_count(steps).step_ms) == 6
    # a table filtered to one host (the other had steps: it is in CUT_ENDS) is that host's
    steps.attrs[CUT_ENDS] = {"a": (12, False, False), "b": (8, False, False)}
    steps.attrs[HOST_DEVICES] = {"a": True, "b": True}
    only_b = xprof_count(steps[(steps.host == "b").to_numpy()])
    assert not only_b.pod and only_b.rows.index.tolist() == [1, 2, 3, 4, 5, 6]


def test_without_steps_the_input_pipeline_gives_no_verdict():
    """No step time (MI300X gemm): XProf says it cannot tell where the bottleneck is, so
    the next step does not say the input pipeline is not the bottleneck, and the repr
    gives no 0.0% input share."""
    prof = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb")
    ip = prof.input_pipeline
    assert ip.summary["classification"] == "unknown"
    assert "cannot be told" in ip.summary["next_step"]
    assert repr(ip) == "<InputPipelineAnalysis, XProf's rule (the step-time breakdown): no steps>"


def test_a_pods_input_share_says_whose_time_it_is_over():
    """Two TF workers: XProf's input share is the breakdown host's input over that host's
    own time in the 138 aligned steps (13.9%), not over the steps' slowest-host time (11.4%):
    the scope says so, and does not say 'a step's time is its slowest host's' (the mean step
    time's rule, which keeps it)."""
    from tfprof_nb.analysis.steps.xprof_counted import xprof_count

    prof = tp.load(DATA / "tf_two_workers_loaded")
    xprof = xprof_count(prof.steps)
    rows, host = xprof.rows, xprof.rows.host.iloc[0]
    m = prof.measures
    own = 100 * rows.input_ms.sum() / rows.duration_ms.sum()
    assert m.at["input_wait_pct", "value"] == pytest.approx(own)
    assert f"{own:.1f}" != f"{100 * rows.input_ms.sum() / xprof.step_ms.sum():.1f}"
    for key in ("input_wait_pct", "all_other_pct"):
        scope = m.at[key, "scope"]
        assert f"{host}'s breakdown, over its own time in them" in scope, scope
        assert "slowest host's" not in scope
    assert "a step's time is its slowest host's" in m.at["step_time_mean_ms", "scope"]
    # the verdict, XProf's own text ("of the total step time sampled"), says whose time
    said = prof.overview().verdict["statement"]
    assert said.startswith("Your program is MODERATELY input-bound because 13.9% of the "
                           "total step time sampled")
    assert (f"(XProf's rule: {own:.1f}% over the 138 steps XProf aligns across 2 hosts "
            f"(without each host's first and last where it has more than five; {host}'s "
            "breakdown, over its own time in them).)") in said


def test_a_pods_xprof_share_statements_say_whose_time_they_are_over():
    """Two TF workers: XProf's 'All Others' statement ("38.6 % of the total step time sampled
    ...") is the same breakdown host's share over its own time in the aligned steps as the
    input verdict beside it; it says so as XProf's, with the measure's scope, on the page
    and in tfprof summary's JSON (it read as the pod's, with no rule or scope)."""
    from tfprof_nb.cli.summary import summarise
    from tfprof_nb.widgets.overview_view import overview_statements

    prof = tp.load(DATA / "tf_two_workers_loaded")
    m, ov = prof.measures, prof.overview()
    other = m.at["all_other_pct", "value"]
    scope = m.at["all_other_pct", "scope"].removesuffix(" (XProf's step-time breakdown)")
    assert "XProf aligns across 2 hosts" in scope
    shares = ov.verdict["xprof_shares"]
    assert len(shares) == 1 and shares[0].startswith(f"{other:.1f} % of the total step time "
                                                     "sampled is spent on 'All Others' time")
    assert shares[0].endswith(f"(XProf's rule: {other:.1f}% over {scope}.)")
    assert shares[0] in overview_statements(ov)
    assert summarise(prof)["input_bound"]["other_statements"] == shares


@pytest.mark.parametrize("name", ["tf_two_workers_loaded", "tpu_v6e_jax_inference.xplane.pb",
                                  "gpu_bert_multiworker"])
def test_xprofs_host_count_is_carried_and_said_where_it_differs(name):
    """XProf's overview counts distinct machine names (an XSpace's first host name,
    "localhost" without one: the TPU capture's), ours the hosts' profiles: the two workers
    ran on one machine, 2 hosts for us, 1 for XProf, and the overview's card says both."""
    from tfprof_nb.widgets.overview_view import OverviewView

    prof = tp.load(DATA / name)
    files = sorted((DATA / name).glob("*.xplane.pb")) if (DATA / name).is_dir() \
        else [DATA / name]
    props = {k: v for t in run_tool(files if len(files) > 1 else files[0], "overview_page")
             for k, v in t.get("p", {}).items()}
    env = prof.overview().environment
    assert env["xprof_host_count"] == int(props["host_count"])
    assert env["host_count"] == len(files)
    (card,) = [c for c in OverviewView.state(prof).values["cards"] if c[0] == "Hosts / devices"]
    said = f"(XProf: {env['xprof_host_count']} host: it counts distinct machine names)"
    assert (said in card[1]) is (env["xprof_host_count"] != env["host_count"])
    # the CLI's Hosts line says it too (one page, one host figure and XProf's beside it)
    from tfprof_nb.cli.summary import summarise, summary_text

    hosts_line = next(line for line in summary_text(summarise(prof)).splitlines()
                      if line.startswith("Hosts"))
    assert (said in hosts_line) is (env["xprof_host_count"] != env["host_count"])
    if name == "tf_two_workers_loaded":
        assert (env["host_count"], env["xprof_host_count"]) == (2, 1)
