"""Counts in words: ``counted(1, "host")`` is "1 host", ``counted(2, "host")`` "2 hosts"
(a message never says "host(s)")."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``plural``: where adding "s" is wrong);
    ``n`` with thousands separators."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
