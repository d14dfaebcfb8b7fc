"""The GPU kernel stats view's statement on the Tensor-Core column, on real captures, in
Chromium."""

from __future__ import annotations

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.kernel_stats_view import KernelStatsView

from ..analysis.xla_profiles import oracle_frame
from ..conftest import DATA
from .harness import WidgetPage


@pytest.mark.parametrize("name", ["jax_h200_nocmdbuf.xplane.pb",
                                  "gpu_bert_multiworker/34.83.195.179_6003.xplane.pb"])
def test_the_tensor_core_column_says_what_its_rule_cannot_tell(name, tmp_path):
    """H200: cuBLAS's nvjet_* and XLA's gemm_fusion_* kernels of Tensor-Core-eligible ops
    read false by XProf's name rule; the view says how many and that false says only that the
    name does not tell.  BERT (Volta, TensorFlow): no eligible kernel reads false: nothing
    said of it; its kernels name no op, which the tab says (XProf's op name is blank too)."""
    prof = tp.load(DATA / name)
    stats = prof.kernel_stats
    unknown = stats[stats.is_op_tensor_core_eligible & ~stats.is_kernel_using_tensor_core]
    view = KernelStatsView(prof)
    if unknown.empty:
        assert view.statements == ["The op name is blank on every row: the file's kernels carry "
                                   "no tf_op or hlo_op stat naming the op they ran for, and "
                                   "XProf's kernel stats leave it blank too."]
        assert (oracle_frame(DATA / name, "kernel_stats").op_name == "").all()
        return
    (text,) = view.statements
    # (rows, each a kernel here: "(N kernels, ...)" where launch shapes make more rows)
    assert unknown.kernel_name.is_unique
    assert f"the table's {len(unknown)} rows of Tensor-Core-eligible ops read false" in text
    assert unknown.kernel_name.iloc[0] in text and "XProf's rule" in text
    with WidgetPage(view, tmp_path, bundle("kernel_stats")) as page:
        page.page.wait_for_selector(".db-statement")
        shown = page.js("() => [...document.querySelectorAll('.db-statement')]"
                        ".map(p => p.textContent)")
        assert shown == [text]
        assert page.console_errors == []


def test_register_counts_that_are_not_counts_are_said():
    """ROCm: the newer tracer's kernel details carry no register count (the table, as
    XProf's, reads 0), the older one's carry 2,191,500,840 (more than any GPU has): the tab
    says what each is; an NVIDIA capture's real counts (at most 210) need no word."""
    legacy = tp.load(DATA / "mi300x_jax_conv_legacy.xplane.pb")
    regs = legacy.kernel_stats.registers_per_thread
    assert (regs > 512).all()
    said = KernelStatsView.state(legacy).values["statements"]
    assert legacy.kernel_stats.kernel_name.is_unique
    assert f"Registers per thread read up to {int(regs.max()):,} in {len(regs)} of the " \
           f"table's {len(regs)} rows:" in " ".join(said)
    new = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb")
    assert not new.stat("kernel_details").dropna().str.contains("regs:").any()
    n, kernels = len(new.kernel_stats), new.kernel_stats.kernel_name.nunique()
    assert kernels < n  # (a row for each launch shape: the rows are not the kernels)
    assert f"Registers per thread read 0 in {n} of the table's {n} rows ({kernels} kernels, " \
        "a row for each launch shape)" in " ".join(KernelStatsView.state(new).values["statements"])


def test_rocm_copy_kernels_are_said_to_be_copies_elsewhere():
    """MI300X: ROCm runs hipMemcpy as __amd_rocclr_copyBuffer kernels (24 runs), listed in the
    kernel stats as XProf lists them (54 runs in all), while the duty cycle and the
    overview's small-kernel share count them as copies (30 kernel runs): the tab says which
    rows those are and how the two counts relate; an NVIDIA capture needs no word."""
    prof = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb")
    stats, duty = prof.kernel_stats, prof.duty_cycle
    copies = stats[stats.kernel_name.str.startswith("__amd_rocclr_copyBuffer")]
    total, kernels = int(stats.occurrences.sum()), int(duty.kernels.sum())
    assert total - int(copies.occurrences.sum()) == kernels
    assert f"all {kernels} kernel runs" in prof.measures.at["small_kernels_pct", "scope"]
    said = KernelStatsView.state(prof).values["statements"]
    (text,) = [s for s in said if "ROCm's copy kernel" in s]
    assert text.startswith(f"__amd_rocclr_copyBuffer.kd ({int(copies.occurrences.sum())} "
                           "runs): ROCm's copy kernel behind hipMemcpy")
    assert f"their {kernels} kernel runs are the table's {total} without it." in text
    h200 = KernelStatsView.state(tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb"))
    assert not any("ROCm" in s for s in h200.values["statements"])
    h200 = KernelStatsView.state(tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb"))
    assert not any("Registers" in s for s in h200.values["statements"])
    # ROCm's fill kernel (hipMemset) is said to be one, not a copy (it read "copy kernel behind
    # hipMemcpy")
    mi355 = KernelStatsView.state(tp.load(DATA / "mi355x_jax_te_fused_attn.xplane.pb"))
    (fill,) = [s for s in mi355.values["statements"] if "ROCm's" in s]
    assert fill.startswith("__amd_rocclr_fillBufferAligned.kd (20 runs): ROCm's fill kernel "
                           "behind hipMemset")
