"""GPU time accounting, overlap, launch latency, duty cycle and stragglers: synthetic edge
cases with known answers, and the real captures (BERT on 8 GPUs with CUPTI, JAX on ROCm, a
TPU against xprof's duty cycle)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.runtime.decoding.decode import decode_host
from tfprof_nb.analysis.gpu.activity import NO_LAUNCH, device_activity, launch_links
from tfprof_nb.analysis.gpu.time import CAUSE_COLUMNS
from tfprof_nb.analysis.trace.intervals import intersect, measure_in, subtract, union

from ..conftest import DATA
from .gpu_spaces import kernels_with_launches, write
from .oracle import run_tool

GPU = "/device:GPU:0"
HOST = "/host:CPU"
REAL = [DATA / "gpu_bert_multiworker" / "34.83.195.179_6003.xplane.pb",
        DATA / "mi300x_jax08_gemm.xplane.pb", DATA / "mi300x_jax08_conv.xplane.pb",
        DATA / "tpu_v6e_jax_inference.xplane.pb", DATA / "jax_h200_transformer.xplane.pb",
        DATA / "jax_h200_nocmdbuf.xplane.pb"]


def _profile(tmp_path, name, kernels, launch_at, host_extra=(), device_extra=None):
    host, device = kernels_with_launches(kernels, launch_at)
    planes = {HOST: {"launcher": host + list(host_extra)},
              GPU: {"Stream #1(Compute)": device, **(device_extra or {})}}
    return tp.load(write(tmp_path, name, planes))


def _device_row(prof, step=None):
    u = prof.gpu_utilization
    rows = u[(u.stream == "all") & (u.device == GPU)]
    return rows.iloc[0] if step is None else rows.set_index("step").loc[step]


def _check_sums(table: pd.DataFrame):
    parts = table[["busy_us", *CAUSE_COLUMNS]].sum(axis=1)
    np.testing.assert_allclose(parts, table.wall_us, rtol=0, atol=1e-6)
    np.testing.assert_allclose(table.idle_us, table.wall_us - table.busy_us, atol=1e-6)
    assert (table[["busy_us", *CAUSE_COLUMNS]] >= 0).all().all()


def test_interval_algebra_against_a_dense_grid():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 500, 40)
    b = rng.integers(0, 500, 40)
    A = union(a, a + rng.integers(0, 30, 40))
    B = union(b, b + rng.integers(0, 30, 40))
    grid = np.arange(600)

    def dense(s):
        return ((grid[:, None] >= s[0]) & (grid[:, None] < s[1])).any(axis=1)

    assert (dense(intersect(A, B)) == (dense(A) & dense(B))).all()
    assert (dense(subtract(A, B)) == (dense(A) & ~dense(B))).all()
    w0, w1 = np.array([0, 100, 250, 50]), np.array([600, 300, 260, 450])
    expect = [dense(A)[lo:hi].sum() for lo, hi in zip(w0, w1)]
    assert measure_in(A, w0, w1).tolist() == expect


def test_launch_bound_gaps(tmp_path):
    """Kernels of 2 us, 5 us apart, each launched after the previous one ended."""
    kernels = [(100 + 7 * i, 2) for i in range(10)]
    prof = _profile(tmp_path, "launch", kernels, [s - 3 for s, _ in kernels])
    row = _device_row(prof)
    assert row.wall_us == pytest.approx(65) and row.busy_us == pytest.approx(20)
    assert row.launch_bound_us == pytest.approx(45) and row.host_bound_us == 0
    assert row.kernels == 10
    findings = {f.kind: f for f in prof.recommendations()}
    f = findings["launch_bound"]
    assert f.evidence["small_kernels_pct"] == pytest.approx(100)
    assert f.evidence["launch_gap_pct"] == pytest.approx(100 * 45 / 65)
    assert f.measure == "launch_gap_pct" and "69.2%" in f.what and "short gaps" in f.what


def test_host_bound_and_queued_gaps(tmp_path):
    kernels = [(100 + 52 * i, 2) for i in range(10)]
    late = _device_row(_profile(tmp_path, "late", kernels, [s - 3 for s, _ in kernels]))
    assert late.host_bound_us == pytest.approx(9 * 50) and late.other_us == 0
    queued = _device_row(_profile(tmp_path, "queued", kernels, list(range(10))))
    assert queued.other_us == pytest.approx(9 * 50) and queued.host_bound_us == 0


def test_no_launches_recorded(tmp_path):
    """No correlation ids: short gaps still count as launch-bound, long ones as other; the
    launch tables are empty and say why."""
    kernels = [(100, 2), (107, 2), (200, 2)]
    prof = _profile(tmp_path, "nolaunch", kernels, [None] * 3)
    row = _device_row(prof)
    assert row.step == -1  # no steps without launches: the profile window
    assert row.launch_bound_us == pytest.approx(5) and row.other_us == pytest.approx(91)
    ll = prof.launch_latency
    assert ll.per_kernel.empty and ll.queue.empty and ll.reasons
    assert list(ll.histogram.columns) == ["host", "device", "bin", "lo_us", "hi_us",
                                          "launches"]


def test_input_sync_and_copies_take_priority(tmp_path):
    kernels = [(100, 10), (160, 10)]
    host_extra = [("IteratorGetNext", 125, 15, {}), ("cudaStreamSynchronize", 110, 15, {})]
    copies = {"Stream #2(MemcpyH2D)": [("MemcpyH2D", 140, 5, {"group_id": 1,
                                                               "correlation_id": 99})]}
    prof = _profile(tmp_path, "waits", kernels, [0, 150], host_extra, copies)
    row = _device_row(prof)
    assert row.busy_us == pytest.approx(20)
    assert row.sync_memcpy_us == pytest.approx(15 + 5)  # the sync call, then the copy
    assert row.input_us == pytest.approx(15)
    assert row.host_bound_us == pytest.approx(15)  # 145..160: launched at 150, after 110
    u = prof.gpu_utilization
    _check_sums(u)
    copy_stream = u[u.stream == "Stream #2(MemcpyH2D)"].iloc[0]
    assert copy_stream.busy_us == 0 and copy_stream.kernels == 0


def test_overlapping_streams_and_collectives(tmp_path):
    compute = [("fusion", 0, 100, {"group_id": 1, "correlation_id": 1})]
    nccl = [("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 100,
             {"group_id": 1, "correlation_id": 2})]
    launches = [("cudaLaunchKernel", -20, 1, {"correlation_id": 1}),
                ("cudaLaunchKernel", -10, 1, {"correlation_id": 2})]
    prof = tp.load(write(tmp_path, "streams", {
        HOST: {"launcher": launches},
        GPU: {"Stream #1(Compute)": compute, "Stream #7(Nccl)": nccl}}))
    u = prof.gpu_utilization.set_index("stream")
    assert u.loc["all", "busy_us"] == pytest.approx(150)
    assert u.loc["Stream #1(Compute)", "busy_us"] == pytest.approx(100)
    assert u.loc["Stream #7(Nccl)", "busy_us"] == pytest.approx(100)
    ov = prof.gpu_overlap.iloc[0]
    assert (ov.compute_us, ov.collective_us, ov.hidden_us, ov.exposed_us) == \
        pytest.approx((100, 100, 50, 50))
    assert ov.hidden_pct == pytest.approx(50)
    ll = prof.launch_latency
    assert sorted(ll.per_kernel.mean_latency_us) == pytest.approx([20, 60])


def test_one_kernel_steps(tmp_path):
    dev, launches = [], []
    for g, t in ((1, 0), (2, 100)):
        dev.append(("MemcpyH2D", t, 10, {"group_id": g, "correlation_id": 10 * g}))
        dev.append(("fusion", t + 20, 10, {"group_id": g, "correlation_id": 10 * g + 1}))
        launches += [("cudaMemcpyAsync", -50 + g, 1, {"correlation_id": 10 * g}),
                     ("cudaLaunchKernel", -40 + g, 1, {"correlation_id": 10 * g + 1})]
    prof = tp.load(write(tmp_path, "onekernel", {HOST: {"launcher": launches},
                                                 GPU: {"Stream #1(Compute)": dev}}))
    assert len(prof.steps) == 2
    for step in prof.steps.index:
        row = _device_row(prof, step)
        assert (row.wall_us, row.busy_us, row.sync_memcpy_us, row.other_us) == \
            pytest.approx((30, 10, 10, 10))
        assert row.kernels == 1  # everything was queued: the gaps are "other"
    q = prof.launch_latency.queue
    # the queue's integral is the sum of the latencies (launch start to kernel start)
    t = q.time_us.to_numpy()
    area = float((np.diff(t) * q.queued.to_numpy()[:-1]).sum())
    assert area == pytest.approx((0 + 49) + (20 + 39) + (100 + 48) + (120 + 38))


def test_stragglers_across_hosts(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for host, late in (("worker-0", 0), ("worker-1", 30)):
        dev, launches = [], []
        for g, t in ((1, 0), (2, 1000)):
            dev.append(("fusion", t, 100 + late * g, {"group_id": g, "correlation_id": g}))
            launches.append(("cudaLaunchKernel", t - 10, 1, {"correlation_id": g}))
        write(run, host, {HOST: {"launcher": launches}, GPU: {"Stream #1": dev}})
    prof = tp.load(run)
    s = prof.stragglers.set_index("step")
    assert list(s.index) == [1, 2]
    assert (s.last_host == "worker-1").all()
    assert s.loc[1, "spread_us"] == pytest.approx(30)
    assert s.loc[2, "spread_us"] == pytest.approx(60)
    finish = prof.stragglers.attrs["finish"]
    assert len(finish) == 4 and finish.behind_us.max() == pytest.approx(60)
    assert any(f.kind == "straggler" and "worker-1" in f.what
               for f in prof.recommendations())


def test_hosts_that_do_not_step_together_are_not_compared():
    """Two TensorFlow workers that train each on its own (tests/data/tf_two_workers_loaded):
    their step numbers 1498-1581 are on both, each host's "step 1500" about 0.3 s from the
    other's.  Those are no lags: no step is compared across the hosts, a reason says why, and
    there is no straggler finding (there was: 'finishes last in 84 of 84 steps, 6104 %')."""
    prof = tp.load(DATA / "tf_two_workers_loaded")
    steps = prof.steps
    both = steps.groupby(level=0).host.nunique()
    shared = both.index[both > 1]
    assert len(shared) == 84
    s = prof.stragglers
    assert s.empty and sorted(s.attrs["apart"].tolist()) == shared.tolist()
    assert s.attrs["reasons"] == ["84 step numbers that several hosts have at times that do not "
                                  "overlap (the hosts do not step together) are not compared"]
    assert not set(s.attrs["finish"].step) & set(shared)
    assert not any(f.kind == "straggler" for f in prof.recommendations())


def test_a_two_host_straggler_is_measured_against_the_other_host():
    """Two workers stepping together (tests/data/tf_multiworker_ring): the median of two
    finishers is halfway between them, which no host is, so the finding measures the last
    host against the other one, as a share of each step's time (its slowest host's), and says
    each number once (it read "10 % of a step after the median host (host worker-1, lag
    behind the median host 9.9%, ...)")."""
    prof = tp.load(DATA / "tf_multiworker_ring")
    s = prof.stragglers
    assert (s.devices == 2).all() and len(s) == 12
    slowest = (1e3 * prof.steps.duration_ms).groupby(level=0).max()
    pct = 100 * float((s.spread_us.to_numpy() / slowest[s.step].to_numpy()).mean())
    (f,) = [f for f in prof.recommendations() if f.kind == "straggler"]
    assert f.evidence["lag_pct"] == pytest.approx(pct)
    assert f.what == (f"Host {s.last_host.mode()[0]} finishes last in "
                      f"{int((s.last_host == s.last_host.mode()[0]).sum())} of the 12 steps "
                      f"compared across hosts, on average {s.spread_us.mean() / 1e3:,.2f} ms "
                      f"after the other host: {pct:.1f}% of the step's time")
    assert str(f) == f"[{f.severity}] {f.what}. Fix: {f.fix}"


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_captures_sum_to_wall_time(path):
    prof = tp.load(path)
    u = prof.gpu_utilization
    assert len(u) and set(u.columns) >= {"busy_us", *CAUSE_COLUMNS}
    _check_sums(u)
    ov = prof.gpu_overlap
    np.testing.assert_allclose(ov.hidden_us + ov.exposed_us, ov.collective_us, atol=1e-6)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_launches_taken_from_the_launch_links_equal_a_fresh_join(path):
    """gpu_time reads each device event's launch from the launch_links step's pairs."""
    hd = decode_host("h", path)
    links = launch_links(hd)
    joined, shared = device_activity(hd), device_activity(hd, links)
    assert len(joined.rows) and (joined.launch != NO_LAUNCH).any() == (len(links[0]) > 0)
    for field in dataclasses.fields(joined):
        np.testing.assert_array_equal(getattr(joined, field.name), getattr(shared, field.name))


