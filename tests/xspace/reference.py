"""Canonical views of an XSpace, from TensorFlow's own parser and from ours, for comparison."""

from __future__ import annotations

import numpy as np

from tfprof_nb.xspace import KIND_NAMES, XSpaceData, stat_value


def tf_parse(data: bytes):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(data)
    return space


def _tf_stat(plane, stat):
    case = stat.WhichOneof("value")
    name = plane.stat_metadata[stat.metadata_id].name if stat.metadata_id in \
        plane.stat_metadata else ""
    if case is None:
        return (name, "none", None)
    kind = case[: -len("_value")]
    value = getattr(stat, case)
    if kind == "ref":
        value = plane.stat_metadata[value].name if value in plane.stat_metadata else ""
    return (name, kind, value)


def canonical_from_tf(space) -> dict:
    out = {"hostnames": list(space.hostnames), "errors": list(space.errors),
           "warnings": list(space.warnings), "planes": []}
    for plane in space.planes:
        p = {
            "id": plane.id, "name": plane.name,
            "stats": [_tf_stat(plane, s) for s in plane.stats],
            "lines": [(ln.id, ln.display_id, ln.name, ln.display_name, ln.timestamp_ns,
                       ln.duration_ps) for ln in plane.lines],
            "events": [], "event_stats": [],
            "event_metadata": {}, "stat_metadata": {},
        }
        for li, line in enumerate(plane.lines):
            for ev in line.events:
                md = plane.event_metadata[ev.metadata_id].name \
                    if ev.metadata_id in plane.event_metadata else ""
                p["events"].append((li, md, ev.metadata_id, ev.offset_ps, ev.num_occurrences,
                                    ev.duration_ps))
                p["event_stats"].append([_tf_stat(plane, s) for s in ev.stats])
        for key, md in plane.event_metadata.items():
            p["event_metadata"][key] = (md.id, md.name, md.display_name, bytes(md.metadata),
                                        [_tf_stat(plane, s) for s in md.stats],
                                        list(md.child_id))
        for key, sm in plane.stat_metadata.items():
            p["stat_metadata"][key] = (sm.id, sm.name, sm.description)
        out["planes"].append(p)
    return out


def canonical_from_ours(x: XSpaceData) -> dict:
    st = x.stats
    stat_rows = {0: {}, 1: {}, 2: {}}
    for r, (ok, owner) in enumerate(zip(st.owner_kind.tolist(), st.owner.tolist())):
        stat_rows[ok].setdefault(owner, []).append(r)

    def stat_tuple(r):
        kind = KIND_NAMES[int(st.kind[r])]
        return (st.names[st.name_code[r]], kind, stat_value(st, r))

    out = {"hostnames": x.hostnames, "errors": x.errors, "warnings": x.warnings, "planes": []}
    ev = x.events
    for pi, pname in enumerate(x.plane_names):
        line_idx = np.flatnonzero(x.line_plane == pi)
        first_line = int(line_idx[0]) if len(line_idx) else 0
        p = {
            "id": int(x.plane_ids[pi]), "name": pname,
            "stats": [stat_tuple(r) for r in stat_rows[2].get(pi, [])],
            "lines": [(int(x.line_ids[i]), int(x.line_display_ids[i]), x.line_names[i],
                       x.line_display_names[i], int(x.line_timestamp_ns[i]),
                       int(x.line_duration_ps[i])) for i in line_idx],
            "events": [], "event_stats": [],
            "event_metadata": {}, "stat_metadata": {},
        }
        for e in np.flatnonzero(ev.plane == pi).tolist():
            p["events"].append((int(ev.line[e]) - first_line, ev.names[ev.name_code[e]],
                                int(ev.metadata_id[e]), int(ev.offset_ps[e]),
                                int(ev.num_occurrences[e]), int(ev.duration_ps[e])))
            p["event_stats"].append([stat_tuple(r) for r in stat_rows[0].get(e, [])])
        children = {}
        for row, child in x.event_metadata_children.tolist():
            children.setdefault(row, []).append(child)
        for row in np.flatnonzero(x.event_metadata_plane == pi).tolist():
            key = int(x.event_metadata_key[row])
            p["event_metadata"][key] = (
                int(x.event_metadata_id[row]), x.event_metadata_names[row],
                x.event_metadata_display_names[row], x.event_metadata_bytes[row],
                [stat_tuple(r) for r in stat_rows[1].get(row, [])], children.get(row, []))
        for row in np.flatnonzero(x.stat_metadata_plane == pi).tolist():
            p["stat_metadata"][int(x.stat_metadata_key[row])] = (
                int(x.stat_metadata_id[row]), x.stat_metadata_names[row],
                x.stat_metadata_descriptions[row])
        out["planes"].append(p)
    return out


def assert_same(ours: dict, ref: dict) -> None:
    """Field-by-field comparison with messages that point at the first difference."""
    for key in ("hostnames", "errors", "warnings"):
        assert ours[key] == ref[key], key
    assert len(ours["planes"]) == len(ref["planes"])
    for po, pr in zip(ours["planes"], ref["planes"]):
        where = f"plane {pr['name']!r}"
        for key in ("id", "name", "stats", "lines", "stat_metadata", "event_metadata"):
            assert po[key] == pr[key], f"{where}: {key} differ"
        assert len(po["events"]) == len(pr["events"]), f"{where}: event count"
        for i, (a, b) in enumerate(zip(po["events"], pr["events"])):
            assert a == b, f"{where}: event {i}: {a} != {b}"
        for i, (a, b) in enumerate(zip(po["event_stats"], pr["event_stats"])):
            assert _stats_equal(a, b), f"{where}: stats of event {i}: {a} != {b}"


def _stats_equal(a, b) -> bool:
    if len(a) != len(b):
        return False
    for (na, ka, va), (nb, kb, vb) in zip(a, b):
        if na != nb or ka != kb:
            return False
        if ka == "double" and isinstance(va, float) and np.isnan(va):
            if not np.isnan(vb):
                return False
        elif va != vb:
            return False
    return True


def framed_count(path, threads: int, index: int) -> int:
    """Count ``index`` of the decoder's walk (``decoder.T_ST``, ``decoder.C_CHUNKS``...) once
    the lines of ``path`` are framed on ``threads`` threads."""
    from tfprof_nb.xspace import decoder

    buf = np.frombuffer(open(path, "rb").read(), np.uint8)
    walk = decoder._Walk(buf, str(path), False, threads, None)
    try:
        return walk.n(index)
    finally:
        walk.close()
