"""prof.kernel_stats against xprof's kernel_stats, and kernel_details parsing."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.kernel_stats import parse_kernel_details

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