def test_a_devices_activity_is_a_slice_of_the_hosts(gpu_fixture_file):
    act = device_activity(decode_host("h", gpu_fixture_file))
    planes = np.unique(act.device).tolist()
    assert len(planes) > 1
    for plane in planes:
        view, copy = act.of_device(plane), act.take(act.device == plane)
        assert len(view) and np.shares_memory(view.begin, act.begin)
        for field in dataclasses.fields(act):
            np.testing.assert_array_equal(getattr(view, field.name), getattr(copy, field.name))
    assert act.take(np.ones(len(act), bool)) is act


def test_bert_busy_time_is_the_step_tables_device_compute(gpu_fixture_file):
    """GPU 6 runs the step: its busy time (kernels) and the part of its copies (MemcpyH2D/D2H,
    device compute to the reference) that no kernel overlaps make the step's device compute."""
    prof = tp.load(gpu_fixture_file)
    row = prof.gpu_utilization.set_index(["device", "stream", "step"]).loc[
        ("/device:GPU:6", "all", 0)]
    ev = prof.events
    copies = ev[(ev.plane == "/device:GPU:6") & ev.name.str.startswith("Memcpy")]
    assert len(copies) and copies.duration_us.sum() > 0
    compute_us = 1e3 * prof.steps.device_compute_ms.iloc[0]
    assert row.busy_us < compute_us < row.busy_us + copies.duration_us.sum()
    assert row.launch_bound_us > 0 and row.input_us > 0


