"""Op stats pies carry information (real JAX captures): no pie of one slice (a sentence says
what it would have shown), small slices folded into one "Other" slice that says how many it
holds, the largest slices labelled with a short name (the full one on hover)."""

from __future__ import annotations

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.plot.op_figures import PIE_LABEL_WIDTH, PIE_MIN_PCT, op_stats_figure, pie_slices
from tfprof_nb.plot._style import plain

from ..conftest import DATA


@pytest.fixture(scope="module")
def h200():
    return tp.load(DATA / "jax_h200_transformer.xplane.pb")


@pytest.fixture(scope="module")
def tpu():
    return tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")


def _sentences(fig) -> dict[str, str]:
    """{pie name: its sentence} of the cells drawn as a sentence instead of a pie."""
    return {a.name: a.text for a in fig.layout.annotations if a.name}


@pytest.mark.parametrize("include_idle", [True, False])
def test_every_drawn_pie_has_two_slices_and_sums_to_its_side(h200, tpu, include_idle):
    for prof in (h200, tpu):
        table = prof.op_stats_table(include_idle=include_idle)
        fig = op_stats_figure(table)
        for pie in fig.data:
            side, key = pie.name.split(" ")
            part = table[table.host_or_device == side]
            assert len(pie.labels) >= 2
            assert sum(pie.values) == pytest.approx(part.total_self_time_us.sum())
            named = [lab for lab in pie.labels if not lab.startswith("Other (")]
            assert named, "Other alone is no information"
            top = part.groupby(key).total_self_time_us.sum().sort_values(ascending=False)
            assert list(pie.labels[:len(named)]) == [plain(n) for n in top.index[:len(named)]]


def test_small_slices_fold_into_an_other_that_counts_them(h200):
    busy = h200.op_stats_table(include_idle=False)
    device = busy[busy.host_or_device == "Device"]
    by_op = device.groupby("operation").total_self_time_us.sum()
    pie = next(p for p in op_stats_figure(busy).data if p.name == "Device operation")
    other = [lab for lab in pie.labels if lab.startswith("Other (")]
    shown = len(pie.labels) - len(other)
    assert other == [f"Other ({(by_op > 0).sum() - shown} ops)"]  # the user saw "Other" alone
    assert pie.values[-1] == pytest.approx(by_op.sort_values().iloc[:-shown].sum())
    kept = pie.values[:shown] / by_op.sum() * 100
    assert (kept[3:] >= PIE_MIN_PCT).all()  # past the three largest, only slices that show
    # slices show the last part of their name, cut, told apart; the hover has the full name
    assert all(len(t.split(" #")[0]) <= PIE_LABEL_WIDTH for t in pie.text)
    assert len(set(pie.text)) == len(pie.text)
    assert "dot_general" in pie.text and "dot_general #2" in pie.text
    assert "%{label}" in pie.hovertemplate and pie.textinfo == "text+percent"


def test_a_pie_of_one_slice_is_a_sentence(h200, tpu):
    """H200: the host's one op and one type; TPU with idle: the host's IDLE alone."""
    busy = op_stats_figure(h200.op_stats_table(include_idle=False))
    assert {p.name for p in busy.data} == {"Device operation", "Device type"}
    host = h200.op_stats_table(include_idle=False).query("host_or_device == 'Host' and "
                                                         "total_self_time_us > 0")
    said = _sentences(busy)
    assert set(said) == {"Host operation", "Host type"}
    assert "One op takes all of it" in said["Host operation"]
    assert host.operation.iloc[0] in said["Host operation"]
    assert host["type"].iloc[0] in said["Host type"] and "100%" in said["Host type"]
    idle = op_stats_figure(tpu.op_stats_table(include_idle=True))
    assert {p.name.split(" ")[0] for p in idle.data} == {"Device"}
    assert "IDLE" in _sentences(idle)["Host operation"]
    # the row of sentences is short: the device pies keep their room
    assert idle.layout.height < 2 * 380


def test_pie_slices_never_leave_other_alone():
    many_small = pd.Series({f"op{i}": 1.0 for i in range(100)})  # 1 % each
    slices = pie_slices(many_small, top=10)
    assert list(slices.index) == ["op0", "op1", "op2", "Other (97 ops)"]
    assert slices.sum() == 100
    two = pie_slices(pd.Series({"a": 99.0, "b": 0.5, "c": 0.5}), noun=("type", "types"))
    assert list(two.index) == ["a", "b", "c"]  # folding one slice into "Other" says nothing
    assert list(pie_slices(pd.Series({"a": 5.0, "b": 0.0})).index) == ["a"]


def test_the_idle_slices_say_their_rule_beside_the_pages_own_idle_figure(h200):
    """prof.plot.op_stats() with IDLE: a caption says the slices are XProf's rule over the
    whole profile and gives the overview's own idle and duty-cycle figures (H200: the device
    pie's IDLE 80.4% beside 31.0% idle in the steps); BERT, whose kernels name no op, says
    why the devices read IDLE only.  Without IDLE, nothing on IDLE."""
    bert = tp.load(DATA / "gpu_bert_multiworker")
    for prof in (h200, bert):
        fig = prof.plot.op_stats()
        (caption,) = [a.text for a in fig.layout.annotations if a.name == "caption"]
        caption = caption.replace("<br>", " ")
        table = prof.op_stats_table(include_idle=True)
        idle = table[(table["type"] == "IDLE") & (table.host_or_device == "Device")]
        side = "device" if len(prof.duty_cycle) == 1 else "devices"
        assert f"{side} {float(idle.self_time_pct.iloc[0]):.1f}%" in caption
        assert "XProf's rule" in caption
        for key in ("device_idle_pct", "duty_cycle_pct"):
            assert f"{prof.measures.at[key, 'value']:.1f}%" in caption, (key, caption)
        busy = prof.plot.op_stats(include_idle=False)
        assert not [a for a in busy.layout.annotations
                    if a.name == "caption" and "IDLE rows" in a.text]
    assert "none of them names the op it ran for" in caption  # (BERT: no device op named)
    assert "1,330 kernels" in caption
