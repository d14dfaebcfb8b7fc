"""``prof.critical_path`` (:mod:`tfprof_nb.analysis.critical`): synthetic XSpaces (TensorFlow's
xplane_pb2) with a known critical path give exactly that path; on every real capture each
step's path covers the step end to end without overlap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.critical.graph import EDGE_KINDS, dependency_graph
from tfprof_nb.analysis.runtime.hostdata.host import HostData
from tfprof_nb.xspace import read_xspace

DATA = Path(__file__).resolve().parents[2] / "data"
T0_NS = 1_700_000_000_000_000_000
HOST, GPU0, GPU1 = "/host:CPU", "/device:GPU:0", "/device:GPU:1"


def _space(planes: dict) -> bytes:
    """``planes``: {plane: {line: [(name, start_us, dur_us, {stat: int or str}), ...]}}."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    for name, lines in planes.items():
        plane = space.planes.add(name=name, id=len(space.planes))
        meta: dict[str, int] = {}
        for line_id, (line_name, events) in enumerate(lines.items(), start=1):
            line = plane.lines.add(id=line_id, name=line_name, timestamp_ns=T0_NS)
            for ev_name, start, dur, stats in events:
                key = ("e", ev_name)
                if key not in meta:
                    meta[key] = len(meta) + 1
                    plane.event_metadata[meta[key]].id = meta[key]
                    plane.event_metadata[meta[key]].name = ev_name
                ev = line.events.add(metadata_id=meta[key], offset_ps=int(start * 1e6),
                                     duration_ps=int(dur * 1e6))
                for stat, value in stats.items():
                    if ("s", stat) not in meta:
                        meta[("s", stat)] = len(meta) + 1
                        plane.stat_metadata[meta[("s", stat)]].id = meta[("s", stat)]
                        plane.stat_metadata[meta[("s", stat)]].name = stat
                    one = ev.stats.add(metadata_id=meta[("s", stat)])
                    if isinstance(value, str):
                        one.str_value = value
                    else:
                        one.int64_value = value
    return space.SerializeToString()


def _launch(at, corr, group, dur=1.0, name="cudaLaunchKernel"):
    return (name, at, dur, {"correlation_id": corr, "group_id": group})


def _kernel(name, start, dur, corr, group):
    return (name, start, dur, {"correlation_id": corr, "group_id": group})


def _run(tmp_path, planes, first_us, step=None):
    """(profile, the step's path: (start us on the file's axis, duration, category, kind,
    name) per segment); ``first_us``: the file's earliest event start."""
    path = tmp_path / "space.xplane.pb"
    path.write_bytes(_space(planes))
    prof = tp.load(path)
    cp = prof.critical_path
    step = prof.steps.index[-1] if step is None else step
    rows = cp[cp.step == step].sort_values("order")
    offset = prof.events.start_us.min() - first_us
    return prof, [(round(r.start_us - offset, 3), round(r.duration_us, 3), r.category, r.kind,
                   r.name) for r in rows.itertuples()]


def test_host_python_between_launches_bounds_the_step(tmp_path):
    """The host launches k0, then runs Python for 26 us before launching k2: the path runs
    through that Python, not through the long kernels that overlap it."""
    host = [_launch(8, 1, 1), _launch(9.5, 2, 1), ("python_work", 11, 26, {}),
            _launch(38, 3, 1), ("cudaStreamSynchronize", 39.5, 3.5, {})]
    dev = [_kernel("k0", 10, 2, 1, 1), _kernel("k1", 13, 20, 2, 1), _kernel("k2", 40, 2, 3, 1)]
    _, path = _run(tmp_path, {HOST: {"python": host}, GPU0: {"Stream #1": dev}}, 8.0)
    assert path == [(10.0, 0.5, "kernel_launch", "event", "cudaLaunchKernel"),
                    (10.5, 0.5, "idle", "idle", "idle"),
                    (11.0, 26.0, "host_compute", "event", "python_work"),
                    (37.0, 1.0, "idle", "idle", "idle"),
                    (38.0, 1.0, "kernel_launch", "event", "cudaLaunchKernel"),
                    (39.0, 1.0, "kernel_launch", "wait", "k2"),
                    (40.0, 2.0, "device_compute", "event", "k2")]


def test_one_long_kernel_bounds_the_step_the_host_waits(tmp_path):
    """Three launches, the second kernel long, the host waits: the kernels are the path."""
    host = [_launch(0, 1, 1), _launch(1, 2, 1), _launch(2, 3, 1),
            ("cudaStreamSynchronize", 3, 30, {})]
    dev = [_kernel("k0", 2, 2, 1, 1), _kernel("k1_long", 4, 26, 2, 1),
           _kernel("k2", 30, 2, 3, 1)]
    prof, path = _run(tmp_path, {HOST: {"python": host}, GPU0: {"Stream #1": dev}}, 0.0)
    assert path == [(2.0, 2.0, "device_compute", "event", "k0"),
                    (4.0, 26.0, "device_compute", "event", "k1_long"),
                    (30.0, 2.0, "device_compute", "event", "k2")]
    summary = prof.critical_path_summary
    top = summary[summary.level == "op"].iloc[0]
    assert top["name"] == "k1_long" and top.share == pytest.approx(26 / 30)


