"""Profiles with missing parts give empty tables with the right columns, never exceptions."""

from __future__ import annotations

import pytest

import tfprof_nb as tp


def _space(planes):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    for name, events in planes:
        plane = space.planes.add(name=name, id=len(space.planes))
        if not events:
            continue
        line = plane.lines.add(id=1, name="thread", timestamp_ns=1000)
        for i, (ev_name, offset, dur) in enumerate(events, start=1):
            plane.event_metadata[i].id = i
            plane.event_metadata[i].name = ev_name
            line.events.add(metadata_id=i, offset_ps=offset, duration_ps=dur)
    return space.SerializeToString()


CASES = {
    "tpu_only": [("/device:TPU:0", [("fusion.1", 0, 1000), ("fusion.2", 2000, 500)])],
    "host_no_markers": [("/host:CPU", [("Foo:Bar", 0, 1000), ("Baz", 5, 10)])],
    "empty_planes": [("/host:CPU", []), ("Task Environment", [])],
}
ANALYSES = ["steps", "op_stats", "kernel_stats", "memory_summary", "memory_timeline",
            "memory_breakdown", "pod"]


@pytest.mark.parametrize("case", list(CASES))
def test_every_analysis_survives(tmp_path, case):
    path = tmp_path / f"{case}.xplane.pb"
    path.write_bytes(_space(CASES[case]))
    prof = tp.load(path)
    for name in ANALYSES:
        table = getattr(prof, name)
        assert len(table.columns) > 0, name
    assert prof.steps.empty
    ov = prof.overview()
    assert any("no steps" in r for r in ov.reasons)
    assert ov.input_bound["classification"] == "unknown"
    assert "No step time measured" in ov.input_bound["input_statement"]
    ip = prof.input_pipeline
    assert ip.input_ops.empty and ip.device_side.empty
    td = prof.tf_data
    assert td.pipelines.empty and not td.summary["is_input_bound"]
    assert prof.scope_stats().empty or "scope" in prof.scope_stats().columns
    assert isinstance(prof.recommendations(), list)


def test_tpu_profile_is_recognised(tmp_path):
    path = tmp_path / "tpu.xplane.pb"
    path.write_bytes(_space(CASES["tpu_only"]))
    ov = tp.load(path).overview()
    assert ov.environment["device_type"] == "TPU"
