"""The pages a newcomer reads first stay readable: BENCHMARKS.md is one current page (each
measure once, with the command that reproduces it), not a diary; docs/ARCHITECTURE.md reads in
about five minutes (details live in the docstrings of what they describe)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_benchmarks_is_one_current_page():
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert len(text.splitlines()) < 300
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    measured = [s for s in sections if "|" in s and not s.startswith(("At a glance",
                                                                       "Reading"))]
    assert len(measured) >= 8
    for section in measured:  # each area says how to get its figures again
        assert re.search(r"`[^`]*(python\s|benchmarks/\w+\.py)[^`]*`", section), \
            section.splitlines()[0]
    for script in re.findall(r"benchmarks/(\w+\.py)", text):
        assert (ROOT / "benchmarks" / script).is_file(), script


def test_architecture_reads_in_five_minutes():
    words = len((ROOT / "docs" / "ARCHITECTURE.md").read_text().split())
    assert words < 1400, f"{words} words: move details into the docstrings they describe"
