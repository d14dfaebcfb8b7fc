"""The trace viewer's tracks and rows on real TPU and GPU captures (Python side): XProf's
order of sections and tracks, async ops on rows of their own, and each GPU launch linked to
its kernel (live answers and what an offline copy embeds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb._native import kernels
from tfprof_nb.offline.columns import decode_columns
from tfprof_nb.offline.details import event_details_block
from tfprof_nb.widgets.trace_view import TimelineSource, TraceTimeline
from tfprof_nb.widgets.timeline_links import MAX_PARTNERS

DATA = Path(__file__).resolve().parents[1] / "data"
TPU = DATA / "tpu_v6e_jax_inference.xplane.pb"
AMD = DATA / "mi300x_jax08_gemm.xplane.pb"
CAPTURES = [TPU, AMD, DATA / "mi355x_jax_te_fused_attn.xplane.pb",
            DATA / "gpu_bert_multiworker" / "34.83.195.179_6003.xplane.pb"]


@pytest.fixture(scope="module")
def tpu():
    return TimelineSource(tp.load(TPU))


@pytest.fixture(scope="module")
def amd():
    return TimelineSource(tp.load(AMD))


def test_tpu_sections_and_tracks_in_xprofs_order(tpu):
    tracks = tpu.meta["tracks"]
    assert list(tracks.id) == list(range(len(tracks)))
    sections = list(dict.fromkeys(tracks.plane))
    assert sections == [f"/device:TPU:{i}" for i in range(4)] + ["/host:CPU"]
    assert list(tracks[tracks.plane == "/device:TPU:0"].name) == [
        "XLA Modules", "XLA Ops", "Async XLA Ops", "XLA TraceMe"]
    for plane in sections[1:4]:  # the other chips have no async ops
        assert list(tracks[tracks.plane == plane].name) == ["XLA Modules", "XLA Ops",
                                                            "XLA TraceMe"]
    host = tracks[tracks.plane == "/host:CPU"].name.str.rsplit("/", n=1).str[-1]
    thread_ids = host[host.str.isdigit()].astype(np.int64).to_numpy()
    assert len(thread_ids) > 50 and np.all(np.diff(thread_ids) > 0)  # by thread id


def test_gpu_devices_come_before_the_host(amd):
    tracks = amd.meta["tracks"]
    assert list(tracks.name[:2]) == ["Stream #16(Kernel)", "Stream #17(Kernel)"]
    assert set(tracks.plane[2:]) == {"/host:CPU"}


def _segments_do_not_overlap(source: TimelineSource) -> None:
    index = source.index
    ev = source.prof.events
    start_ps = ev.start_ps.to_numpy()[source.event_ids]  # exact times (the index's are floats)
    end_ps = start_ps + ev.duration_ps.to_numpy()[source.event_ids]
    for lo, hi in zip(index.seg_lo.tolist(), index.seg_hi.tolist()):
        assert np.all(np.diff(start_ps[lo:hi]) >= 0)
        assert np.all(end_ps[lo:hi - 1] <= start_ps[lo + 1:hi]), (lo, hi)  # none hides another


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_no_event_hides_another(path):
    _segments_do_not_overlap(TimelineSource(tp.load(path)))


def test_async_ops_get_rows_of_their_own(tpu):
    tracks = tpu.meta["tracks"]
    segments = tpu.meta["segments"]
    (async_track,) = tracks[tracks.name == "Async XLA Ops"].id
    rows = segments[segments.track == async_track]
    # copies start three at a time and overlap without nesting: three rows, each busy
    assert tracks.depths[async_track] == 3 and list(rows.depth) == [0, 1, 2]
    assert (rows.hi - rows.lo).min() > 100
    # the stack of open events (the nesting depth) would have stacked them six deep
    ev = tpu.prof.events
    on = (ev.line == "Async XLA Ops").to_numpy()
    _, depth, _ = kernels.nest_loose(np.zeros(on.sum(), np.int32), ev.start_ps[on].to_numpy(),
                                     ev.duration_ps[on].to_numpy())
    assert depth.max() + 1 == 6


def _first_free(line, begin, dur) -> np.ndarray:
    """Reference: each event on the lowest row of its line free when it begins."""
    out = np.empty(len(line), np.int64)
    for one in np.unique(line):
        ends: list[int] = []
        rows = np.flatnonzero(line == one)
        for i in rows[np.lexsort((-dur[rows], begin[rows]))].tolist():
            free = [r for r, e in enumerate(ends) if e <= begin[i]]
            r = free[0] if free else len(ends)
            ends[r:r + 1] = [begin[i] + dur[i]] if free else []
            if not free:
                ends.append(begin[i] + dur[i])
            out[i] = r
    return out


def test_rows_are_the_lowest_free_and_the_nesting_depth_for_nested_events():
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(1, 300))
        line = np.sort(rng.integers(0, 3, n)).astype(np.int32)
        begin = rng.integers(0, 500, n).astype(np.int64)
        dur = rng.integers(0, 80, n).astype(np.int64)
        assert np.array_equal(kernels.tl_rows(line, begin, dur), _first_free(line, begin, dur))
    # a nested line: rows are nesting depths
    begin = np.array([0, 10, 20, 30, 40, 60], np.int64)
    dur = np.array([100, 50, 10, 5, 5, 20], np.int64)
    line = np.zeros(6, np.int32)
    assert list(kernels.tl_rows(line, begin, dur)) == list(kernels.nest_loose(line, begin,
                                                                                dur)[1])
    # a staircase (each starts inside the one before and ends after it): two rows, not six
    begin = np.arange(6, dtype=np.int64) * 10
    assert list(kernels.tl_rows(line, begin, np.full(6, 15, np.int64))) == [0, 1, 0, 1, 0, 1]


def launch_pairs(source):
    """(launch row, kernel row) of the timeline's launch links (kind 0)."""
    src, dst, kind = source.link_rows()
    return src[kind == 0], dst[kind == 0]