def test_time_outside_every_step_has_its_own_rows(gpu_fixture_file):
    """BERT's only step is GPU 6's: GPU 4 ran its 665 kernels before it and GPU 1 only
    copies.  Their time outside the step is in rows of step OUTSIDE_STEPS (busy there as the
    duty cycle counts it), and their step rows are idle with no cause (no input wait: the
    device had no kernel in the step, so nothing it waited for)."""
    from tfprof_nb.analysis.gpu.time import OUTSIDE_STEPS

    prof = tp.load(gpu_fixture_file)
    u = prof.gpu_utilization
    dev = u[u.stream == "all"].set_index(["device", "step"])
    duty = prof.duty_cycle.set_index("device")
    for gpu in ("/device:GPU:1", "/device:GPU:4"):
        step = dev.loc[(gpu, 0)]
        assert step.busy_us == 0 and step.other_us == pytest.approx(step.wall_us)
        assert step.input_us == 0
        out = dev.loc[(gpu, OUTSIDE_STEPS)]
        assert out.busy_us == pytest.approx(duty.loc[gpu, "busy_us"])
        assert out.kernels == duty.loc[gpu, "kernels"]
        assert out.wall_us == pytest.approx(duty.loc[gpu, "span_us"])  # all outside the step
    six = dev.loc[("/device:GPU:6", OUTSIDE_STEPS)]
    assert six.busy_us == 0 and six.kernels == 0  # its kernels all ran in the step
    assert six.wall_us + dev.loc[("/device:GPU:6", 0)].wall_us == pytest.approx(
        duty.loc["/device:GPU:6", "span_us"])
    _check_sums(u)