def test_previous_steps_device_work_bounds_the_next_step(tmp_path):
    """Step 2's second kernel is launched after the host waited for step 1's kernel on GPU:1:
    step 2's path crosses into step 1's work, through the host's wait (device end -> host
    wait end)."""
    host = [_launch(0, 1, 1), _launch(1, 2, 1), _launch(20, 3, 2),
            ("cudaStreamSynchronize", 28, 10.2, {}), _launch(38.5, 4, 2, dur=0.5)]
    gpu0 = [_kernel("a0", 2, 2, 1, 1), _kernel("b0", 27, 1, 3, 2), _kernel("b1", 40, 2, 4, 2)]
    gpu1 = [_kernel("a1_long", 5, 33, 2, 1)]
    _, path = _run(tmp_path, {HOST: {"python": host}, GPU0: {"Stream #1": gpu0},
                              GPU1: {"Stream #1": gpu1}}, 0.0, step=2)
    assert path == [(27.0, 11.0, "device_compute", "event", "a1_long"),
                    (38.0, 0.2, "host_wait", "wait", "cudaStreamSynchronize"),
                    (38.2, 0.3, "idle", "idle", "idle"),
                    (38.5, 0.5, "kernel_launch", "event", "cudaLaunchKernel"),
                    (39.0, 1.0, "kernel_launch", "wait", "b1"),
                    (40.0, 2.0, "device_compute", "event", "b1")]


def test_tf_data_element_wait_goes_to_the_producer(tmp_path):
    """A CPU step waits in IteratorGetNext for the element a background thread produces."""
    main = [("train", 0, 50, {"group_id": 1, "step_name": "train 1"}),
            ("IteratorGetNext", 2, 28, {"group_id": 1}),
            ("PrefetchConsume", 2, 28, {"element_id": 7, "group_id": 1}),
            ("MatMul", 31, 18, {"group_id": 1})]
    bg = [("PrefetchProduce", 0.5, 28.5, {"element_id": 7})]
    _, path = _run(tmp_path, {HOST: {"main": main, "tf_data_worker": bg}}, 0.0)
    assert path == [(0.0, 0.5, "idle", "idle", "idle"),
                    (0.5, 28.5, "input", "event", "PrefetchProduce"),
                    (29.0, 1.0, "input", "wait", "PrefetchConsume"),
                    (30.0, 1.0, "host_compute", "event", "train"),
                    (31.0, 18.0, "host_compute", "event", "MatMul"),
                    (49.0, 1.0, "host_compute", "event", "train")]


def test_the_graph_has_every_edge_kind_a_replay_needs(tmp_path):
    path = tmp_path / "g.xplane.pb"
    host = [("outer", 0, 10, {}), _launch(1, 1, 1), ("cudaStreamSynchronize", 3, 5, {})]
    path.write_bytes(_space({HOST: {"python": host},
                             GPU0: {"Stream #1": [_kernel("k", 2, 4, 1, 1),
                                                  _kernel("k", 7, 0.5, 9, 1)]}}))
    prof = tp.load(path)
    hd = HostData(prof.hosts[0], read_xspace(path))
    g = dependency_graph(hd, prof.result("launch_links"))
    kinds = {EDGE_KINDS[k] for k in g.edges.kind}
    assert {"order", "nest_begin", "nest_end", "launch", "sync"} <= kinds
    assert (g.end - g.begin >= 0).all() and len(g.edges)


REAL = sorted(DATA.glob("*.xplane.pb")) + [DATA / "gpu_bert_multiworker",
                                           DATA / "jax_h200_counters" / "vm.xplane.pb"]


def _check_covers(prof):
    cp, steps = prof.critical_path, prof.steps
    assert len(cp) or steps.empty
    for (host, step), rows in cp.groupby(["host", "step"]):
        rows = rows.sort_values("order")
        want = steps[(steps.host == host) & (steps.index == step)].iloc[0]
        ends = rows.start_us + rows.duration_us
        assert rows.start_us.iloc[0] == pytest.approx(want.start_us, abs=1e-3)
        assert ends.iloc[-1] == pytest.approx(want.start_us + want.duration_ms * 1e3, abs=1e-3)
        assert np.allclose(rows.start_us.iloc[1:].to_numpy(), ends.iloc[:-1].to_numpy(),
                           atol=1e-4)  # no gap, no overlap
        assert (rows.duration_us > 0).all()
        assert rows.duration_us.sum() == pytest.approx(want.duration_ms * 1e3, rel=0.01)
    assert set(cp.kind) <= {"event", "wait", "idle"}
    on_event = cp[cp.event_id >= 0]
    assert (prof.events.name.to_numpy()[on_event.event_id] == on_event.name).all()


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_each_steps_path_covers_the_step_on_real_captures(path):
    _check_covers(tp.load(path))


