"""Small synthetic GPU XSpaces (TensorFlow's xplane_pb2) for the GPU-time edge cases.

Times are in microseconds from the line timestamp (an absolute wall time, so several hosts
share one axis).  An event is (name, start_us, duration_us, stats), stats a dict of int
stats (``correlation_id``, ``group_id``)."""

from __future__ import annotations

T0_NS = 1_700_000_000_000_000_000


def xspace(planes: dict) -> bytes:
    """``planes``: {plane name: {line name: [event, ...]}} as serialized XSpace bytes."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    for name, lines in planes.items():
        plane = space.planes.add(name=name, id=len(space.planes))
        metadata: dict[str, int] = {}
        stats: dict[str, int] = {}
        for line_id, (line_name, events) in enumerate(lines.items(), start=1):
            line = plane.lines.add(id=line_id, name=line_name, timestamp_ns=T0_NS)
            for ev_name, start_us, dur_us, ev_stats in events:
                if ev_name not in metadata:
                    metadata[ev_name] = len(metadata) + 1
                    plane.event_metadata[metadata[ev_name]].id = metadata[ev_name]
                    plane.event_metadata[metadata[ev_name]].name = ev_name
                ev = line.events.add(metadata_id=metadata[ev_name],
                                     offset_ps=int(start_us * 1e6),
                                     duration_ps=int(dur_us * 1e6))
                for key, value in ev_stats.items():
                    if key not in stats:
                        stats[key] = len(stats) + 1
                        plane.stat_metadata[stats[key]].id = stats[key]
                        plane.stat_metadata[stats[key]].name = key
                    ev.stats.add(metadata_id=stats[key], int64_value=value)
    return space.SerializeToString()


def kernels_with_launches(kernels, launch_at, group=1, first_corr=1, name="fusion"):
    """(host launch events, device kernel events): kernel i runs ``kernels[i]`` = (start,
    duration) and is launched at ``launch_at[i]`` (None: no launch recorded), call 1 us."""
    host, device = [], []
    for i, ((start, dur), at) in enumerate(zip(kernels, launch_at)):
        stats = {"group_id": group}
        if at is not None:
            stats["correlation_id"] = first_corr + i
            host.append(("cudaLaunchKernel", at, 1.0, {"correlation_id": first_corr + i,
                                                       "group_id": group}))
        device.append((f"{name}_{i}", start, dur, stats))
    return host, device


def write(tmp_path, name: str, planes: dict):
    path = tmp_path / f"{name}.xplane.pb"
    path.write_bytes(xspace(planes))
    return path