def test_a_launch_and_its_kernel_name_each_other(amd):
    launch, kernel = launch_pairs(amd)
    pairs = amd.prof.result("launch_links")
    assert len(launch) == len(pairs) == 54
    ev = amd.prof.events
    corr = amd.prof.stat("correlation_id")
    ids = amd.event_ids
    assert np.array_equal(corr.loc[ids[launch]].to_numpy(), corr.loc[ids[kernel]].to_numpy())
    assert set(ev.plane.iloc[ids[launch]]) == {"/host:CPU"}
    assert set(ev.plane.iloc[ids[kernel]]) == {"/device:GPU:0"}
    i = int(np.flatnonzero(ev.name.iloc[ids[launch]].str.contains("LaunchKernel"))[0])
    answer = amd.links_of(int(launch[i]))
    (partner,) = answer["partners"]
    assert partner["row"] == kernel[i] and (partner["role"], partner["label"]) == ("to", "kernel")
    assert partner["start"] == amd.index.start[kernel[i]]
    assert answer["event"]["name"] == ev.name.iloc[ids[launch[i]]]
    back = amd.links_of(int(kernel[i]))
    assert [(p["row"], p["role"], p["label"]) for p in back["partners"]] == [
        (launch[i], "from", "launch")]
    unlinked = np.setdiff1d(np.arange(len(ids)), np.concatenate([launch, kernel]))[0]
    assert amd.links_of(int(unlinked))["partners"] == []


def test_many_kernels_of_one_launch_are_capped():
    src = TimelineSource(tp.load(AMD))
    launch, _ = launch_pairs(src)
    many = np.setdiff1d(np.arange(len(src.event_ids)), launch[:1])[:MAX_PARTNERS + 5]
    src._links._pairs = (np.full(len(many), launch[0]), many, np.zeros(len(many), np.int8))
    answer = src.links_of(int(launch[0]))
    assert len(answer["partners"]) == MAX_PARTNERS and answer["more"] == 5


def test_the_widget_answers_a_selection_with_its_links():
    widget = TraceTimeline(tp.load(AMD))
    launch, kernel = launch_pairs(widget._timeline_source())
    widget.selected_index = int(kernel[3])
    assert widget.links["row"] == kernel[3]
    assert [p["row"] for p in widget.links["partners"]] == [launch[3]]
    assert widget.links["event"]["name"] == str(widget._prof.events.name.loc[
        widget.selected_event])
    assert widget.details["event id"] == str(widget.selected_event)


def test_tpu_has_no_launches(tpu):
    assert len(tpu.prof.result("launch_links")) == 0
    _, _, kind = tpu.link_rows()
    assert not (kind == 0).any()
    assert {p["label"] for p in tpu.links_of(5)["partners"]} <= {"consumer", "producer"}


