"""The codes an event-details block carries (``offline.details``), for both sides of the wire.

This module is the one source: ``js/src/details_codes.generated.ts`` is generated from it by
``python -m tfprof_nb.offline.details_codes`` (a test checks it is current), so the page reads
the codes Python writes.  A row's text code is an index into the block's texts, or one of
:data:`CODES`; the block's stats are under :data:`ARGUMENTS`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["ARGUMENTS", "CODES", "NO_ROW", "OWN_DURATION", "OWN_ID", "OWN_START", "TS_MODULE",
           "ts_text"]

# (name, value, what it says), in the generated module's order
CODES = (
    ("OWN_START", 2**32 - 1, "the text of the event's own start (the page writes the number)"),
    ("OWN_DURATION", 2**32 - 2, "the text of the event's own duration"),
    ("OWN_ID", 2**32 - 3, "the text of the event's own event id"),
    ("NO_ROW", 2**32 - 4, "the event has no such field (no step, no category)"),
)
OWN_START, OWN_DURATION, OWN_ID, NO_ROW = (value for _, value, _ in CODES)
ARGUMENTS = "Arguments"  # the key of an event's stats in its details (Perfetto's title)

TS_MODULE = Path(__file__).resolve().parents[2] / "js" / "src" / "details_codes.generated.ts"


def ts_text() -> str:
    """The text of the generated TypeScript module."""
    out = ["// Generated from tfprof_nb/offline/details_codes.py by",
           "// `python -m tfprof_nb.offline.details_codes`: edit that file, not this one.",
           "// The text codes of an event-details block (tfprof_nb.offline.details)."]
    for name, value, what in CODES:
        out += [f"/** {what[0].upper() + what[1:]}. */", f"export const {name} = 0x{value:x};"]
    out += ["/** The key of an event's stats in its details: (key, text) pairs after its fields. */",
            f"export const ARGUMENTS = {json.dumps(ARGUMENTS)};", ""]
    return "\n".join(out)


if __name__ == "__main__":
    TS_MODULE.write_text(ts_text())
    sys.stdout.write(f"wrote {TS_MODULE}\n")
