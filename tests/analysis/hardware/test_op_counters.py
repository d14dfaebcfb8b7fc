"""prof.op_counters: each op's counter samples inside its executions, on a synthetic TPU
capture written with TensorFlow's xplane_pb2 (an XLA Ops line and a _counters_ line of unit
utilisation samples at known times), against the same figures computed here with numpy; and
on the real H200 capture (tests/data/jax_h200_counters)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tensorflow.tsl.profiler.protobuf import xplane_pb2

import tfprof_nb as tp
from tfprof_nb.analysis.hardware.op_counters import MIN_SAMPLES

US = 1_000_000  # ps
T0_NS = 1_795_000_000_000_000_000  # a wall-clock line timestamp
# op -> its executions [start, end] in us from the line's timestamp
EXECUTIONS = {"fusion.1": [(0, 100), (200, 300)], "fusion.2": [(100.5, 102)],
              "convolution.3": [(310, 350)], "copy.4": [(500, 510)]}
SAMPLE_US = np.arange(0, 420, 10.0)  # 0, 10, ..., 410 (copy.4's executions hold none)
SAMPLE_US = np.sort(np.append(SAMPLE_US, [101.0, 330.5]))  # one inside fusion.2


def _values(counter: str) -> np.ndarray:
    rng = np.random.default_rng(len(counter))
    return np.round(rng.uniform(0, 100, len(SAMPLE_US)), 3)


COUNTERS = {"MXU": _values("MXU"), "Vector ALU": _values("Vector ALU")}


def _space() -> xplane_pb2.XSpace:
    space = xplane_pb2.XSpace()
    plane = space.planes.add(id=1, name="/device:TPU:0")
    for sid, name in enumerate(("program_id", "symbol_id", "% util"), start=1):
        plane.stat_metadata[sid].id, plane.stat_metadata[sid].name = sid, name
    ops = plane.lines.add(id=1, name="XLA Ops", timestamp_ns=T0_NS)
    for mid, (op, runs) in enumerate(EXECUTIONS.items(), start=1):
        md = plane.event_metadata[mid]
        md.id, md.name, md.display_name = mid, f"%{op} = f32[8] {op.split('.')[0]}()", op
        md.stats.add(metadata_id=1, int64_value=7)
        md.stats.add(metadata_id=2, int64_value=mid)
        for start, end in runs:
            ops.events.add(metadata_id=mid, offset_ps=int(start * US),
                           duration_ps=int((end - start) * US))
    line = plane.lines.add(id=2, name="_counters_", timestamp_ns=T0_NS)
    for mid, (name, values) in enumerate(COUNTERS.items(), start=100):
        plane.event_metadata[mid].id, plane.event_metadata[mid].name = mid, name
        for t, v in zip(SAMPLE_US, values):
            ev = line.events.add(metadata_id=mid, offset_ps=int(t * US), duration_ps=0)
            ev.stats.add(metadata_id=3, double_value=float(v))
    return space


@pytest.fixture(scope="module")
def tpu(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tpu_counters") / "tpu.xplane.pb"
    path.write_bytes(_space().SerializeToString())
    return path


def _expected() -> pd.DataFrame:
    """Each op's figures computed directly: the samples inside any of its executions."""
    rows = []
    for op, runs in EXECUTIONS.items():
        for counter, values in COUNTERS.items():
            picked = np.concatenate([values[(SAMPLE_US >= a) & (SAMPLE_US <= b)]
                                     for a, b in runs])
            if not len(picked):
                continue
            figures = (picked.mean(), np.median(picked), picked.max()) \
                if len(picked) >= 5 else (np.nan,) * 3
            rows.append((op, counter, len(picked), *figures))
    return pd.DataFrame(rows, columns=["op", "counter", "samples", "mean", "median", "max"]) \
        .sort_values(["op", "counter"]).reset_index(drop=True)


def test_tpu_op_counters_equal_a_direct_computation(tpu):
    prof = tp.load(tpu)
    c = prof.counters
    assert set(c.counter) == set(COUNTERS) and set(c.unit) == {"%"}
    assert set(c.device) == {"TPU:0"} and len(c) == 2 * len(SAMPLE_US)
    oc = prof.op_counters
    assert set(oc.kind) == {"hlo_op"} and set(oc.device) == {"TPU:0"}
    got = oc.sort_values(["op", "counter"]).reset_index(drop=True)
    want = _expected()
    assert got.op.tolist() == want.op.tolist() and "copy.4" not in set(got.op)
    assert got.counter.tolist() == want.counter.tolist()
    assert got.samples.tolist() == want.samples.tolist()
    for col in ("mean", "median", "max"):
        np.testing.assert_allclose(got[col], want[col], rtol=1e-12, equal_nan=True)
    # fusion.2 holds one sample of its own (101 us): too few, its figures are NaN
    short = got[got.op == "fusion.2"]
    assert (short.samples == 1).all() and short[["mean", "median", "max"]].isna().all().all()
    # fusion.1's end at 100 us and start at 200 us take their samples (both ends included)
    assert (got[got.op == "fusion.1"].samples == 22).all()
    assert (got.samples >= MIN_SAMPLES).sum() == 2 * 2


def test_sql_over_op_counters(tpu):
    prof = tp.load(tpu)
    n = prof.sql("select count(*) as n from op_counters where samples >= 5")
    assert int(n.n[0]) == int((prof.op_counters.samples >= 5).sum()) == 4


def test_h200_kernels_rest_on_pm_samples_inside_them():
    prof = tp.load(Path(__file__).resolve().parents[2] / "data" / "jax_h200_counters"
                   / "vm.xplane.pb")
    oc = prof.op_counters
    pm = oc[oc.counter == "sm__cycles_active.avg"]
    assert {"kernel", "hlo_op"} <= set(pm.kind)
    # no kernel takes more PM samples than there are (363), and every figure rests on >= 5
    assert pm[pm.kind == "kernel"].samples.sum() <= 363
    assert (pm.samples < MIN_SAMPLES).eq(pm["mean"].isna()).all()
    hlo = pm[pm.kind == "hlo_op"]
    assert set(hlo.program) <= set(prof.hlo_stats.module)
    assert set(hlo.op) <= set(prof.hlo_stats.hlo_op_name)