def test_outside_rows_only_with_steps(tmp_path):
    """Two steps and a kernel between them: the outside row holds the kernel and the gaps
    between the steps' windows, not the steps' time; without steps there is none."""
    from tfprof_nb.analysis.gpu.time import OUTSIDE_STEPS

    dev = [("fusion", 0, 10, {"group_id": 1, "correlation_id": 1}),
           ("fusion", 50, 20, {"correlation_id": 3}),
           ("fusion", 100, 10, {"group_id": 2, "correlation_id": 2})]
    launches = [("cudaLaunchKernel", -5 + t, 1, {"correlation_id": c})
                for t, c in ((0, 1), (50, 3), (100, 2))]
    prof = tp.load(write(tmp_path, "between", {HOST: {"launcher": launches},
                                               GPU: {"Stream #1(Compute)": dev}}))
    assert len(prof.steps) == 2
    out = _device_row(prof, OUTSIDE_STEPS)
    assert (out.wall_us, out.busy_us, out.kernels) == pytest.approx((90, 20, 1))
    _check_sums(prof.gpu_utilization)
    alone = [("fusion", 0, 10, {"correlation_id": 1})]
    none = tp.load(write(tmp_path, "nosteps", {HOST: {"launcher": launches[:1]},
                                               GPU: {"Stream #1(Compute)": alone}}))
    assert (none.gpu_utilization.step == -1).all()


