"""A part of a host: ``tp.load(..., window=(start_us, end_us), lines=...)``.

A selecting load scans every host first (:func:`scan_hosts`: a walk that keeps no event, the
host's planes, lines and each line's events in the file with their span), finds the time
axis the hosts share from the scans (the same as the whole load's: origins come from the
Task Environment or from the lines holding events in the file, whatever is kept), then turns
the window on that axis and the line patterns into each host's
:class:`~tfprof_nb.xspace.selection.Selection` (:func:`selections`): per line a flag and the
window in offsets from the line's timestamp.

- ``window``: ``(start_us, end_us)`` on the profile's axis, the axis of
  ``prof.events.start_us`` (either end None: open).  An event is kept when it overlaps it,
  ``start_us <= end_us`` and ``start_us + duration_us >= start_us`` of the window, whole.
- ``lines``: a name or glob, or a list of them (``fnmatch``, case-sensitive); a line is kept
  when one matches its name, its display name or ``"<plane>/<line>"``
  (``"/host:CPU/tf_Compute"``, ``"/device:GPU:0/*"``).
"""

from __future__ import annotations

import fnmatch

import numpy as np

from ...._interrupt import run_in_threads
from ....xspace import read_xspace
from ....xspace.selection import Selection

__all__ = ["scan_host", "scan_hosts", "host_shifts", "selections", "spans_text",
           "line_patterns"]

# hosts further apart than this (ps) keep their own axes (as runtime/info.py's ``aligned``)
_MAX_SHIFT_PS = 2**62
_OPEN_PS = 2**62  # an open end of the window, in ps (with a line's start, within int64)


def scan_host(path):
    """One host's XSpaceData without events: a walk of its file that allocates no event row
    (the small tables only; also run on Dask workers)."""
    return read_xspace(path, select=Selection.scan())


def scan_hosts(files: dict, workers: int = 1) -> dict:
    """{host: :func:`scan_host`} of ``files`` ({host: path}), ``workers`` side by side."""
    names = list(files)
    spaces = run_in_threads(lambda n: scan_host(files[n]), names, max(1, workers))
    return dict(zip(names, spaces))


def host_shifts(scans: dict) -> dict[str, int]:
    """{host: ps to add to its times}: the shared axis the whole load's ``shifts`` give."""
    wall = all(s.origin_is_wall_clock() for s in scans.values())
    origins = {h: s.origin_ns() for h, s in scans.items()}
    if not wall or not origins or \
            (max(origins.values()) - min(origins.values())) * 1000 >= _MAX_SHIFT_PS:
        return {h: 0 for h in scans}
    first = min(origins.values())
    return {h: (o - first) * 1000 for h, o in origins.items()}


def line_patterns(lines) -> list[str] | None:
    """``lines=`` as a list of patterns (None: every line)."""
    if lines is None:
        return None
    patterns = [lines] if isinstance(lines, str) else list(lines)
    if not patterns or not all(isinstance(p, str) for p in patterns):
        raise TypeError(f"lines= takes a line name or glob, or a list of them, not {lines!r}")
    return patterns


def _kept_lines(space, patterns: list[str] | None) -> np.ndarray:
    n = len(space.line_names)
    if patterns is None:
        return np.ones(n, bool)
    keep = np.zeros(n, bool)
    for i in range(n):
        plane = space.plane_names[int(space.line_plane[i])]
        names = (space.line_names[i], space.line_display_names[i],
                 f"{plane}/{space.line_names[i]}")
        keep[i] = any(fnmatch.fnmatchcase(s, p) for p in patterns for s in names)
    return keep


def window_ps(window) -> tuple[int, int]:
    """``window=`` (start_us, end_us; None: open) in ps, each end within +-2^62."""
    try:
        lo, hi = window
    except (TypeError, ValueError):
        raise TypeError(f"window= takes (start_us, end_us), not {window!r}") from None

    def ps(us, open_ps):
        return open_ps if us is None else int(max(-_OPEN_PS, min(_OPEN_PS, round(us * 1e6))))

    lo_ps, hi_ps = ps(lo, -_OPEN_PS), ps(hi, _OPEN_PS)
    if lo_ps > hi_ps:
        raise ValueError(f"window= starts after it ends: {window!r}")
    return lo_ps, hi_ps


def _offsets(bound: int, starts: list[int]) -> np.ndarray:
    """``bound`` - each line's start, in int64 (Python ints first: no wrap; past +-2^63 - 1
    the offset no event reaches anyway)."""
    limit = 2**63 - 1
    return np.array([max(-limit, min(limit, bound - t)) for t in starts], np.int64)


def selections(scans: dict, shifts: dict, window, lines, check_for=None) -> dict:
    """{host: Selection} keeping ``lines`` and the events overlapping ``window`` (see the
    module doc); ``check_for(host)`` gives each host's ``Selection.check``.  A ``lines=``
    matching no line of any host raises ValueError naming some of the lines there are."""
    patterns = line_patterns(lines)
    lo, hi = window_ps(window) if window is not None else (-_OPEN_PS, _OPEN_PS)
    out = {}
    for host, space in scans.items():
        keep = _kept_lines(space, patterns)
        starts = [t + shifts.get(host, 0) for t in space.line_start_ps().tolist()]
        shift = shifts.get(host, 0)
        out[host] = Selection(keep.astype(np.uint8), _offsets(lo, starts),
                              _offsets(hi, starts),
                              check=None if check_for is None else check_for(host),
                              window_ps=None if window is None else (lo - shift, hi - shift),
                              lines=patterns)
    if patterns is not None and not any(s.keep.any() for s in out.values()):
        some = sorted({f"{sp.plane_names[int(p)]}/{n}" for sp in scans.values()
                       for n, p in zip(sp.line_names, sp.line_plane)})
        raise ValueError(f"lines={lines!r} matches no line of this profile; its lines "
                         f"include: {', '.join(some[:12])}")
    return out


def spans_text(scans: dict, shifts: dict) -> str:
    """Each host's events' span on the profile's axis, in µs (``window=``'s unit)."""
    parts = []
    for host, space in scans.items():
        span = space.file_span_ps()
        if span is None:
            parts.append(f"{host}: no events")
            continue
        lo, hi = (t + shifts.get(host, 0) for t in span)
        parts.append(f"{host}: {lo / 1e6:,.1f} to {hi / 1e6:,.1f} µs "
                     f"({int(space.line_file_events.sum()):,} events)")
    return "; ".join(parts)
