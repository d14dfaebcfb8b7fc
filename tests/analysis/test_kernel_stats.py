"""prof.kernel_stats against xprof's kernel_stats, and kernel_details parsing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.gpu import kernel_stats
from tfprof_nb.analysis.gpu.kernel_stats import parse_kernel_details

from .oracle import gviz_frame, run_tool


def test_kernel_rows_match_xprof(gpu_fixture_file):
    ours = tp.load(gpu_fixture_file).kernel_stats
    ref = gviz_frame(run_tool(gpu_fixture_file, "kernel_stats"))
    assert len(ref) == 15 and len(ours) == len(ref)
    for col in ("kernel_name", "block_dim", "grid_dim", "op_name"):
        assert ours[col].tolist() == ref[col].tolist(), col
    for col in ("registers_per_thread", "shmem_bytes", "occupancy_pct", "occurrences",
                "total_duration_us", "avg_duration_us", "min_duration_us", "max_duration_us"):
        np.testing.assert_allclose(ours[col].astype(float), ref[col].astype(float),
                                   rtol=1e-12, err_msg=col)
    assert ours.is_op_tensor_core_eligible.tolist() == ref.is_op_tensor_core_eligible.tolist()
    # Deliberate difference: the fixture's planes name no vendor, so the reference never
    # flags Tensor Core kernels; they have a CUDA compute capability, so we read them as
    # NVIDIA and flag kernels by name.
    flagged = ours[ours.is_kernel_using_tensor_core]
    assert not ref.is_kernel_using_tensor_core.any()
    assert len(flagged) < len(ours)
    assert all(any(p in k for p in ("h884", "hmma", "s884", "h1688", "xmma", "1688", "16816"))
               for k in flagged.kernel_name)


def test_cpu_profile_has_no_kernels(cpu_file):
    ks = tp.load(cpu_file).kernel_stats
    assert ks.empty and "kernel_name" in ks.columns


@pytest.mark.parametrize("details, expect", [
    ("regs:32 static_shared:1024 dynamic_shared:2048 grid:2,3,4 block:128,2,1 occ_pct:33.3333",
     {"regs": 32, "static_shared": 1024, "dynamic_shared": 2048, "grid": (2, 3, 4),
      "block": (128, 2, 1), "occ_pct": float(np.float32(33.3333))}),
    ("regs:38 shm:96 grid:160,1,1 block:1024,1,1",
     {"regs": 38, "static_shared": 96, "grid": (160, 1, 1), "block": (1024, 1, 1)}),
    ("registers_per_thread:32\nstatic_shared_memory_usage:100\ndynamic_shared_memory_usage:4\n"
     "grid_x:5\ngrid_y:2\ngrid_z:1\nblock_x:64\nblock_y:1\nblock_z:1",
     {"regs": 32, "static_shared": 100, "dynamic_shared": 4, "grid": (5, 2, 1),
      "block": (64, 1, 1)}),
    ("regs:17179869185 shm:7 grid:1,210453397508,0 block:32,1,1",
     {"regs": 0, "static_shared": 0, "grid": (1, 1, 1), "block": (32, 1, 1)}),
    ("garbage", {"regs": 0, "grid": (1, 1, 1), "block": (1, 1, 1)}),
])
def test_parse_kernel_details(details, expect):
    parsed = parse_kernel_details(details)
    for key, value in expect.items():
        assert parsed[key] == value, key


@pytest.mark.parametrize("seed", range(4))
def test_kernel_combinations_equal_a_pandas_groupby(seed):
    """_combinations (one int64 key, groups in order of first appearance) against pandas'
    groupby(sort=False) on the same columns; the key-overflow fallback too."""
    rng = np.random.default_rng(seed)
    n = 5000
    keys = {"name": rng.integers(0, 40, n).astype(np.uint16),
            "plane": rng.integers(0, 3, n).astype(np.int32),
            "details": rng.integers(0, 7, n).astype(np.int32),
            "op": rng.integers(-1, 5, n), "eq": rng.integers(-1, 2, n),
            "xla": rng.integers(-1, 3, n)}
    ns = rng.integers(0, 10**9, n)
    ref = pd.DataFrame({**keys, "ns": ns}).groupby(list(keys), sort=False).agg(
        occurrences=("ns", "size"), total=("ns", "sum"), min=("ns", "min"),
        max=("ns", "max")).reset_index()
    got = kernel_stats._combinations(keys, ns)
    pd.testing.assert_frame_equal(got, ref, check_dtype=False)
    wide = {**keys, "op": np.where(keys["op"] == 4, 2**40, keys["op"]),
            "eq": np.where(keys["eq"] == 1, 2**30, keys["eq"])}
    wide_ref = pd.DataFrame({**wide, "ns": ns}).groupby(list(wide), sort=False).agg(
        occurrences=("ns", "size"), total=("ns", "sum"), min=("ns", "min"),
        max=("ns", "max")).reset_index()
    pd.testing.assert_frame_equal(kernel_stats._combinations(wide, ns), wide_ref,
                                  check_dtype=False)