def test_each_steps_path_covers_the_step_on_a_tf_cpu_capture(cpu_file):
    prof = tp.load(cpu_file)
    assert len(prof.steps)
    _check_covers(prof)
    assert "host_compute" in set(prof.critical_path.category)


def test_the_overview_says_what_bounds_the_steps_from_the_summary():
    prof = tp.load(DATA / "jax_h200_counters" / "vm.xplane.pb")
    summary, cp = prof.critical_path_summary, prof.critical_path
    cats = summary[summary.level == "category"]
    assert cats.share.sum() == pytest.approx(1.0, abs=1e-6)
    top = cats.iloc[0]
    total = cp.duration_us.sum()
    assert top.duration_us == pytest.approx(cp[cp.category == top.category].duration_us.sum())
    sentence = summary.attrs["sentence"]
    assert sentence.startswith(f"On their critical paths, the {summary.attrs['steps']} steps "
                               "are bound by ")  # (the
    # scope first: its shares are of the path, not of the steps' time; the devices' idle and
    # the step breakdown are other measures on the same page)
    assert f"{top.duration_us / total * 100:.0f}% " in sentence and top.resource in sentence
    assert prof.overview().bound_by == sentence and sentence in repr(prof.overview())


def test_the_overview_of_a_big_profile_does_not_wait_for_the_critical_path(monkeypatch):
    """Over OVERVIEW_PATH_MAX_EVENTS events (here lowered to this capture's size less one)
    the overview leaves the sentence out and says how to ask for it, without computing any
    critical path; once the summary is computed, the overview says it."""
    from tfprof_nb.analysis.findings import overview

    prof = tp.load(DATA / "jax_h200_counters" / "vm.xplane.pb")
    events = int(prof.result("planes").events.sum())
    monkeypatch.setattr(overview, "OVERVIEW_PATH_MAX_EVENTS", events - 1)
    ov = prof.overview()
    assert ov.bound_by == "" and not prof._results.ready("critical_path")
    assert any("prof.critical_path_summary computes it" in r for r in ov.reasons)
    sentence = prof.critical_path_summary.attrs["sentence"]
    assert prof.overview().bound_by == sentence


def test_a_command_buffers_launch_leads_to_its_kernels_on_the_path():
    """On a capture whose steps run as one CUDA graph, a step's path goes from the graph's
    launch straight to a kernel of that launch (its correlation id)."""
    prof = tp.load(DATA / "jax_h200_transformer.xplane.pb")
    cp = prof.critical_path.sort_values(["host", "step", "order"]).reset_index(drop=True)
    pairs = set(zip(prof.result("launch_links").launch_event,
                    prof.result("launch_links").kernel_event))
    nxt = cp.shift(-1)
    hops = cp[(cp.step == nxt.step) & cp.name.str.startswith("cuGraphLaunch")
              & (nxt.category == "device_compute")]
    assert len(hops) >= 1
    assert all((a, int(nxt.event_id[i])) in pairs for i, a in hops.event_id.items())


@pytest.mark.parametrize("name", ["jax_h200_transformer.xplane.pb",
                                  "mi300x_jax_conv_legacy.xplane.pb",
                                  "tpu_v6e_jax_inference.xplane.pb"])
def test_every_edge_of_the_graph_goes_forward_in_time(name):
    """What a replay needs: no edge's source point is after its target point, so replaying
    the observed durations gives the observed order."""
    from tfprof_nb.analysis.gpu.launch_links import host_launch_links
    from tfprof_nb.analysis.trace.flow_links import host_flow_links

    hd = HostData("h", read_xspace(DATA / name))
    g = dependency_graph(hd, host_launch_links(hd), host_flow_links(hd))
    e = g.edges
    at = {"begin": g.begin, "end": g.end}
    src = np.where(e.src_point == "begin", at["begin"][e.src], at["end"][e.src])
    dst = np.where(e.dst_point == "begin", at["begin"][e.dst], at["end"][e.dst])
    assert len(e) > len(g) // 2 and (src <= dst).all(), e[src > dst].kind.value_counts()


@pytest.mark.parametrize("name", ["gpu_bert_multiworker", "jax_h200_counters/vm.xplane.pb"])
def test_the_path_built_with_a_helper_thread_is_the_path_built_on_one(monkeypatch, name):
    """The text columns of what waited built on a helper thread beside the others (long
    paths): the same table, dtypes and all."""
    from tfprof_nb.analysis.critical import path as path_module

    prof = tp.load(DATA / name)
    one = prof.critical_path
    assert len(one)
    monkeypatch.setattr(path_module, "_BESIDE_MIN_SEGMENTS", 1)
    beside = tp.load(DATA / name).critical_path
    pd.testing.assert_frame_equal(beside, one, check_exact=True)
    assert list(beside.dtypes) == list(one.dtypes)