def test_bert_launch_latency_from_events(gpu_fixture_file):
    """Latencies recomputed from prof.events and prof.stat("correlation_id")."""
    prof = tp.load(gpu_fixture_file)
    ev = prof.events
    corr = prof.stat("correlation_id")
    ev = ev.loc[corr.index].assign(corr=corr)
    host = ev[ev.plane == "/host:CPU"].drop_duplicates("corr")
    dev = ev[ev.plane.str.startswith("/device:GPU")]
    pairs = dev.merge(host[["corr", "start_us"]], on="corr", suffixes=("", "_launch"))
    latency = pairs.start_us - pairs.start_us_launch
    ll = prof.launch_latency
    assert ll.per_kernel.launches.sum() == len(pairs) == 1556
    assert ll.histogram.launches.sum() == len(pairs)
    hist = np.histogram(latency, bins=[-np.inf, 0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3,
                                       2e3, 5e3, 1e4, np.inf])[0]
    assert ll.histogram.groupby("bin", sort=False).launches.sum().to_numpy().tolist() == \
        hist.tolist()
    mean = latency.groupby(pairs.name.astype(str)).mean()
    got = ll.per_kernel.set_index("kernel_name").mean_latency_us
    np.testing.assert_allclose(got.loc[mean.index], mean, atol=1e-6)
    assert ll.per_kernel.graph_launches.sum() == 0  # TensorFlow launches kernels one by one


@pytest.mark.parametrize("name", ["jax_h200_transformer.xplane.pb",
                                  "jax_h200_nocmdbuf.xplane.pb"])
def test_kernels_of_a_graph_launch_are_counted_apart(name):
    """With XLA's command buffers one cuGraphLaunch call starts a whole CUDA graph (the
    transformer: 2,110 of its 2,130 kernels); a kernel's graph launches are its launches whose
    call started other kernels too, counted here from the events: every such call is a
    cuGraphLaunch.  Without command buffers (the same model, nocmdbuf) there are none."""
    from .real_xla import REAL

    prof = tp.load(REAL / name)
    ev = prof.events
    corr = prof.stat("correlation_id")
    ev = ev.loc[corr.index].assign(cid=corr)
    host = ev[ev.plane.astype(str).str.startswith("/host")].drop_duplicates("cid")
    dev = ev[ev.plane.astype(str).str.startswith("/device:GPU")]
    pairs = dev.merge(host[["cid", "name"]], on="cid", suffixes=("", "_launch"))
    per_call = pairs.groupby("cid").cid.transform("size")
    shared = pairs[per_call > 1]
    assert shared.name_launch.astype(str).str.startswith("cuGraphLaunch").all()
    per_kernel = prof.launch_latency.per_kernel.set_index("kernel_name").graph_launches
    expected = shared.groupby(shared.name.astype(str)).size()
    assert per_kernel.sum() == len(shared)
    assert (per_kernel.loc[expected.index] == expected).all()
    assert (len(shared) > 2000) is name.startswith("jax_h200_transformer")


