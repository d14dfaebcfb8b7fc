"""The trace viewer's event details, built and formatted in Python
(``tfprof_nb.offline.details``): what the live widget answers and an offline page embeds; the
three numbers a page writes itself (start, duration, event id) held to Python's rule by
``js/test/details_cases.json``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.trace import event_arguments
from tfprof_nb.offline.columns import decode_columns
from tfprof_nb.offline.details import (ARGUMENTS, NO_ROW, OWN_DURATION, OWN_ID, OWN_START,
                                       detail_rows, event_details_block, id_text, time_text)
from tfprof_nb.widgets.trace_view import TimelineSource
from tfprof_nb.xspace.model import StatTable

from ..conftest import DATA


def test_times_have_three_decimals_as_python_rounds_them():
    # exact ties go to the even neighbour; all digits of large values; -0, nan, inf
    cases = [(0.0625, "0.062"), (0.1875, "0.188"), (-0.0625, "-0.062"), (0.3125, "0.312"),
             (123456.0625, "123456.062"), (0.0025, "0.003"), (1.0005, "1.000"), (2.5, "2.500"),
             (0, "0.000"), (21.3096, "21.310"), (4503599627370498, "4503599627370498.000"),
             (5000000000000.0625, "5000000000000.062"), (-0.0, "-0.000"), (-0.0001, "-0.000"),
             (float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "-inf"),
             (1e21, "1000000000000000000000.000"),
             (-1.5e22, "-15000000000000000000000.000"), (np.float32(0.1), "0.100")]
    for x, want in cases:
        assert time_text(x) == f"{want} us", x


def test_ids_have_every_digit():
    assert id_text(0) == "0" and id_text(np.uint32(2**32 - 1)) == "4294967295"
    assert id_text(2**60) == "1152921504606846976" and id_text(2.0**64) == "18446744073709551616"
    assert id_text(np.int64(-7)) == "-7"


# The page writes each event's start, duration and id from the numbers it carries
# (js/src/format.ts), by the rule of time_text and id_text: these cases, with Python's texts,
# are what js/test/format.test.ts holds it to.  A number goes as JSON, else as "special"
# (nan, inf, -inf, -0.0) or "big" (an integer past a double's, a BigInt there); "text" None:
# Python raises.
DETAILS_CASES = Path(__file__).resolve().parents[2] / "js" / "test" / "details_cases.json"
_SPECIAL = ("nan", "inf", "-inf", "-0.0")


def _case(x, fmt) -> dict:
    if isinstance(x, float) and (not math.isfinite(x) or (x == 0 and math.copysign(1, x) < 0)):
        case = {"special": repr(x)}
    elif isinstance(x, int) and abs(x) > 2**53 and float(x) != x:
        case = {"big": str(x)}
    else:
        case = {"x": x}
    try:
        case["text"] = fmt(x)
    except (ValueError, OverflowError):
        case["text"] = None
    return case


def _details_cases() -> dict:
    rng = np.random.default_rng(11)
    times = [0.0, -0.0, 0.0625, 0.1875, -0.0625, 0.3125, 0.4375, 123456.0625, 0.0025, 0.0005,
             0.0015, 1.0005, 2.0005, 1000.0005, -1.0005, 2.5, 0.9995, 9.9995, 999999.9995,
             21.3096, -0.0001, -0.0005, 1e-300, 5e-324, 4503599627370498.0, 2.0**53,
             2.0**53 + 2, 5000000000000.0625, 1e20, 1e21, -1.5e22, 1.7976931348623157e308,
             float(np.float32(0.1)), float("nan"), float("inf"), float("-inf")]
    times += (rng.integers(-2**40, 2**40, 100) / 16).tolist()  # ties among them
    times += (np.exp(rng.uniform(-14, 52, 200)) * rng.choice([-1, 1], 200)).tolist()
    times += (rng.integers(0, 10**9, 100) / 1e6 + 0.0005).tolist()
    ids = [0, 1, 42, -1, 2**31, 2**32 - 1, 2**32, 2**53, 2**53 + 1, 2**53 + 2, 2**60,
           2**63 - 1, -(2**63), 2**64 - 1, 2**64, 10**21, 10**30, 2.0**64, 1e21, 2.5, -0.5,
           -0.0, 1e300, float("nan"), float("inf")]
    ids += rng.integers(0, 2**32, 50).tolist()
    return {"us": [_case(x, time_text) for x in times], "int": [_case(x, id_text) for x in ids]}


def test_the_page_writes_numbers_as_python_does():
    """js/test/details_cases.json holds Python's texts of each case (rewrite it with
    ``python -m tests.widgets.test_event_details`` after a change of the rule, in both)."""
    cases = _details_cases()
    stored = json.loads(DETAILS_CASES.read_text())
    # the stored cases' texts are Python's rule applied to the stored numbers (the numbers
    # themselves may differ in a last digit where this machine's np.exp rounds otherwise)
    for kind, fmt in (("us", time_text), ("int", id_text)):
        assert len(stored[kind]) == len(cases[kind])
        for case in stored[kind]:
            x = case.get("x", float(case["special"]) if "special" in case else
                         int(case["big"]) if "big" in case else None)
            assert _case(x, fmt) == case, case
    for a, b in zip(stored["us"], cases["us"]):  # the same cases, but for a last digit
        assert a == b or math.isclose(a["x"], b["x"], rel_tol=1e-13), (a, b)
    cases = stored
    assert {c.get("special") for c in cases["us"]} >= set(_SPECIAL)
    assert any("big" in c for c in cases["int"]) and any(c["text"] is None for c in cases["int"])


def _raw(values) -> np.ndarray:
    """int64 bit patterns of stat values (a double's, a uint64's)."""
    out = []
    for v in values:
        if isinstance(v, float):
            out.append(np.float64(v).view(np.int64))
        elif v >= 2**63:
            out.append(np.uint64(v).view(np.int64))
        else:
            out.append(np.int64(v))
    return np.array(out, np.int64)


def _stats(rows, names, values) -> StatTable:
    """A stat table of (owner kind, owner, name code, kind, value) rows."""
    ok, owner, code, kind, raw = zip(*rows)
    return StatTable(owner_kind=np.array(ok, np.int8), owner=np.array(owner, np.int32),
                     name_code=np.array(code, np.uint8), kind=np.array(kind, np.int8),
                     raw_value=_raw(raw), names=names, values=values)


def _space(stats: StatTable, metadata_row: list[int]):
    """A host of these stats whose events have these event metadata rows."""
    events = SimpleNamespace(metadata_row=np.array(metadata_row, np.int32))
    return SimpleNamespace(stats=stats, events=events)


def _source(steps=True):
    """Hosts a (events 0, 1) and b (event 2), drawn in timeline rows 2, 0, 1."""
    a = _stats([(0, 0, 0, 4, 0), (0, 0, 1, 3, 3), (0, 0, 2, 2, 2**63 + 1), (0, 0, 3, 1, 0.1),
                (0, 0, 4, 5, 1), (0, 0, 5, 0, 0),
                (1, 0, 0, 4, 0),  # an event metadata's stat, between events' stats
                (0, 1, 6, 4, 2), (0, 1, 7, 4, 3), (0, 1, 1, 3, 4), (0, 1, 1, 3, 5),
                (0, 1, 8, 4, 4)],
               ["tf_op", "group_id", "big", "ratio", "blob", "unset", "name", "__proto__", "step"],
               ["MatMul:MatMul", b"\x00x", "renamed", "p", "mine"])
    b = _stats([(0, 0, 0, 4, 0), (0, 0, 1, 4, 1)], ["tf_op", "hlo_op"], ["<i>y</i>", "fusion.3"])
    cat = pd.Categorical
    events = pd.DataFrame({
        "name": cat(["dense/MatMul:MatMul", "<b>x</b>", "<b>x</b>"]), "start_us": [1.0, 5.0, 2.0],
        "duration_us": [2.0004, 0.0625, 10.0], "host": cat(["a", "a", "b"]),
        "plane": cat(["/host:CPU"] * 3), "line": cat(["tf_Compute", "tf_Compute", "python"])})
    prof = SimpleNamespace(events=events, event_offsets={"a": 0, "b": 2},
                           spaces={"a": _space(a, [0, -1]), "b": _space(b, [-1])},
                           hlo_stats=pd.DataFrame({"hlo_op_name": ["fusion.2", "fusion.3"],
                                                   "category": ["convolution", "loop fusion"]}))
    table = pd.DataFrame({"host": ["b", "a", "a"], "step_name": ["9", "7", "8"],
                          "start_us": [0.0, 0.0, 0.0], "duration_ms": [0.004, 0.004, 0.01]},
                         index=pd.Index([9, 7, 8], name="step"))
    return SimpleNamespace(prof=prof, event_ids=np.array([1, 2, 0]),
                           steps=table if steps else None)


PLACE_A = [("host", "a"), ("plane", "/host:CPU"), ("track", "tf_Compute")]
# the event's own fields (its category: the op type its name says), then its stats, each one
EVENT_0 = [("name", "dense/MatMul:MatMul"), ("category", "MatMul"), ("start", "1.000 us"),
           ("duration", "2.000 us"), *PLACE_A, ("step", "7"), ("event id", "0"),
           (ARGUMENTS, [("tf_op", "MatMul:MatMul"), ("group_id", "3"),
                        ("big", "9223372036854775809"), ("ratio", "0.1"),
                        ("blob", "0078"), ("unset", ""),
                        ("metadata.tf_op", "MatMul:MatMul")])]
# stats named like fields ("name", "step") are arguments, after the fields, which keep their
# own texts; a stat carried twice ("group_id") is there twice, the second numbered; no
# category
EVENT_1 = [("name", "<b>x</b>"), ("start", "5.000 us"), ("duration", "0.062 us"), *PLACE_A,
           ("step", "8"), ("event id", "1"),
           (ARGUMENTS, [("name", "renamed"), ("__proto__", "p"), ("group_id", "4"),
                        ("group_id #2", "5"), ("step", "mine")])]
# the category of its HLO op, as HLO op stats say
EVENT_2 = [("name", "<b>x</b>"), ("category", "loop fusion"), ("start", "2.000 us"),
           ("duration", "10.000 us"), ("host", "b"), ("plane", "/host:CPU"), ("track", "python"),
           ("step", "9"), ("event id", "2"),
           (ARGUMENTS, [("tf_op", "<i>y</i>"), ("hlo_op", "fusion.3")])]


@pytest.mark.parametrize("few", [True, False])
def test_rows_fields_order_and_text(monkeypatch, few):
    """Name, category, times, place, the step of the event's own host (the first running
    when it starts), event id, then every stat in its order as an argument, then its event
    metadata's; by bisection or by a pass over the stats."""
    if not few:
        monkeypatch.setattr(event_arguments, "_FEW", 0)
    d = detail_rows(_source(), [2, 0, 1])
    assert [list(d.of(i).items()) for i in range(3)] == [EVENT_0, EVENT_1, EVENT_2]
    assert detail_rows(_source(), [1]).of(0) == dict(EVENT_2)
    bare = detail_rows(_source(steps=False), [0, 1])  # no steps: no step field
    assert "step" not in bare.of(0) and "step" not in bare.of(1)
    assert ("step", "mine") in bare.of(0)[ARGUMENTS]


