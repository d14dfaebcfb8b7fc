"""Global event ids: ``event_offsets``, each host's first event's id, hosts in order (the
events table, SQL and the units that link events across hosts count from them)."""

from __future__ import annotations

from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "event_offsets"]


def event_offsets(parts: dict, info: dict) -> dict[str, int]:
    """{host: global event id of its first event}, hosts in order."""
    offsets, total = {}, 0
    for host, i in info.items():
        offsets[host] = total
        total += i["events"]
    return offsets


ANALYSES = (Analysis("event_offsets", combine=event_offsets, needs=("info",)),)
