"""The layouts the C code and Python share: the walker's tables and their columns, stat value
kinds, stat owners, and the number of step-time event types.

This module is the one source of both sides: ``layout.h`` is generated from it
(``python -m tfprof_nb._native.layout`` rewrites it; a test checks it is current), and Python
reads columns by name (``L[:, COLUMNS["L"].plane]``) instead of by number.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

__all__ = ["TABLES", "SMALL_TABLES", "COLUMNS", "KINDS", "OWNERS", "N_STEP_TYPES", "table",
           "header_text", "HEADER"]

# the walker's record tables, in the order of its counters and capacities
TABLES = ("P", "L", "M", "SM", "CH", "X", "EV", "EX", "ST", "TX")

# the small int64 tables (one row of these columns per record); the others are columns
SMALL_TABLES = {
    "P": ("id", "name_off", "name_len"),  # planes
    "L": ("plane", "id", "display_id", "name_off", "name_len", "dname_off", "dname_len",
          "timestamp_ns", "duration_ps"),  # lines
    "M": ("plane", "key", "id", "name_off", "name_len", "dname_off", "dname_len", "meta_off",
          "meta_len"),  # event metadata
    "SM": ("plane", "key", "id", "name_off", "name_len", "desc_off", "desc_len"),  # stat metadata
    "CH": ("meta_row", "child"),  # event metadata children
    "X": ("field", "off", "len"),  # space strings (field 2 errors, 3 warnings, 4 hostnames)
    "EX": ("row", "what", "value"),  # event extras (what 0: num_occurrences, 1: unresolved id)
}

# XStat value kinds (StatTable.kind) and who owns a stat (StatTable.owner_kind)
KINDS = ("none", "double", "uint64", "int64", "str", "bytes", "ref")
OWNERS = ("event", "event_metadata", "plane")

# step-time event types: analysis.steps numbers its types below this
N_STEP_TYPES = 18

COLUMNS = {t: SimpleNamespace(**{c: i for i, c in enumerate(cols)})
           for t, cols in SMALL_TABLES.items()}


def table(name: str) -> int:
    """The index of the walker's table ``name`` (``T_<name>`` in C)."""
    return TABLES.index(name)


HEADER = Path(__file__).resolve().parent / "layout.h"


def header_text() -> str:
    """The text of ``layout.h``."""
    out = ["/* Generated from tfprof_nb/_native/layout.py by `python -m tfprof_nb._native.layout`:",
           "   edit that file, not this one. */",
           "#ifndef TFPROF_LAYOUT_H", "#define TFPROF_LAYOUT_H", ""]
    out.append("enum { " + ", ".join(f"T_{t}" for t in TABLES) + ", N_TABLES };")
    for t, cols in SMALL_TABLES.items():
        out.append(f"#define {t}_COLS {len(cols)}")
        out.append("enum { " + ", ".join(f"{t}_{c.upper()} = {i}" for i, c in enumerate(cols))
                   + " };")
    out.append("enum { " + ", ".join(f"KIND_{k.upper()}" for k in KINDS) + " };")
    out.append("enum { " + ", ".join(f"OWNER_{o.upper()}" for o in OWNERS) + " };")
    out.append(f"#define N_TYPES {N_STEP_TYPES}")
    out += ["", "#endif", ""]
    return "\n".join(out)


if __name__ == "__main__":
    HEADER.write_text(header_text())
    sys.stdout.write(f"wrote {HEADER}\n")
