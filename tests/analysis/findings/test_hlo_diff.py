"""The HLO diff's fusion rows: on two real H200 captures of one program (XLA's command
buffers on and off) and on small identity tables whose answer is known."""

from __future__ import annotations

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.findings.hlo_diff import hlo_diff

from ...conftest import DATA


def _names(detail: str) -> tuple[list[str], list[str]]:
    """(base names, new names) of a fusion row's detail."""
    left, _, right = detail.partition(" -> ")
    return left.split(", "), (right.split(", ") if right else [])


@pytest.fixture(scope="module")
def h200_pair():
    return tp.compare(tp.load(DATA / "jax_h200_transformer.xplane.pb"),
                      tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb")).hlo


def test_fusions_with_the_same_ops_are_changed_not_split_and_merged(h200_pair):
    """Eight loop_subtract_fusions hold the same framework ops in both runs with another
    computation: once each as changed, not eight splits into all eight undone by eight
    merges (what the diff said before)."""
    hlo = h200_pair
    assert not hlo.change.isin(["fusion split", "fusions merged"]).any(), hlo.to_string()
    (changed,) = hlo[hlo.change == "fusions changed"].itertuples()
    names = changed.detail.split(", ")
    assert {f"loop_subtract_fusion.{i}" for i in range(2, 10)} <= set(names)
    assert changed.a_count == changed.b_count == len(names) == len(set(names))
    # a fusion is told once in the program's rows, on each side
    sides = ([], [])
    for r in hlo[hlo.change.str.startswith("fusion")].itertuples():
        for item in r.detail.split(", ") if r.change in ("fusions changed", "fusions added",
                                                          "fusions removed") else [r.detail]:
            base, new = _names(item) if " -> " in item else ([item], [item])
            sides[0].extend(base if r.change != "fusions added" else [])
            sides[1].extend(new if r.change != "fusions removed" else [])
    for side in sides:
        assert len(side) == len(set(side)), side


def test_a_rematerialised_computation_says_its_time_is_all_its_instances():
    """nocmdbuf -> transformer: custom-call.0's computation runs 9 times where it ran 5; the
    row's time sums all 9 (the op table gives custom-call.0 its own): its words say so."""
    c = tp.compare(tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb"),
                   tp.load(DATA / "jax_h200_transformer.xplane.pb"))
    rows = c.hlo[c.hlo.change == "rematerialised"]
    (row,) = rows[rows.detail.str.startswith("custom-call.0 ")].itertuples()
    assert (row.a_count, row.b_count) == (5, 9)
    assert row.detail == ("custom-call.0 (custom-call) and 8 more of the same computation: "
                          "computed 9 times, was 5; the time is all 9's")
    own = c.ops.xs("custom-call.0", level=1).delta.iloc[0]
    assert row.time_us > own > 0


def _identity(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    """An identity table of one program: (instruction, fingerprint, framework ops)."""
    return pd.DataFrame({"module_key": "p", "hlo_op": [r[0] for r in rows], "opcode": "fusion",
                         "root": "add", "fingerprint": [r[1] for r in rows],
                         "fused_ops": [r[2] for r in rows]})


def _changes(a: dict, b: dict) -> pd.DataFrame:
    names = sorted(set(a) | set(b))
    return pd.DataFrame({"program": "p", "kind": "xla",
                         "a_op": [n if n in a else "" for n in names],
                         "b_op": [n if n in b else "" for n in names],
                         "a": [a.get(n, 0.0) for n in names], "b": [b.get(n, 0.0) for n in names]})


def test_a_split_a_merge_and_a_changed_fusion_are_each_told_once():
    a = _identity([("f.1", "A", "x\ny"), ("g.1", "B", "u"), ("g.2", "C", "v"),
                   ("h.1", "D", "w"), ("k.1", "K", "z")])
    b = _identity([("f.2", "E", "x"), ("f.3", "F", "y"), ("g.3", "G", "u\nv"),
                   ("h.1", "H", "w"), ("k.1", "K", "z"), ("n.1", "N", "q")])
    times = _changes({"f.1": 10.0, "g.1": 3.0, "g.2": 4.0, "h.1": 5.0, "k.1": 1.0},
                     {"f.2": 4.0, "f.3": 5.0, "g.3": 6.0, "h.1": 7.0, "k.1": 1.0, "n.1": 2.0})
    rows = hlo_diff((a, b), times)
    got = {r.change: (r.detail, r.a_count, r.b_count, r.time_us) for r in rows.itertuples()}
    assert got == {"fusions changed": ("h.1", 1, 1, 2.0),
                   "fusion split": ("f.1 -> f.2, f.3", 1, 2, -1.0),
                   "fusions merged": ("g.1, g.2 -> g.3", 2, 1, -1.0),
                   "fusions added": ("n.1", 0, 1, 2.0)}


def _told(hlo: pd.DataFrame) -> tuple[set, set, set]:
    """(pairs the diff says changed, base fusions it says removed, new ones it says added)."""
    changed, removed, added = set(), set(), set()
    for r in hlo.itertuples():
        items = r.detail.split(", ")
        if r.change == "fusions changed":
            changed |= {tuple(i.split(" -> ")) if " -> " in i else (i, i) for i in items}
        elif r.change == "fusions removed":
            removed |= set(items)
        elif r.change == "fusions added":
            added |= set(items)
    return changed, removed, added


@pytest.mark.parametrize("names", [("jax_h100_nocmdbuf", "jax_h200_nocmdbuf"),
                                   ("jax_h200_transformer", "jax_h200_nocmdbuf")])
def test_the_diff_and_the_op_table_pair_the_same_fusions(names):
    """A fusion the HLO diff calls changed is a matched row of the op table, and one it
    calls removed or added is the op table's removed or added: one pairing on the page (on
    the H100/H200 pair the diff once called input_reduce_fusion.10 changed while the op
    table listed it removed and added)."""
    cmp = tp.compare(*(tp.load(DATA / f"{n}.xplane.pb") for n in names))
    changed, removed, added = _told(cmp.hlo)
    assert changed and (removed or added)
    ops = cmp.ops[cmp.ops.kind == "xla"]
    matched = {(a, b) for a, b, how in zip(ops.a_op, ops.b_op, ops.matched_by)
               if how not in ("removed", "added")}
    assert changed <= matched, changed - matched
    ran_a, ran_b = set(ops.a_op), set(ops.b_op)
    assert removed & ran_a <= set(ops.a_op[ops.matched_by == "removed"])
    assert added & ran_b <= set(ops.b_op[ops.matched_by == "added"])
    assert (removed & ran_a) | (added & ran_b)  # (the checks above have rows to hold)
