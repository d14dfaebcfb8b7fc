"""The trace viewer's order of planes and lines, against xprof's trace viewer (the process and
thread sort indices of its JSON) on real captures, and on a synthetic XSpace built for it."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp

from .oracle import run_tool

DATA = Path(__file__).resolve().parents[1] / "data"
CAPTURES = ["tpu_v6e_jax_inference.xplane.pb", "mi300x_jax08_gemm.xplane.pb",
            "mi355x_jax_te_fused_attn.xplane.pb",
            "gpu_bert_multiworker/34.83.195.179_6003.xplane.pb", "jax_h200_transformer.xplane.pb",
            "jax_h200_nocmdbuf.xplane.pb"]


def _xprof_order(path: Path) -> list[tuple[str, str]]:
    """(plane, line) of every track of xprof's trace viewer, in its display order."""
    events = run_tool(path, "trace_viewer")["traceEvents"]
    meta = [e for e in events if e.get("ph") == "M"]
    process = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    p_sort = {e["pid"]: e["args"]["sort_index"] for e in meta
              if e["name"] == "process_sort_index"}
    t_sort = {(e["pid"], e["tid"]): e["args"]["sort_index"] for e in meta
              if e["name"] == "thread_sort_index"}
    threads = [(p_sort[e["pid"]], t_sort[(e["pid"], e["tid"])], process[e["pid"]],
                e["args"]["name"]) for e in meta if e["name"] == "thread_name"]
    return [(plane, line) for _, _, plane, line in sorted(threads)]


def _our_order(prof) -> list[tuple[str, str]]:
    lines = prof.lines.merge(prof.result("track_order"), on=["host", "plane", "line_id"])
    lines = lines[lines.events > 0].sort_values("order")
    return list(zip(lines.plane, lines.line))


@pytest.mark.parametrize("name", CAPTURES)
def test_tracks_go_in_xprofs_order(name):
    path = DATA / name
    ours = _our_order(tp.load(path))
    theirs = _xprof_order(path)
    common = set(ours) & set(theirs)
    # xprof derives lines of its own (framework ops, "XLA Ops - from #16"): the lines both
    # show are most of ours, and go in the same order
    assert len(common) >= 0.9 * len(ours), sorted(set(ours) - common)[:10]
    assert [t for t in ours if t in common] == [t for t in theirs if t in common]


def test_tpu_devices_first_then_xla_lines_in_order():
    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    ours = _our_order(prof)
    planes = list(dict.fromkeys(p for p, _ in ours))
    assert planes == ["/device:TPU:0", "/device:TPU:1", "/device:TPU:2", "/device:TPU:3",
                      "/host:CPU"]
    tpu0 = [line for plane, line in ours if plane == "/device:TPU:0"]
    assert tpu0 == ["XLA Modules", "XLA Ops", "Async XLA Ops", "XLA TraceMe"]


def _space(planes) -> bytes:
    """An XSpace of ``planes``: (name, id, [(line name, line id, display id), ...]), one
    event per line."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    for name, plane_id, lines in planes:
        plane = space.planes.add(name=name, id=plane_id)
        plane.event_metadata[1].id = 1
        plane.event_metadata[1].name = "op"
        for line_name, line_id, display_id in lines:
            line = plane.lines.add(id=line_id, display_id=display_id, name=line_name,
                                   timestamp_ns=1_000)
            line.events.add(metadata_id=1, offset_ps=0, duration_ps=1_000_000)
    return space.SerializeToString()


DERIVED = 0xDEADBEEF - 2**32  # the profiler writes its derived line ids as int32


def test_order_from_plane_and_line_ids_not_from_the_file(tmp_path):
    path = tmp_path / "mixed.xplane.pb"
    path.write_bytes(_space([
        ("/host:CPU", 0, [("python", 7, 0), ("worker", 3, 0)]),
        ("/device:CUSTOM:Megascale", 2, [("flows", 1, 0)]),
        ("Task Environment", 0, [("misc", 1, 0)]),
        ("/device:GPU:1", 9, [("XLA Ops", DERIVED + 5, 0), ("XLA Modules", DERIVED + 4, 0),
                              ("Stream #20", 20, 0), ("Steps", DERIVED, 0)]),
        ("/device:GPU:0", 4, [("Stream #30", 30, 2), ("Stream #10", 10, 5),
                              ("Stream #11", 11, 0)]),
    ]))
    ours = _our_order(tp.load(path))
    assert ours == [
        ("/device:GPU:0", "Stream #30"), ("/device:GPU:0", "Stream #10"),
        ("/device:GPU:0", "Stream #11"),  # display ids 2 and 5 before line id 11
        ("/device:GPU:1", "Stream #20"), ("/device:GPU:1", "Steps"),
        ("/device:GPU:1", "XLA Modules"), ("/device:GPU:1", "XLA Ops"),
        ("/host:CPU", "worker"), ("/host:CPU", "python"),
        ("/device:CUSTOM:Megascale", "flows"), ("Task Environment", "misc")]
    theirs = _xprof_order(path)
    assert [t for t in ours if t in theirs] == [t for t in theirs if t in ours]
    assert len(set(ours) & set(theirs)) >= 9, theirs  # all but the planes xprof leaves out


@pytest.mark.parametrize("name", ["tpu_v6e_jax_inference.xplane.pb", "jax_h200_nocmdbuf.xplane.pb",
                                  "gpu_bert_multiworker/34.83.195.179_6003.xplane.pb",
                                  "tf_keras2_validation.xplane.pb"])
def test_events_are_labelled_as_in_xprofs_trace_viewer(name):
    """The trace viewer labels each event as XProf's does: an HLO op by its instruction
    (``broadcast.2``, not its expression), a TensorFlow op by its display name (``Cast``), a
    step marker by its step (``train 5``, ``test 3``); every event XProf draws on a track has
    our label there as often (XProf's derived thread-pool regions aside).  Search finds the
    full name too."""
    from collections import Counter

    import numpy as np

    from tfprof_nb.widgets.trace_view import timeline_index

    path = DATA / name
    prof = tp.load(path)
    index, meta, ids = timeline_index(prof, prof.steps)
    ev = prof.events.loc[ids]
    labels = np.asarray(meta["names"], object)[index.name]
    timed = ev.duration_us.to_numpy() > 0
    ours = Counter(zip(ev.plane.astype(str)[timed], ev.line.astype(str)[timed], labels[timed]))
    events = run_tool(path, "trace_viewer")["traceEvents"]
    process = {e["pid"]: e["args"]["name"] for e in events
               if e.get("ph") == "M" and e["name"] == "process_name"}
    thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e.get("ph") == "M" and e["name"] == "thread_name"}
    theirs = Counter((process[e["pid"]], thread[(e["pid"], e["tid"])], e["name"])
                     for e in events if e.get("ph") == "X")
    tracks = {(p, t) for p, t, _ in ours}
    compared = {k: n for k, n in theirs.items() if k[:2] in tracks
                and k[2] != "ThreadpoolListener::Region"}
    assert sum(compared.values()) > 1000
    if "train" in set(prof.events.name):  # (the step markers among them)
        assert any(k[2].startswith("train ") for k in compared)
    assert {k: ours[k] for k in compared} == compared
    relabelled = meta["long_names"]
    assert relabelled and all(meta["names"][int(k)] != n for k, n in relabelled.items())
    code, full = next(iter(relabelled.items()))
    found = index.named(full[-12:])  # (a piece of the full name only)
    assert len(found) and (index.name[found] == int(code)).any()
