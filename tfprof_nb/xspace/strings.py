"""Turning byte spans of the decoded buffer into Python strings."""

from __future__ import annotations

import numpy as np

__all__ = ["decode_spans"]


def decode_spans(raw: bytes, offs: np.ndarray, lens: np.ndarray) -> list[str]:
    """Decode every span of ``raw`` as UTF-8 (invalid bytes become U+FFFD).  For small tables."""
    return [raw[o:o + n].decode("utf-8", "replace") for o, n in zip(offs.tolist(), lens.tolist())]
