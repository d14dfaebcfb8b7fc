"""An event's arguments (``analysis.trace.event_arguments``): its own stats, then its event
metadata's, checked against TensorFlow's own parse of the same file (``xplane_pb2``)."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.trace import event_arguments as ea
from tfprof_nb.xspace.model import stat_value

from ...conftest import DATA
from ...xspace.reference import tf_parse


def _proto_arguments(path) -> list[list[tuple]]:
    """Each event's (origin, name, value) in file order, as TensorFlow parses the file: the
    XEvent's stats, then its XEventMetadata's."""
    space = tf_parse(path.read_bytes())
    out = []
    for plane in space.planes:
        def stat(s, origin):
            name = plane.stat_metadata[s.metadata_id].name \
                if s.metadata_id in plane.stat_metadata else ""
            case = s.WhichOneof("value")
            value = None if case is None else getattr(s, case)
            if case == "ref_value":
                value = plane.stat_metadata[value].name if value in plane.stat_metadata else ""
            return (origin, name, value)
        for line in plane.lines:
            for ev in line.events:
                md = plane.event_metadata[ev.metadata_id].stats \
                    if ev.metadata_id in plane.event_metadata else []
                out.append([stat(s, ea.OWN) for s in ev.stats]
                           + [stat(s, ea.METADATA) for s in md])
    return out


def _ours(space, events):
    rank, rows, origin = ea.argument_rows(space, events)
    texts = ea.TextTable()
    codes = ea.stat_texts(space.stats, rows, texts)
    st = space.stats
    per = [[] for _ in range(len(space.events) if events is None else len(events))]
    for k, r, o, c in zip(rank.tolist(), rows.tolist(), origin.tolist(), codes.tolist()):
        per[k].append((o, st.names[st.name_code[r]], stat_value(st, r), texts.items[c]))
    return per


def _check(path, n=400):
    prof = tp.load(path)
    (space,) = prof.spaces.values()
    want = _proto_arguments(path)
    assert len(want) == len(space.events)
    rng = np.random.default_rng(3)
    with_md = [i for i, w in enumerate(want) if any(o == ea.METADATA for o, _, _ in w)]
    sample = np.unique(np.r_[rng.choice(len(want), min(n, len(want)), replace=False),
                             with_md[:50]]).astype(np.int64)
    rng.shuffle(sample)
    for few in (sample[:10], sample):  # by bisection, and by a pass
        for i, got in zip(few.tolist(), _ours(space, few)):
            assert [g[:3] for g in got] == want[i], i
            assert [g[3] for g in got] == [ea.value_text(v) for _, _, v in want[i]]
    every = _ours(space, None)
    assert all(every[i] == _ours(space, np.array([i]))[0] for i in sample[:20].tolist())
    return want, with_md


def test_tpu_events_have_their_stats_then_their_metadatas_as_the_proto():
    want, with_md = _check(DATA / "tpu_v6e_jax_inference.xplane.pb")
    assert len(with_md) > 1000  # most TPU ops carry their metadata's flops, category...
    assert max(len(w) for w in want) >= 13


def test_cpu_capture_events_as_the_proto(cpu_file):
    _check(cpu_file)


def test_value_texts():
    assert ea.value_text("<i>y</i>") == "<i>y</i>"
    assert ea.value_text(2**63 + 1) == "9223372036854775809"  # every digit, past 2**53
    assert ea.value_text(np.int64(-3)) == "-3" and ea.value_text(np.uint64(2**64 - 1)) == \
        "18446744073709551615"
    assert ea.value_text(1.0) == "1.0" and ea.value_text(1e-05) == "1e-05"
    assert ea.value_text(np.float64(0.1)) == "0.1" and ea.value_text(float("nan")) == "nan"
    assert ea.value_text(b"\x00x") == "0078" and ea.value_text(None) == ""
    assert ea.value_text(bytes(ea.BYTES_SHOWN + 1)) == f"<{ea.BYTES_SHOWN + 1} bytes>"


@pytest.mark.parametrize("origin,occurrence,want", [
    (ea.OWN, 1, "flops"), (ea.METADATA, 1, "metadata.flops"), (ea.OWN, 2, "flops #2"),
    (ea.METADATA, 3, "metadata.flops #3")])
def test_keys(origin, occurrence, want):
    assert ea.key_text("flops", origin, occurrence) == want


def _json_text(value) -> str:
    """The text of a Chrome trace's argument: the export keeps numbers as numbers (and
    integers past 2**53, inf and nan as their text)."""
    return "" if value is None else value if isinstance(value, str) else ea.value_text(value)


@pytest.mark.parametrize("which", ["tpu", "cpu"])
def test_details_sql_and_export_show_the_same_arguments(which, cpu_file, tmp_path):
    """An event's arguments, keys and texts are the same in the trace viewer's details (the
    live answer and a page's embedded block), in prof.sql's stats and in the Chrome export."""
    from tfprof_nb.offline.details import ARGUMENTS, event_details_block
    from tfprof_nb.widgets.trace_view import TimelineSource

    from ...export.readers import chrome_tables, read_chrome
    from ...widgets.test_event_details import page_rows

    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb" if which == "tpu" else cpu_file)
    source = TimelineSource(prof)
    block = page_rows(event_details_block(source), source.index.start)
    x, _, _ = chrome_tables(read_chrome(prof.to_chrome_trace(tmp_path / "t.json")))
    rng = np.random.default_rng(5)
    rows = rng.choice(len(source.event_ids), 300, replace=False).tolist()
    events = [int(source.event_ids[r]) for r in rows]
    sql = prof.sql("SELECT event, origin, key, text FROM stats WHERE event IN ("
                   + ",".join(map(str, events)) + ")")
    by_event = {e: g for e, g in sql.groupby("event")}
    seen_metadata = 0
    for row, event in zip(rows, events):
        pane = dict(block[row])[ARGUMENTS]
        assert pane == source.describe(row)[ARGUMENTS]
        assert pane == [(k, _json_text(v)) for k, v in x.args[event].items()], event
        got = by_event.get(event)
        in_sql = [] if got is None else list(zip(got.key, got.text))
        assert sorted(in_sql) == sorted(pane), event
        if got is not None:
            md = got.origin == "metadata"
            assert all(k.startswith("metadata.") == m for k, m in zip(got.key, md))
            seen_metadata += int(md.sum())
    if which == "tpu":  # most TPU ops' flops, category... are their metadata's
        assert seen_metadata > 300


def _module_arguments(prof) -> list[tuple]:
    """(event, key, text) of every argument of every event, from the module."""
    out = []
    for host, space in prof.spaces.items():
        keys, texts = ea.TextTable(), ea.TextTable()
        rank, rows, origin = ea.argument_rows(space)
        key = ea.argument_keys(space.stats, rank, rows, origin, keys)
        text = ea.stat_texts(space.stats, rows, texts)
        base = prof.event_offsets[host]
        out += [(e + base, keys.items[k], texts.items[t])
                for e, k, t in zip(rank.tolist(), key.tolist(), text.tolist())]
    return sorted(out)


@pytest.mark.parametrize("which", ["tpu", "synthetic"])
def test_sql_has_every_argument_with_its_text(which, tmp_path):
    """prof.sql's stats: every argument of every event, keys and texts as the module makes
    them (DuckDB writes the numbers: doubles, nan, inf, -0.0, uint64s past 2**63 - 1)."""
    if which == "tpu":
        prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    else:
        from ...export.test_synthetic import _space
        (tmp_path / "nasty.xplane.pb").write_bytes(_space())
        prof = tp.load(tmp_path / "nasty.xplane.pb")
    got = prof.sql("SELECT event, key, text FROM stats")
    want = _module_arguments(prof)
    assert sorted(zip(got.event.tolist(), got.key, got.text)) == want
    kinds = set(prof.sql("SELECT DISTINCT kind FROM stats").kind.tolist())
    assert kinds >= ({1, 2, 3, 4, 6} if which == "synthetic" else {1, 2, 3, 4, 5})
    if which == "synthetic":
        texts = set(got.text)
        assert {"inf", "nan", "-0.0", "5e-324", str(2**64 - 1)} <= texts