def page_rows(block: dict, start) -> list[list[tuple]]:
    """Each covered event's details as the page reads them (js/src/details.ts), as a list of
    their items, given the start of each (the page has it from the tile it draws the event
    with): its fields, then :data:`ARGUMENTS`, its stats as (key, text) pairs."""
    cols = decode_columns(block["columns"])
    off, key, val = cols["off"], cols["key"], cols["val"]

    def text(v: int, i: int) -> str:
        if v == OWN_START:
            return time_text(start[i])
        if v == OWN_DURATION:
            return time_text(cols["dur"][i])
        return id_text(cols["id"][i]) if v == OWN_ID else block["texts"][v]

    def none(col, i) -> int:  # a column's all-ones value: no such field
        v = int(col[i])
        return NO_ROW if v == np.iinfo(col.dtype).max else v

    out = []
    for i in range(len(off) - 1):
        fields = [(k, c if isinstance(c, int) else none(cols[c], i)) for k, c in block["fields"]]
        args = zip(key[off[i]:off[i + 1]].tolist(), val[off[i]:off[i + 1]].tolist())
        out.append([(block["labels"][k], text(v, i)) for k, v in fields if v != NO_ROW]
                   + [(ARGUMENTS, [(block["labels"][k], text(v, i)) for k, v in args])])
    return out