def test_flows_join_producers_to_their_consumers(cpu_python_file):
    """TensorFlow's contexts (an event's _pt/_p is another's _ct/_c) and tf.data's elements
    (a <Stage>Produce and a <Stage>Consume of one element_id) become arrows, both ways."""
    src = TimelineSource(tp.load(cpu_python_file))
    prof, ids = src.prof, src.event_ids
    a, b, kind = src.link_rows()
    stat = {k: prof.stat(k) for k in ("_pt", "_p", "_ct", "_c", "element_id")}
    # every (stage, element) made by a Produce and taken by a Consume is one arrow (how many
    # elements a window holds varies with the capture's timing: counted here, not assumed)
    ev = prof.events.loc[stat["element_id"].index, ["name"]].assign(
        element=stat["element_id"].to_numpy())
    ev["name"] = ev["name"].astype(str)
    ends = {s: ev[ev.name.str.endswith(s)].assign(stage=lambda d: d.name.str[:-len(s)])
            for s in ("Produce", "Consume")}
    pairs = ends["Produce"].merge(ends["Consume"], on=["stage", "element"])
    assert (kind == 1).sum() > 100 and (kind == 2).sum() == len(pairs) > 0
    ctx = kind == 1
    for p_key, c_key in (("_pt", "_ct"), ("_p", "_c")):
        assert np.array_equal(stat[p_key].loc[ids[a[ctx]]].to_numpy(),
                              stat[c_key].loc[ids[b[ctx]]].to_numpy())
    el = kind == 2
    assert np.array_equal(stat["element_id"].loc[ids[a[el]]].to_numpy(),
                          stat["element_id"].loc[ids[b[el]]].to_numpy())
    names = prof.events["name"].astype(str).to_numpy()
    produced, consumed = names[ids[a[el]]], names[ids[b[el]]]
    assert all(p.endswith("Produce") and c == p[:-7] + "Consume"
               for p, c in zip(produced, consumed))
    k = int(np.flatnonzero(el)[0])
    answer = src.links_of(int(b[k]))
    assert {"row": int(a[k]), "role": "from", "label": "tf.data producer"}.items() <= \
        next(p for p in answer["partners"] if p["row"] == a[k]).items()
    back = src.links_of(int(a[k]))
    assert any(p["row"] == b[k] and p["role"] == "to" for p in back["partners"])


def test_offline_details_embed_the_pairs_they_cover(amd):
    block = event_details_block(amd)
    cols = decode_columns(block["columns"])
    src, dst, kind = amd.link_rows()
    assert np.array_equal(cols["link_src"], src) and np.array_equal(cols["link_dst"], dst)
    assert np.array_equal(cols["link_kind"], kind)
    assert block["link_labels"][0] == ["kernel", "launch"]
    launch, kernel = launch_pairs(amd)
    some = np.sort(np.concatenate([launch[:5], kernel[2:9]]))  # both ends of pairs 2-4 only
    cols = decode_columns(event_details_block(amd, some)["columns"])
    launches = cols["link_kind"] == 0
    assert list(cols["link_src"][launches]) == list(launch[2:5])
    assert list(cols["link_dst"][launches]) == list(kernel[2:5])
    covered = set(some.tolist())
    assert all(a in covered and b in covered for a, b in zip(cols["link_src"], cols["link_dst"]))


def test_area_summary_takes_children_from_parents_late_in_a_profile():
    """The kernel's area summary (the browser's rules, js/test/viewer.test.ts): a child that
    starts with its parent 20 s in (past 2^24 us, where start + 1e-9 == start) is still
    taken from the parent's self time; a child half inside, only the half."""
    import pandas as pd

    from tfprof_nb.offline.columns import decode_columns
    from tfprof_nb.widgets.timeline_area import area_summary
    from tfprof_nb.widgets.timeline_lod import TimelineIndex

    late = 2e7
    # track 0: depth 0 A [10, 40), B [60, 90); depth 1 C [10, 20) (with A), D [35, 45)
    start = np.array([10, 60, 10, 35, 30], float) + late
    dur = np.array([30, 30, 10, 10, 5], np.float32)
    index = TimelineIndex(start, dur, np.arange(5), np.array([0, 2, 4]), np.array([2, 4, 5]),
                          list("ABCDE"))
    segments = pd.DataFrame({"track": [0, 0, 1], "depth": [0, 1, 0], "lo": [0, 2, 4],
                             "hi": [2, 4, 5]})
    header, buffers, events, names = area_summary(index, segments, late, late + 100, [0])
    cols = decode_columns(header, buffers)
    got = {index.names[c]: (n, w, s) for c, n, w, s in zip(cols["name"], cols["count"],
                                                          cols["wall"], cols["self"])}
    assert events == 4 and names == 4
    assert got["A"] == (1, 30.0, 30.0 - 10 - 5)
    assert got["D"] == (1, 10.0, 10.0)
