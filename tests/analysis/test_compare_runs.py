"""tp.compare on real pairs of runs: per-step op times, ops matched across recompiles, noise
bands, the explained and unexplained parts of the step-time change, the HLO diff.

The pairs are captured here (tests/make_compare_profiles.py): a JAX program before and after
an extra elementwise op that renumbers its fusions, a TensorFlow model with a wider Dense
layer, and one JAX program captured for 10 and for 20 steps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp

from ..conftest import DATA
from ..make_compare_profiles import capture


@pytest.fixture(scope="module")
def renumbered(tmp_path_factory):
    runs = capture(tmp_path_factory.mktemp("jax_renumbered"), "jax_renumbered")
    return tp.load(runs["base"]), tp.load(runs["shifted"])


@pytest.fixture(scope="module")
def lengths(tmp_path_factory):
    runs = capture(tmp_path_factory.mktemp("jax_lengths"), "jax_lengths")
    return tp.load(runs["short"]), tp.load(runs["long"])


@pytest.fixture(scope="module")
def wider(tmp_path_factory):
    runs = capture(tmp_path_factory.mktemp("tf_wider"), "tf_wider")
    return tp.load(runs["base"]), tp.load(runs["wider"])


def _adds_up(c) -> None:
    """explained + unexplained = the medians' change, and so do the waterfall's steps."""
    st, ex = c.step_time, c.explained
    assert ex["step_ms"] == pytest.approx(st["new"] - st["base"])
    assert ex["explained_ms"] + ex["unexplained_ms"] == pytest.approx(ex["step_ms"])
    side = c.ops[c.ops.index.get_level_values(0) == ex["side"]]
    assert ex["explained_ms"] == pytest.approx(side.delta.sum() / 1e3)
    w = c.waterfall(top=5)
    assert w.measure.iloc[0] == "absolute" and w.measure.iloc[-1] == "total"
    assert w.delta_ms.iloc[0] == pytest.approx(st["base"])
    assert w.delta_ms.iloc[0] + w.delta_ms.iloc[1:-1].sum() == pytest.approx(st["new"])
    assert w.label.iloc[-2] == "unexplained"


def test_op_step_times_sum_to_the_ops_time_in_the_steps(lengths):
    prof = lengths[1]
    per_step = prof.result("op_step_times")
    assert set(per_step.step) == set(prof.steps.index) and len(prof.steps) == 20
    xla = per_step[per_step.program_id >= 0].groupby(["program_id", "op"]).self_ps.sum() / 1e6
    stats = prof.hlo_stats.set_index(["program_id", "hlo_op_name"]).total_self_time_us
    # the events inside the steps: all of each op's time but for calls outside the markers
    inside = xla / stats.reindex(xla.index)
    assert inside.between(0.9, 1 + 1e-9).all(), inside[~inside.between(0.9, 1 + 1e-9)]
    one = xla.idxmax()
    c = tp.compare(*lengths)
    row = c.ops[(c.ops.b_op == one[1])].iloc[0]
    mine = per_step[(per_step.program_id == one[0]) & (per_step.op == one[1])]
    steps = mine.set_index("step").self_ps.reindex(prof.steps.index, fill_value=0) / 1e6
    assert row.b == pytest.approx(float(np.median(steps)))


def test_a_pods_ops_are_timed_per_host_step():
    """Two TF workers number their steps apart (1500 of one is 1558 of the other): each
    host's step is its own sample of an op's time, so an op's median is of its time on a host
    in a step, over the 283 host steps (summed by step number, the hosts' shared numbers read
    about twice an op's time: MatMul 190 us on them, 85 us on the others)."""
    prof = tp.load(DATA / "tf_two_workers_loaded")
    per_step = prof.result("op_step_times")
    assert set(per_step.host) == set(prof.steps.host)
    c = tp.compare(prof, prof)
    keys = list(zip(prof.steps.host.astype(str), prof.steps.index))
    assert len(set(keys)) == len(prof.steps) == 283
    top = c.ops.reset_index().sort_values("a", ascending=False).iloc[0]
    mine = per_step[(per_step.op == top.a_op) & (per_step.side == top.host_or_device)]
    times = mine.set_index(["host", "step"]).self_ps.reindex(keys, fill_value=0) / 1e6
    assert top.a == pytest.approx(float(np.median(times)))
    by_number = mine.groupby("step").self_ps.sum().reindex(
        pd.unique(prof.steps.index), fill_value=0) / 1e6
    assert float(np.median(by_number)) > 1.3 * top.a  # (what the rule was: mixed hosts)


def test_renumbered_fusions_are_matched(renumbered):
    c = tp.compare(*renumbered, labels=("before", "after"))
    ops = c.ops.reset_index()
    assert len(ops) and (ops.kind == "xla").all()
    # the model's tanh is wrapped_tanh before, wrapped_tanh.1 after: the same computation
    tanh = ops[ops.a_op == "wrapped_tanh"].iloc[0]
    assert (tanh.b_op, tanh.matched_by) == ("wrapped_tanh.1", "same computation")
    # the extra op is the one added; nothing of the model is lost
    added = ops[ops.matched_by == "added"]
    assert added.b_op.tolist() == ["wrapped_tanh"]
    assert not (ops.matched_by == "removed").any()
    renamed = ops[(ops.a_op != ops.b_op) & (ops.a_op != "") & (ops.b_op != "")]
    assert renamed.a_op.tolist() == ["wrapped_tanh"]
    hlo = c.hlo
    assert hlo[hlo.change == "fusions added"].detail.tolist() == ["wrapped_tanh"]
    assert "wrapped_tanh.1 (was wrapped_tanh)" in c.waterfall(top=50).label.tolist()
    _adds_up(c)


def test_a_wider_layer_is_beyond_noise_and_the_rest_is_not(wider):
    c = tp.compare(*wider)
    ops = c.ops.reset_index()
    assert (ops.kind == "tf").all() and c.explained["side"] == "Host"
    assert set(ops.matched_by) == {"same name"}  # the same model, layer by layer
    beyond = ops[ops.noise == "beyond noise"]
    # the hidden layer's forward and backward ops, and the matmuls that read its output
    for op in ("hidden_1/Relu", "hidden_1/MatMul/MatMul", "hidden_1/ReluGrad",
               "hidden_1/BiasAdd/BiasAddGrad"):
        assert beyond.operation.str.endswith(op).any(), (op, ops.head(12))
    assert (beyond.delta > 0).all() and (beyond.band_low > 0).all()
    # the ops of the layer, the matmuls that read it and the optimizer's hold the change; an
    # op of another layer or of the loss is beyond noise only by a sliver of it (a wider layer
    # slows a few tiny ops beside it too, e.g. out_1/Add 3.4 -> 12.4 us: caches, and a busy
    # machine's preemptions land in longer steps more often)
    changed = beyond.operation.str.contains("hidden_1/|out_1/MatMul|sgd", regex=True)
    assert beyond[~changed].delta.sum() < 0.02 * beyond.delta.sum(), beyond[~changed]
    assert c.step_time["band"]["low"] > 0
    _adds_up(c)


def _op_medians(prof) -> pd.Series:
    """Each XLA op's median over the profile's steps of its self time in the step (us; 0 in a
    step without it), from the per-step op table."""
    per_step = prof.result("op_step_times")
    per_step = per_step[per_step.program_id >= 0]
    table = per_step.pivot_table(index="step", columns="op", values="self_ps", aggfunc="sum")
    return (table.reindex(prof.steps.index).fillna(0) / 1e6).median()


def test_ten_and_twenty_steps_of_one_program(lengths):
    short, long = lengths
    assert (len(short.steps), len(long.steps)) == (10, 20)
    c = tp.compare(short, long)
    ops = c.ops.reset_index()
    assert set(ops.matched_by) == {"same computation"} and (ops.a_op == ops.b_op).all()
    assert (ops.per_step == "median of steps").all()
    assert ops.band_low.notna().all()
    # each op's figure on each side is the median over that capture's own steps of the op's
    # self time in the step (0 in a step without it): ten steps and twenty give one op one
    # figure per step, whatever the machine's load did to the two captures
    for side, prof in (("a", short), ("b", long)):
        assert np.allclose(ops[side], _op_medians(prof)[ops[f"{side}_op"]].to_numpy()), side
        # per step, not per capture: XLA's threads can run ops beside each other past a step's
        # length, never to the ten or twenty steps' sum
        assert ops[side].sum() < 3 * prof.steps.duration_ms.median() * 1e3, side
    assert c.hlo.empty
    _adds_up(c)
    # XLA on the CPU: XProf's op stats call these ops device ops, its step breakdown their
    # time host compute; the summary names them for what they are
    assert (short.hlo_stats.device_type == "CPU").all()
    assert "ms in the XLA:CPU ops' medians" in repr(c) and "device ops" not in repr(c)


def test_a_profile_against_itself(wider):
    base = wider[0]
    c = tp.compare(base, base)
    assert (c.ops.delta == 0).all() and not (c.ops.noise == "beyond noise").any()
    assert c.explained["explained_ms"] == 0 and c.explained["unexplained_ms"] == 0
    assert c.categories is c.steps and c.speedup == pytest.approx(1.0)
    text = repr(c)
    assert "0.000 ms in the host ops' medians" in text


def test_runs_without_steps_compare_their_totals_and_say_so():
    """Neither run has steps (two MI300X captures): each op's values are the runs' totals,
    and the verdict says that, not "total / steps (no time per step)"."""
    a, b = (tp.load(DATA / f"mi300x_jax08_{n}.xplane.pb") for n in ("gemm", "conv"))
    assert a.steps.empty and b.steps.empty
    c = tp.compare(a, b)
    assert (c.ops.noise == "no band: the runs' totals (no steps)").all()
    ops = a.result("op_stats_without_idle")
    host = ops[ops.host_or_device == "Host"].set_index("operation").total_self_time_us
    assert c.ops.loc[("Host", "XlaModule"), "a"] == pytest.approx(host["XlaModule"])


def test_without_steps_an_op_is_its_total_over_the_steps(wider):
    base, new = wider
    c = tp.compare(base, new)
    from tfprof_nb.analysis.findings.comparison import COMPARED, compare as compare_tables

    tables = [{n: p.result(n) for n in COMPARED} for p in (base, new)]
    for t in tables:  # as if the op's events could not be placed in the steps
        t["op_step_times"] = t["op_step_times"].iloc[0:0]
    flat = compare_tables(*tables, step_time=c.step_time).ops
    assert (flat.per_step == "total / steps").all() and flat.band_low.isna().all()
    assert (flat.noise == "no band: total / steps (no time per step)").all()
    # what the explained part sums says so: totals, not medians (they were called medians)
    from tfprof_nb.analysis.findings.op_changes import explained, ops_time_words

    ex = explained(flat, c.step_time.get("new", 0) - c.step_time.get("base", 0))
    assert ex["totals"] == ex["ops"] > 0
    assert ops_time_words(ex) == "the host ops' totals / steps (no op's time per step is known)"
    ops = base.result("op_stats_without_idle").set_index("operation").total_self_time_us
    one = flat.reset_index().iloc[0]
    assert one.a == pytest.approx(ops[one.a_op] / len(base.steps))
    assert isinstance(flat, pd.DataFrame)


def test_a_pair_with_one_side_without_times_per_step_compares_totals(wider):
    """Where one run's op has no time per step (its events could not be placed in steps)
    the pair compares total / steps on both sides: the other side's median was set beside
    it (H200 nocmdbuf against the transformer capture: 206 deltas were a mean minus a
    median)."""
    base, new = wider
    c = tp.compare(base, new)
    from tfprof_nb.analysis.findings.comparison import COMPARED, compare as compare_tables

    tables = [{n: p.result(n) for n in COMPARED} for p in (base, new)]
    tables[1]["op_step_times"] = tables[1]["op_step_times"].iloc[0:0]  # the new run's only
    mixed = compare_tables(*tables, step_time=c.step_time).ops.reset_index()
    both = mixed[(mixed.a_op != "") & (mixed.b_op != "")]
    assert len(both) and (both.per_step == "total / steps").all()
    totals = [p.result("op_stats_without_idle").set_index("operation").total_self_time_us
              for p in (base, new)]
    for row in both.head(5).itertuples():
        assert row.a == pytest.approx(totals[0][row.a_op] / len(base.steps))
        assert row.b == pytest.approx(totals[1][row.b_op] / len(new.steps))


def test_a_removed_op_and_the_added_op_of_its_name_are_two_bars():
    """H100 -> H200 of one JAX program: XLA's recompile removed 'loop_convert_fusion' and
    added another of that name.  The waterfall draws them as two bars (it drew two bars in one
    category: a chart's categories are its labels), each labelled by how it was matched."""
    from tfprof_nb.plot.compare_figures import waterfall_figure

    c = tp.compare(tp.load(DATA / "jax_h100_nocmdbuf.xplane.pb"),
                   tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb"))
    w = c.waterfall()
    assert w.label.is_unique
    assert {"loop_convert_fusion (removed)", "loop_convert_fusion (added)"} <= set(w.label)
    x = list(waterfall_figure(c).data[0].x)
    assert len(set(x)) == len(x) == len(w)
    _adds_up(c)


def test_runs_without_steps_compare_their_totals():
    """Two MI300X captures without steps: each device op's value is its total self time over
    the profile (its HLO stats row's; the profile as one step, as the kernels' table counts
    it), not NaN: the diff printed 'nan ... +nan' for every op beside kernel totals."""
    base, new = (tp.load(DATA / f) for f in ("mi300x_jax_conv_legacy.xplane.pb",
                                              "mi300x_jax08_conv.xplane.pb"))
    assert base.steps.empty and new.steps.empty
    c = tp.compare(base, new)
    device = c.ops.loc["Device"]
    assert len(device) and device.a.notna().all() and device.b.notna().all()
    assert (device.per_step == "total / steps").all() and device.band_low.isna().all()
    for prof, side, name in ((base, "a", "a_op"), (new, "b", "b_op")):
        totals = prof.hlo_stats.groupby("hlo_op_name").total_self_time_us.sum()
        named = device[device[name] != ""]
        assert len(named)
        np.testing.assert_allclose(named[side], totals.reindex(named[name]).to_numpy())
    kernels = c.kernels  # (the kernels' totals, on the same footing)
    assert kernels.a.sum() == pytest.approx(base.kernel_stats.total_duration_us.sum())
