"""``tfprof summary``'s text (tfprof_nb/cli/summary.py) on real captures: one measure, one
figure, or the rule of each named."""

from __future__ import annotations

import re

import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.findings.measure_words import measure_text
from tfprof_nb.cli.summary import summarise, summary_text

from ..conftest import DATA


@pytest.fixture(scope="module")
def bert():
    return tp.load(DATA / "gpu_bert_multiworker")


def test_breakdown_that_gives_input_another_figure_is_named_xprofs(bert):
    """BERT: the page's input wait is GPU:6's own (7.9% of the step); the step-time
    breakdown beside it counts no input (XProf's rule). Its block must say whose rule it is,
    so that its missing 'input' line is not a second verdict."""
    text = summary_text(summarise(bert))
    row = bert.measures.loc["input_wait_pct"]
    steps = bert.steps
    breakdown_pct = 100 * steps.input_ms.mean() / steps.duration_ms.mean()
    assert row["rule"] == "tfprof"
    assert measure_text(breakdown_pct, "%") != measure_text(row["value"], "%")
    assert f"Waiting for input {measure_text(row['value'], '%')}" in text
    block = text[text.index("Step-time breakdown"):].split("\n\n")[0]
    header, *lines = block.split("\n")
    assert "XProf's rule" in header, header
    shown = [re.match(r"\s+(\w[\w ]*?)\s{2,}", line).group(1) for line in lines]
    assert ("input" in shown) == (steps.input_ms.mean() > 0), shown
