"""A finding's evidence in words: its own numbers first, XProf's figures of the same time
after them as XProf's rule's (another rule's number, never a second verdict)."""

from __future__ import annotations

from pathlib import Path

import tfprof_nb as tp
from tfprof_nb.analysis.findings.evidence import evidence_words

DATA = Path(__file__).resolve().parents[2] / "data"


def test_xprofs_figures_come_last_as_its_rules():
    said = evidence_words({"xprof_kernel_launch_pct": 0.0, "small_kernels_pct": 23.26,
                           "launch_gap_pct": 13.7}, skip=("launch_gap_pct",))
    assert said == ("share of the whole profile's kernel runs (all devices) lasting under "
                    "10 us 23.3%; XProf's rule gives 'Kernel Launch' 0.0% (its step "
                    "breakdown, over the step time it counts)")
    assert evidence_words({"xprof_all_other_pct": float("nan")}) == ""  # (never "nan")


def test_bert_launch_finding_says_xprofs_zero_as_xprofs():
    """BERT: the devices idle 13.7% in short launch gaps; XProf's step breakdown counts no
    'Kernel Launch' time: the finding says it as XProf's rule's figure, after its own."""
    prof = tp.load(DATA / "gpu_bert_multiworker")
    (launch,) = [f for f in prof.recommendations() if f.measure == "launch_gap_pct"]
    words = str(launch)
    ours = words.index("lasting under 10 us")
    theirs = words.index("; XProf's rule gives 'Kernel Launch' 0.0%")
    assert ours < theirs
