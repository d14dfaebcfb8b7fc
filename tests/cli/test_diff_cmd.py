"""``tfprof diff`` on a real pair of runs (a JAX program whose fusions a recompile renumbered):
its JSON carries tp.compare's numbers (verdict, explained part, matched ops with bands,
waterfall, HLO diff), its text says the same."""

from __future__ import annotations

import pandas as pd
import pytest

import tfprof_nb as tp

from ..make_compare_profiles import capture
from ..test_cli import tfprof, tfprof_json


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return capture(tmp_path_factory.mktemp("jax_renumbered"), "jax_renumbered")


def test_diff_json_and_text_follow_compare(runs):
    base, new = runs["base"], runs["shifted"]
    doc = tfprof_json("diff", base, new, "--top", "30")
    c = tp.compare(tp.load(base), tp.load(new))
    assert doc["verdict"] == c.step_time["verdict"]
    assert doc["explained_ms"] == pytest.approx(c.explained)
    ex = doc["explained_ms"]
    assert ex["explained_ms"] + ex["unexplained_ms"] == pytest.approx(ex["step_ms"])
    ops = pd.DataFrame(doc["ops"])
    assert ops.operation.tolist() == c.ops.head(30).index.get_level_values(1).tolist()
    assert ops.delta_us.tolist() == pytest.approx(c.ops.delta.head(30).tolist())
    tanh = ops[ops.base_op == "wrapped_tanh"].iloc[0]
    assert (tanh.new_op, tanh.matched_by) == ("wrapped_tanh.1", "same computation")
    assert tanh.band_low_us <= tanh.band_high_us and tanh.noise != "beyond noise"
    waterfall = pd.DataFrame(doc["waterfall"])
    assert waterfall.delta_ms.iloc[:-1].sum() == pytest.approx(c.step_time["new"])
    hlo = pd.DataFrame(doc["hlo"])
    assert hlo.change.tolist() == c.hlo.change.tolist() and "fusions added" in set(hlo.change)
    text = tfprof("diff", base, new, "--top", "30").stdout
    assert doc["verdict"] in text
    assert "wrapped_tanh.1 (was wrapped_tanh)" in text and "same computation" in text
    assert "unexplained" in text and "HLO diff" in text
    assert "jit_train_step: fusions added: wrapped_tanh" in text


def test_ops_of_programs_sharing_a_name_are_told_apart():
    """Two ROCm captures (tests/data/mi300x_jax08_gemm, _conv) whose five programs are all
    named jit_dot: each removed ``custom-call.1`` is another program's, and the rows say
    which (``in jit_dot(49)``), from the program ids the HLO stats give; an op whose name
    no other row shares keeps its plain label."""
    from ..conftest import DATA

    base, new = DATA / "mi300x_jax08_gemm.xplane.pb", DATA / "mi300x_jax08_conv.xplane.pb"
    ops = tp.compare(tp.load(base), tp.load(new)).ops.reset_index()
    calls = ops[ops.operation == "custom-call.1"]
    hlo = tp.load(base).hlo_stats
    ran = hlo[hlo.hlo_op_name == "custom-call.1"]
    assert len(calls) == len(ran) >= 2 and calls.program_name.is_unique
    assert set(calls.program_name) == {f"{m}({p})" for m, p in zip(ran.module, ran.program_id)}
    text = tfprof("diff", base, new, "--top", "30").stdout
    for program in calls.program_name:
        assert f"Device custom-call.1 in {program} " in text
    assert "Device cudnn-conv.1 " in text and "cudnn-conv.1 in " not in text
