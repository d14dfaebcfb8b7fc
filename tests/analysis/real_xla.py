"""Real XLA captures (tests/data, see its README) and the comparisons with xprof 2.24.2
that the TPU and GPU tests share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

REAL = Path(__file__).resolve().parents[1] / "data"
TPU = REAL / "tpu_v6e_jax_inference.xplane.pb"
AMD = sorted(p for p in REAL.glob("mi3*.xplane.pb"))
# captured for tfprof_nb (H100, H200); jax_h200_counters/ with CUPTI PM sampling (a _counters_
# line on the GPU plane) and the hardware sampler's file beside it
NVIDIA = sorted(REAL.glob("jax_h[12]00_*.xplane.pb")) + sorted(REAL.glob("jax_h200_counters/*.pb"))
# JAX on CUDA with XLA's command buffers on (its default): kernels run inside CUDA graphs
COMMAND_BUFFERS = {"jax_h200_transformer.xplane.pb", "jax_h200_inputbound.xplane.pb"}
GIB = 2**30


def named(paths) -> list[str]:
    """Test ids of real captures: their paths under tests/data."""
    return [str(p.relative_to(REAL)) for p in paths]


def keyed(frame: pd.DataFrame, pid: str, name: str) -> pd.DataFrame:
    """``frame`` indexed by (program id as text, op name), sorted."""
    return frame.set_index([frame[pid].astype(str), frame[name]]).sort_index()


def assert_hlo_rows_equal(ours: pd.DataFrame, ref: pd.DataFrame) -> tuple:
    """Same rows (program, op), text, occurrences, times and shares as xprof's hlo_stats;
    returns the aligned (ours, theirs) for more checks."""
    a, b = keyed(ours, "program_id", "hlo_op_name"), keyed(ref, "program_id", "hlo_op_name")
    assert a.index.equals(b.index), (a.index.symmetric_difference(b.index).tolist()[:5])
    assert (a.category == b.category).all()
    assert (a.hlo_op_expression == b.hlo_op_expression).all()
    assert (a.framework_op_name == b.tf_op_name).all()
    assert (a.occurrences == b.occurrences).all()
    np.testing.assert_allclose(a.total_time_us, b.total_time, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(a.total_self_time_us, b.total_self_time, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(a.avg_time_us, b.avg_time, rtol=1e-12)
    np.testing.assert_allclose(a.self_time_pct, b.total_self_time_percent, rtol=1e-9)
    np.testing.assert_allclose(a.cumulative_self_time_pct.max(),
                               b.cumulative_total_self_time_percent.max(), rtol=1e-9)
    assert list(ours.hlo_op_name) == list(ref.hlo_op_name)  # the same order
    return a, b


def device_rows(table: pd.DataFrame, side_column: str = "host_or_device") -> pd.DataFrame:
    """The device side of an op stats table, by operation."""
    dev = table[table[side_column] == "Device"]
    return dev.set_index("operation").sort_index()
