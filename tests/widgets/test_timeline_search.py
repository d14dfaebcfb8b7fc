"""The trace viewer's search on the kernel's side (``tfprof_nb.widgets.timeline_search``), on
real captures: one search, whether a table's row was clicked or its text typed; plain text
finds events by name, op type, framework op, name scope, HLO op and HLO category."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.offline.columns import decode_columns
from tfprof_nb.widgets.trace_view import TimelineSource
from tfprof_nb.widgets.timeline_find import occurrences
from tfprof_nb.widgets.timeline_search import parse_query, query_of

from ..conftest import DATA

H200 = ["jax_h200_nocmdbuf.xplane.pb", "jax_h200_transformer.xplane.pb"]


@pytest.fixture(scope="module", params=H200)
def source(request) -> TimelineSource:
    return TimelineSource(tp.load(DATA / request.param))


def _rows(source: TimelineSource, ids: np.ndarray) -> list[int]:
    """The timeline rows of events ``ids``, ascending."""
    rank = {int(e): r for r, e in enumerate(source.event_ids)}
    return sorted(rank[int(e)] for e in ids if int(e) in rank)


def _answer(source: TimelineSource, content: dict) -> tuple[int, list[int]]:
    """(total, rows) of the kernel's answer to a search or occurrences message."""
    header, buffers = source.on_message({"id": 1, **content})
    assert "error" not in header, header
    rows = decode_columns(header["hits"], buffers)["row"]
    return header["total"], sorted(rows.tolist())


def _table_rows(prof):
    """(table, key) of every row of kernel, HLO op and op stats (IDLE aside)."""
    for kernel in prof.kernel_stats.kernel_name.unique():
        yield "kernels", {"kernel_name": kernel}
    for _, row in prof.hlo_stats.iterrows():
        yield "hlo", {"hlo_op_name": row.hlo_op_name, "program_id": row.program_id}
    ops = prof.op_stats[prof.op_stats.type != "IDLE"]
    for _, row in ops.iterrows():
        yield "ops", {"operation": row.operation, "host_or_device": row.host_or_device}


def test_typing_a_rows_query_finds_what_clicking_the_row_finds(source):
    """Every row of the tables: its query (what a click writes in the box) parses back to the
    row, and a search for it finds exactly the row's events (what the click's occurrences
    find), through the message the browser sends when it is typed."""
    prof = source.prof
    checked = 0
    for table, key in _table_rows(prof):
        query = query_of(table, key)
        parsed = parse_query(query)
        assert parsed[0] == table and {k: str(v) for k, v in parsed[1].items()} == \
            {k: str(v) for k, v in key.items()}, query
        want = _rows(source, occurrences(prof, table, key))
        assert source.find(query).tolist() == want, query
        checked += 1
    assert checked > 50
    query = query_of("kernels", {"kernel_name": prof.kernel_stats.kernel_name.iloc[0]})
    clicked = _answer(source, {"kind": "occurrences", "table": "kernels",
                               "key": {"kernel_name": prof.kernel_stats.kernel_name.iloc[0]}})
    assert _answer(source, {"kind": "search", "query": query}) == clicked
    assert clicked[0] > 0


def _texts(source: TimelineSource, row: int) -> str:
    """Everything the details of row ``row`` say of it, and of its HLO op (its stat, or
    the op a command buffer's kernel is attributed to) what HLO op stats say, lower case."""
    prof = source.prof
    d = source.describe(row)
    args = dict(d.pop("Arguments"))
    inside = prof.result("command_buffer_kernels")
    ops = {args.get("hlo_op"), *inside.hlo_op[inside.event == source.event_id(row)]}
    hlo = prof.hlo_stats[prof.hlo_stats.hlo_op_name.isin(ops)]
    return " ".join([*d.values(), *args.values(), *hlo.framework_op_name.astype(str),
                     *hlo.category.astype(str)]).lower()


def test_an_op_type_finds_events_by_their_stats(source):
    """``dot_general``, the top op type of the H200 captures' overview, finds the kernels of
    the HLO ops rolled up into dot_general ops, whose names do not say it, and only events
    that say it somewhere; case does not matter."""
    prof = source.prof
    top = prof.op_stats[prof.op_stats.host_or_device == "Device"].sort_values(
        "total_self_time_us", ascending=False)
    assert "dot_general" in set(top.type[top.type != "IDLE"].head(3))
    found = source.find("dot_general")
    named = source.index.named("dot_general")
    assert len(found) > len(named) and set(named.tolist()) <= set(found.tolist())
    assert source.find("DOT_GENERAL").tolist() == found.tolist()
    rng = np.random.default_rng(0)
    for row in rng.choice(found, min(60, len(found)), replace=False).tolist():
        assert "dot_general" in _texts(source, row), row
    device = _rows(source, occurrences(prof, "ops", {
        "operation": top.operation[top.type == "dot_general"].iloc[0],
        "host_or_device": "Device"}))
    assert device and set(device) <= set(found.tolist())  # the row's events among them
    total, rows = _answer(source, {"kind": "search", "query": "dot_general"})
    assert total == len(found) and rows == found.tolist()


def test_an_hlo_category_a_name_scope_and_a_name_find_their_events(source):
    prof = source.prof
    category = prof.hlo_stats.category.astype(str).value_counts().index[0]
    found = source.find(category)
    assert len(found) > 0
    rng = np.random.default_rng(1)
    for row in rng.choice(found, min(40, len(found)), replace=False).tolist():
        assert category.lower() in _texts(source, row)
    # an event whose details name its HLO category is found by it
    known = set(prof.hlo_stats.category.astype(str))
    shown = next((r, c) for r in range(len(source.event_ids))
                 for c in [source.describe(r).get("category")] if c in known)
    assert shown[0] in set(source.find(shown[1]).tolist())
    scope = "jvp("  # JAX kernels carry their name scope as their "name" stat
    assert len(source.find(scope)) > len(source.index.named(scope))
    kernel = prof.kernel_stats.kernel_name.iloc[0]
    assert set(source.index.named(kernel).tolist()) <= set(source.find(kernel).tolist())
    assert source.find("no event is called this").tolist() == []
    assert source.find("  ").tolist() == []
