"""The GPU kernel stats view's statement on the Tensor-Core column, on real captures, in
Chromium."""

from __future__ import annotations

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.kernel_stats_view import KernelStatsView

from ..conftest import DATA
from .harness import WidgetPage


@pytest.mark.parametrize("name", ["jax_h200_nocmdbuf.xplane.pb",
                                  "gpu_bert_multiworker/34.83.195.179_6003.xplane.pb"])
def test_the_tensor_core_column_says_what_its_rule_cannot_tell(name, tmp_path):
    """H200: cuBLAS's nvjet_* and XLA's gemm_fusion_* kernels of Tensor-Core-eligible ops
    read false by XProf's name rule; the view says how many and that false says only that the
    name does not tell.  BERT (Volta, TensorFlow): no eligible kernel reads false: nothing
    said."""
    prof = tp.load(DATA / name)
    stats = prof.kernel_stats
    unknown = stats[stats.is_op_tensor_core_eligible & ~stats.is_kernel_using_tensor_core]
    view = KernelStatsView(prof)
    if unknown.empty:
        assert view.statements == []
        return
    (text,) = view.statements
    assert f"{len(unknown)} kernels of Tensor-Core-eligible ops read false" in text
    assert unknown.kernel_name.iloc[0] in text and "XProf's rule" in text
    with WidgetPage(view, tmp_path, bundle("kernel_stats")) as page:
        page.page.wait_for_selector(".db-statement")
        shown = page.js("() => [...document.querySelectorAll('.db-statement')]"
                        ".map(p => p.textContent)")
        assert shown == [text]
        assert page.console_errors == []