def pane_rows(details: dict) -> list[tuple[str, str]]:
    """The rows the details pane shows of ``details``, in order: the fields, then the
    arguments (under their title)."""
    return [(k, v) for k, v in details.items() if k != ARGUMENTS] + \
        [tuple(p) for p in details.get(ARGUMENTS, [])]


def pane_text(details: dict) -> str:
    """The text of the details pane's rows of ``details`` (after its copy button): the
    fields, then the arguments' title and the arguments when there are any."""
    args = details.get(ARGUMENTS, [])
    return "".join(k + v for k, v in details.items() if k != ARGUMENTS) + \
        ((ARGUMENTS + "".join(k + v for k, v in args)) if args else "")


def test_the_page_embeds_the_same_rows():
    source = _source()
    source.link_rows = lambda: (np.array([0]), np.array([2]), np.array([0]))
    source.link_labels = lambda: [["kernel", "launch"]]
    block = event_details_block(source)  # rows 0, 1, 2: events 1, 2, 0
    assert page_rows(block, [5.0, 2.0, 1.0]) == [EVENT_1, EVENT_2, EVENT_0]
    assert all(isinstance(t, str) for t in block["texts"])
    # the numbers as numbers, not texts: a duration's, an id's; place codes a byte each
    cols = decode_columns(block["columns"])
    assert cols["dur"].dtype == np.float64 and list(cols["dur"]) == [0.0625, 10.0, 2.0004]
    assert cols["id"].dtype == np.uint32 and list(cols["id"]) == [1, 2, 0]
    assert not {"1", "2", "5.000 us", "0.062 us"} & set(block["texts"])
    assert [cols[c].dtype for _, c in block["fields"] if isinstance(c, str)] == [np.uint8] * 6
    part = event_details_block(source, np.array([0, 2]))
    assert page_rows(part, [5.0, 1.0]) == [EVENT_1, EVENT_0]
    cols = decode_columns(part["columns"])
    assert list(cols["rows"]) == [0, 2] and list(cols["link_dst"]) == [2]
    assert not {"start", "name"} & set(cols)  # where an event is drawn, and when: in the tiles


