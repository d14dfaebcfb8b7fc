"""Real captures with some of their numbers set to extreme values (timestamps, offsets,
durations, ids, metadata keys, stat values), written back with TensorFlow's own XSpace
message: the wire stays valid, so these reach the arithmetic past the decoder's framing
checks.  Used by ``tests/test_native_sanitized.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

EXTREMES = (0, 1, -1, 2**31 - 1, 2**31, -2**31, 2**32, 2**53, 2**62, 2**63 - 1, -2**63)
_UNSIGNED = (0, 1, 2**31 - 1, 2**31, 2**32, 2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1)


def _pick(rng, values):
    return int(values[int(rng.integers(0, len(values)))])


def _mutate_once(space, rng) -> None:
    plane = space.planes[int(rng.integers(0, len(space.planes)))]
    lines = [ln for ln in plane.lines if ln.events]
    what = int(rng.integers(0, 9))
    if what <= 1 and plane.lines:
        line = plane.lines[int(rng.integers(0, len(plane.lines)))]
        if what == 0:
            line.timestamp_ns = _pick(rng, EXTREMES)
        else:
            line.duration_ps = _pick(rng, EXTREMES)
        return
    if what <= 5 and lines:
        line = lines[int(rng.integers(0, len(lines)))]
        ev = line.events[int(rng.integers(0, len(line.events)))]
        if what == 2:
            ev.offset_ps = _pick(rng, EXTREMES)
        elif what == 3:
            ev.duration_ps = _pick(rng, EXTREMES)
        elif what == 4:
            ev.metadata_id = _pick(rng, EXTREMES)
        elif ev.stats:
            stat = ev.stats[int(rng.integers(0, len(ev.stats)))]
            case = stat.WhichOneof("value")
            if case in ("int64_value", "uint64_value", "ref_value"):
                values = EXTREMES if case == "int64_value" else _UNSIGNED
                setattr(stat, case, _pick(rng, values))
            else:
                stat.int64_value = _pick(rng, EXTREMES)
        return
    if what == 6 and plane.event_metadata:
        key = list(plane.event_metadata.keys())[int(rng.integers(0, len(plane.event_metadata)))]
        meta = plane.event_metadata[key]
        new = _pick(rng, EXTREMES)
        copy = plane.event_metadata[new]
        copy.CopyFrom(meta)
        copy.id = _pick(rng, EXTREMES) if rng.integers(0, 2) else new
        return
    if what == 7 and plane.stats:
        stat = plane.stats[int(rng.integers(0, len(plane.stats)))]
        stat.uint64_value = _pick(rng, _UNSIGNED)
        return
    if plane.stat_metadata:
        key = list(plane.stat_metadata.keys())[int(rng.integers(0, len(plane.stat_metadata)))]
        plane.stat_metadata[key].id = _pick(rng, EXTREMES)


def write_mutants(source: Path, out_dir: Path, n: int, seed: int) -> list[Path]:
    """``n`` copies of ``source``, each with 1-4 numbers set to extremes, in ``out_dir``."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    original = xplane_pb2.XSpace()
    original.ParseFromString(source.read_bytes())
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        space = xplane_pb2.XSpace()
        space.CopyFrom(original)
        for _ in range(int(rng.integers(1, 5))):
            _mutate_once(space, rng)
        path = out_dir / f"{source.name.split('.')[0]}-extreme-{i}.xplane.pb"
        path.write_bytes(space.SerializeToString())
        out.append(path)
    return out