def test_tpu_duty_cycle_matches_xprof():
    path = DATA / "tpu_v6e_jax_inference.xplane.pb"
    ref = run_tool(path, "overview_page")
    props = {k: v for t in ref for k, v in t.get("p", {}).items()}
    expected = float(props["device_duty_cycle_percent"].rstrip("%"))
    prof = tp.load(path)
    assert f"{prof.duty_cycle.attrs['device_duty_cycle_pct']:.1f}" == f"{expected:.1f}"
    assert prof.overview().xprof_device_duty_cycle_pct == prof.duty_cycle.attrs[
        "device_duty_cycle_pct"]


def test_gpu_duty_cycle_is_busy_over_span(gpu_fixture_file):
    d = tp.load(gpu_fixture_file).duty_cycle.set_index("device")
    np.testing.assert_allclose(d.duty_cycle_pct, 100 * d.busy_us / d.span_us)
    assert d.loc["/device:GPU:6", "kernels"] == 665
    total = 100 * d.busy_us.sum() / d.span_us.sum()
    assert d.attrs["device_duty_cycle_pct"] == pytest.approx(total)


def test_amd_launches_linked_by_correlation_id():
    prof = tp.load(DATA / "mi300x_jax08_conv.xplane.pb")
    d = prof.duty_cycle
    assert (d.kernels == 25).all() and len(d) == 8
    assert d.launches_linked.sum() == prof.launch_latency.per_kernel.launches.sum()
    assert (prof.gpu_utilization.step == -1).all()  # JAX loop without markers: no steps


def test_cpu_profile_has_empty_gpu_tables(cpu_file):
    prof = tp.load(cpu_file)
    assert prof.gpu_utilization.empty and "busy_us" in prof.gpu_utilization.columns
    assert prof.gpu_overlap.empty and prof.launch_latency.per_kernel.empty
    assert prof.duty_cycle.attrs["device_duty_cycle_pct"] is None


def test_counter_samples_are_not_device_work():
    """CUPTI's PM sampling puts one zero-length event per 500 us on the GPU plane's
    ``_counters_`` line (tests/data/jax_h200_counters): samples, not kernels.  The duty cycle
    counts the stream lines' kernels and copies over their own span (the samples run from
    before the first kernel to after the last)."""
    from .real_xla import REAL

    prof = tp.load(REAL / "jax_h200_counters")
    ev = prof.events
    gpu = ev[ev.plane == "/device:GPU:0"]
    streams = gpu[gpu.line != "_counters_"]
    assert (gpu.line == "_counters_").sum() == 363
    duty = prof.duty_cycle.set_index("device").loc["/device:GPU:0"]
    assert duty.kernels + duty.copies == len(streams)
    span = (streams.start_us + streams.duration_us).max() - streams.start_us.min()
    assert duty.span_us == pytest.approx(span)
    assert "4,440 kernel runs" in prof.measures.loc["small_kernels_pct", "scope"]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_busy_time_counts_once_across_the_steps_and_outside_them(path):
    """Each device's busy time in its step rows and its outside row adds up to its duty
    cycle's busy time, and its outside row is its duty cycle's span less the steps.  Steps
    inferred over several devices overlap (TPU v6e: 76 of its 100 steps by about 11 ms, as
    each TPU runs the program a little apart): the time two steps share counts once (before,
    TPU:0's 815 ms of overlap counted twice, its rows 79.6 s busy against 78.8 s)."""
    from tfprof_nb.analysis.gpu.time import OUTSIDE_STEPS

    prof = tp.load(path)
    u = prof.gpu_utilization
    u = u[u.stream == "all"]
    duty = prof.duty_cycle.set_index(["host", "device"])
    steps = prof.steps
    ends = (steps.start_us + steps.duration_ms * 1e3).to_numpy()
    overlapping = int((steps.start_us.to_numpy()[1:] < ends[:-1]).sum()) if len(steps) else 0
    assert (overlapping > 0) == ("tpu" in path.name)  # (the test sees the overlap it is for)
    for (host, device), rows in u.groupby(["host", "device"], observed=True):
        d = duty.loc[(host, device)]
        assert rows.busy_us.sum() == pytest.approx(d.busy_us, rel=1e-9, abs=1e-3), device
        inside = rows[rows.step >= 0]
        if len(inside):  # the steps' windows tile without overlap
            assert inside.wall_us.sum() <= (ends.max() - steps.start_us.min()) + 1e-3
            out = rows[rows.step == OUTSIDE_STEPS].wall_us.sum()
            assert out + inside.wall_us.sum() >= d.span_us - 1e-3, device


