"""prof.op_stats for XLA programs: device time by framework op, from the HLO ops' metadata
(``op_name:op_type``), against xprof 2.24.2's framework_op_stats."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp

from .xla_profiles import make, oracle, oracle_frame, xplane


@pytest.fixture(scope="module")
def gpu_dir(tmp_path_factory):
    return make(tmp_path_factory, "gpu")


def _device(frame, column="host_or_device"):
    return frame[frame[column] == "Device"].set_index("operation")


def test_gpu_framework_ops_equal_xprof(gpu_dir):
    path = gpu_dir / "full.xplane.pb"
    ours = _device(tp.load(path).op_stats)
    ref = _device(oracle_frame(path, "framework_op_stats", 0))
    common = ref.index.drop("IDLE")
    assert len(common) >= 170
    a, b = ours.loc[common], ref.loc[common]
    assert (a.type == b.type).all()
    assert (a.occurrences == b.occurrences).all()  # the most of its HLO ops'
    assert np.allclose(a.total_time_us, b.total_time, rtol=0, atol=1e-9)
    assert np.allclose(a.total_self_time_us, b.total_self_time, rtol=0, atol=1e-9)
    # JAX names (type from the op name), TensorFlow names, XLA_Args, a plain TF kernel
    assert a.loc["jit(train)/dot_general", "type"] == "dot_general"
    assert a.loc["jit(loop)/while/body/add", "type"] == "add"
    assert a.loc["MatMul", "type"] == "MatMul" and a.loc["XLA_Args", "type"] == "XLA_Args"
    assert a.loc["dense/MatMul", "type"] == "MatMul"
    # an HLO op without provenance is its own framework op of type Unknown
    assert a.loc["copy.7", "type"] == "Unknown"
    # the op the HLO proto lacks: xprof drops it into IDLE, we keep it (Unknown)
    extra = ours.loc["not_in_hlo.9"]
    assert extra.type == "Unknown" and extra.total_time_us == 12.0
    assert ours.loc["IDLE"].total_time_us + 12.0 == pytest.approx(ref.loc["IDLE"].total_time)
    # same total: percentages of the same device time
    total_ours = ours.total_self_time_us.sum()
    assert total_ours == pytest.approx(ref.total_self_time.sum())


def test_without_protos_device_time_stays_by_hlo_op(gpu_dir):
    ours = _device(tp.load(gpu_dir / "no_hlo.xplane.pb").op_stats)
    assert (ours.drop(["IDLE", "dense/MatMul"]).type == "Unknown").all()
    assert ours.loc["conv_general_dilated.1", "type"] == "Unknown"
    assert ours.loc["ynn_fusion.1", "occurrences"] == 4


def test_tf_jit_compile_cpu_framework_ops(tmp_path_factory):
    """XLA:CPU runs a TF jit_compile function as thunks; their HLO metadata names the TF ops.
    xprof lists only host ops here (XLA:CPU is no device to it): we add Device rows and leave
    the host rows as xprof has them."""
    path = xplane(make(tmp_path_factory, "tf_jit"))
    stats = tp.load(path).op_stats
    ours = _device(stats)
    ref = oracle_frame(path, "framework_op_stats", 0)
    assert "Device" not in set(ref.host_or_device)
    assert ours.loc["MatMul", "type"] == "MatMul" and ours.loc["mul", "type"] == "Mul"
    assert ours.loc["Sum", "type"] == "Sum"
    assert (ours.drop("IDLE").occurrences == 4).all()
    assert ours.self_time_pct.sum() == pytest.approx(100.0)
    host = stats[stats.host_or_device == "Host"].set_index("operation")
    ref_host = ref[ref.host_or_device == "Host"].set_index("operation")
    assert set(host.index) == set(ref_host.index)
    assert np.allclose(host.loc[ref_host.index].total_self_time_us, ref_host.total_self_time,
                       atol=1e-6)
    # the host rows come first, ranked as xprof ranks them (its table has no device side); the
    # XLA:CPU rows follow
    assert list(stats.host_or_device) == ["Host"] * len(host) + ["Device"] * len(ours)
    assert (host.loc[ref_host.index, "rank"].to_numpy() == ref_host["rank"].to_numpy()).all()


def test_jax_cpu_framework_ops(tmp_path_factory):
    path = xplane(make(tmp_path_factory, "jax"))
    ours = _device(tp.load(path).op_stats)
    assert ours.loc["jit(step)/dot_general", "type"] == "dot_general"
    assert ours.loc["jit(loop)/while", "type"] == "while"
    hlo = tp.load(path).hlo_stats
    dots = hlo[hlo.framework_op_name == "jit(step)/dot_general:"]
    assert ours.loc["jit(step)/dot_general", "total_time_us"] == \
        pytest.approx(dots.total_time_us.sum())
    assert ours.loc["jit(step)/dot_general", "occurrences"] == dots.occurrences.max()
    assert oracle(path, "framework_op_stats")  # xprof answers, with host rows only
