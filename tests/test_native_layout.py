"""The C code and Python share their table layouts through one definition: the checked-in
``layout.h`` is what ``tfprof_nb._native.layout`` generates, and the decoder reads columns by
those names."""

from __future__ import annotations

import re

from tfprof_nb._native import layout
from tfprof_nb._native.kernels import N_TYPES
from tfprof_nb.xspace import KIND_NAMES


def test_header_is_generated_from_the_python_layout():
    assert layout.HEADER.read_text() == layout.header_text(), \
        "layout.h is stale: run `python -m tfprof_nb._native.layout`"


def test_c_sources_use_names_not_numbers():
    """The walker takes every table's width and columns from the header: it defines none of
    its own and indexes no row by a bare number."""
    wire = "\n".join((layout.HEADER.parent / name).read_text() for name in ("walk.c", "wire.h"))
    assert not re.findall(r"#define (\w+_COLS)", wire)
    for table, columns in layout.SMALL_TABLES.items():
        assert f"{table}_COLS" in wire
        assert f"{table}_{columns[0].upper()}" in wire
    assert not re.search(r"\b(?:P|L|M|SM|EX|CH|X)\[\d\]", wire)
    assert not re.search(r"_COLS \+ \d\]", wire)


def test_python_sides_agree():
    assert N_TYPES == layout.N_STEP_TYPES
    assert list(KIND_NAMES.values()) == list(layout.KINDS)
    assert layout.COLUMNS["L"].duration_ps == len(layout.SMALL_TABLES["L"]) - 1
