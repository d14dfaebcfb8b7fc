"""``python -m tfprof_nb``: the ``tfprof`` command (see :mod:`tfprof_nb.cli`)."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