def test_rocms_older_copy_names_are_copies_not_kernels():
    """ROCm's older tracer names its copies CopyDeviceToDevice (MemcpyOther streams): GPU:0
    of the MI300X capture ran 53 of them and no kernel.  They are copies, as the kernel
    stats (no GPU:0 kernel) say: GPU:0 is not busy, and the duty cycle counts GPU:7 alone
    (it counted the copies as kernel time: 10.3% over both)."""
    prof = tp.load(DATA / "mi300x_jax_conv_legacy.xplane.pb")
    duty = prof.duty_cycle.set_index("device")
    gpu0 = duty.loc["/device:GPU:0"]
    assert (gpu0.kernels, gpu0.copies, gpu0.busy_us) == (0, 53, 0.0)
    assert not prof.kernel_stats.kernel_name.astype(str).str.startswith("Copy").any()
    busy = prof.gpu_utilization
    copies = busy[(busy.device == "/device:GPU:0") & (busy.stream == "all")]
    assert copies.sync_memcpy_us.sum() > 0 and copies.busy_us.sum() == 0
    assert prof.measures.at["duty_cycle_pct", "devices"] == "GPU:7"
    assert prof.measures.at["duty_cycle_pct", "value"] == pytest.approx(
        duty.loc["/device:GPU:7", "duty_cycle_pct"])


def test_the_time_after_the_devices_last_kernel_in_a_step_is_host_bound():
    """H200 counters: step 19 runs on after GPU:0's last kernel of the profile (610.6 ms;
    the step ends at 632.2 ms): no kernel is queued, the host launches nothing more, so the
    21.5 ms are host-bound, not 'waiting on a dependency' (the finding said so, 12.3%)."""
    prof = tp.load(DATA / "jax_h200_counters")
    util = prof.gpu_utilization
    last = util[(util.stream == "all") & (util.step == 19)].iloc[0]
    assert last.last_end_us < last.start_us + last.wall_us
    tail = last.start_us + last.wall_us - last.last_end_us
    assert last.host_bound_us >= tail - 1e-6 and last.other_us < 1.0
    assert prof.measures.at["dependency_wait_pct", "value"] < 0.1
    assert "waits on a dependency" not in " ".join(str(f) for f in prof.recommendations())
    bert = tp.load(DATA / "gpu_bert_multiworker").gpu_utilization  # (a device idle through
    four = bert[(bert.stream == "all") & (bert.step == 0) & (bert.device == "/device:GPU:4")]
    assert four.other_us.iloc[0] == four.wall_us.iloc[0]  # the step keeps no cause)


def test_collectives_outside_every_step_are_named_not_denied():
    """The TPU capture's all-reduces (three per TPU) all ran before its first step: the
    overlap table (the steps' scope) holds no collective time, and its reason says how much
    ran outside the steps, on how many devices, instead of "no collectives on any device"
    (the H200 capture has none at all)."""
    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    ev = prof.events
    ops = ev[ev.plane.astype(str).str.startswith("/device:TPU:")
             & (ev.line.astype(str) == "XLA Ops")
             & ev.name.astype(str).str.contains("all-reduce")]
    assert len(ops) and ops.start_us.max() + ops.duration_us.max() < prof.steps.start_us.min()
    overlap = prof.gpu_overlap
    assert not (overlap.collective_us > 0).any()
    outside = overlap.attrs["collectives_outside"]
    assert outside["devices"] == ops.plane.nunique() == 4
    assert outside["ms"] == pytest.approx(ops.duration_us.sum() / 1e3, rel=1e-9)
    (reason,) = overlap.attrs["reasons"]
    assert "inside the steps" in reason and f"{outside['ms']:,.1f} ms" in reason
    assert "on 4 devices" in reason
    none = tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb").gpu_overlap
    assert none.attrs["collectives_outside"]["devices"] == 0
    assert none.attrs["reasons"][0].endswith("on any device")
