"""Facts about the machine this process runs on (base layer: imports nothing of the package)."""

from __future__ import annotations

import os

__all__ = ["available_memory"]


def available_memory() -> int | None:
    """Bytes of memory available to this process now (None when unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