def test_live_answers_are_the_embedded_rows():
    """On a real capture with steps: the widget's answer (one event, found by bisection) is
    the row of every event the page embeds (found by one pass), each a text."""
    source = TimelineSource(tp.load(DATA / "jax_h200_transformer.xplane.pb"))
    rows = page_rows(event_details_block(source), source.index.start)
    assert len(rows) == len(source.event_ids)
    rng = np.random.default_rng(1)
    for i in rng.choice(len(rows), 200, replace=False).tolist():
        live = source.describe(i)
        assert list(live.items()) == rows[i]
        assert all(isinstance(v, str) for k, v in pane_rows(live))
    assert sum(dict(r).get("step") is not None for r in rows) > len(rows) // 2
    assert sum(dict(r).get("category") is not None for r in rows) > 0
    assert source.describe(-1) == {} and source.describe(len(rows)) == {}



def test_the_step_field_is_the_steps_number_as_the_menu_says_it():
    """Two TF workers: a step's name is 'train 1503' where the step menu and the critical
    path say 'step 1503': the field gives the number, the name beside it where it says
    something else ('1503 (train 1503)')."""
    prof = tp.load(DATA / "tf_two_workers_loaded")
    source = TimelineSource(prof)
    steps = prof.steps
    assert (steps.step_name.astype(str) != steps.index.astype(str)).all()
    said = {source.describe(i).get("step") for i in range(0, len(source.event_ids), 97)}
    said.discard(None)
    want = {f"{n} ({s})" for n, s in zip(steps.index, steps.step_name.astype(str))}
    assert said and said <= want, sorted(said - want)[:3]


if __name__ == "__main__":
    DETAILS_CASES.write_text(json.dumps(_details_cases()) + "\n")
