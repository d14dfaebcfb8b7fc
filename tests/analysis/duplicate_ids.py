"""A real GPU capture rewritten so that every launch and every kernel share one correlation id
(TensorFlow's xplane_pb2), scaled to many of each: the profile a join that builds every pair
of equal ids would take quadratic time and memory on.

Every event stat ``correlation_id`` (host and device planes) is set to one value; the host
line holding the most launches and the device line holding the most kernels get copies of
their events that carry one, each copy shifted ``span`` later (the capture's time span plus a
gap), until each side has ``n`` such events."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCE = DATA / "jax_h200_nocmdbuf.xplane.pb"
SHARED_ID = 7


def _corr_ids(plane) -> set:
    return {k for k, v in plane.stat_metadata.items() if v.name == "correlation_id"}


def _with_corr(line, ids: set) -> list:
    return [e for e in line.events if any(s.metadata_id in ids for s in e.stats)]


def _one_id(plane, ids: set, value: int) -> None:
    for line in plane.lines:
        for ev in line.events:
            for st in ev.stats:
                if st.metadata_id in ids:
                    st.ClearField("value")
                    st.int64_value = value


def _grow(line, events: list, n: int, span_ps: int) -> None:
    """Copies of ``events`` appended to ``line``, copy k shifted k * span, until ``n``."""
    have, k = len(events), 1
    while have < n:
        batch = events[:n - have]
        for ev in batch:
            copy = line.events.add()
            copy.CopyFrom(ev)
            copy.offset_ps = ev.offset_ps + k * span_ps
        have += len(batch)
        k += 1


def _span_ps(space) -> int:
    ends = [line.timestamp_ns * 1000 + ev.offset_ps + ev.duration_ps
            for plane in space.planes for line in plane.lines for ev in line.events]
    starts = [line.timestamp_ns * 1000 for plane in space.planes for line in plane.lines
              if len(line.events)]
    return max(ends) - min(starts) + 1_000_000  # (+1 us)


def one_correlation_id(out: Path, n: int = 20_000, source: Path = SOURCE) -> dict:
    """Write the rewritten capture to ``out``; returns {"launches": ..., "kernels": ...}."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(source.read_bytes())
    span = _span_ps(space)
    counts = {}
    for plane in space.planes:
        ids = _corr_ids(plane)
        if not ids:
            continue
        _one_id(plane, ids, SHARED_ID)
        line = max(plane.lines, key=lambda ln: len(_with_corr(ln, ids)))
        _grow(line, _with_corr(line, ids), n, span)
        side = "kernels" if plane.name.startswith("/device:") else "launches"
        counts[side] = sum(len(_with_corr(ln, ids)) for ln in plane.lines)
    out.write_bytes(space.SerializeToString())
    return counts
