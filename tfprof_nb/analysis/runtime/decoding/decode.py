"""Decoding: a profile's file into one host's :class:`HostData`, the one path every backend
takes (:func:`decode_host`: in this process's threads, or as a task on a Dask worker), and a
local profile's hosts side by side (:func:`decode_hosts`).

This module imports no analysis (nor pandas), so ``tp.load`` starts decoding at once and
imports the analyses meanwhile (``decode_hosts(..., meanwhile=...)``): the decoder's C walk
(:mod:`tfprof_nb.xspace`) runs without the GIL on worker threads while the calling thread
imports.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from ...._interrupt import run_in_threads
from ...._native import release_free_memory
from ...._progress import WorkProgress
from ...._system import available_memory
from ...._words import counted
from ....errors import ProfileFormatError
from ....xspace import read_xspace
from ....xspace.files import file_size
from ..hostdata.host import HostData
from .selecting import host_shifts, scan_hosts, selections, spans_text

__all__ = ["MEMORY_PER_FILE_BYTE", "check_memory", "check_selected", "decode_host",
           "decode_hosts", "memory_needed", "select_hosts", "some_host_read",
           "worker_threads"]

# decoding keeps about 2x a file's size in columns; the analyses need about as much again
MEMORY_PER_FILE_BYTE = 4.0
# A part of a host (window=/lines=) is sized from what it keeps, counted before any column is
# made: its events and stats at the bytes the decoded tables give each (xspace/model.py: an
# event's line, start, duration and two narrow codes; a stat's owner, kinds, name code and
# value), times the peak memory of a load and every analysis per byte of those tables.  That
# ratio (peak RSS over the tables' bytes; 0.5-1.5 M events of tests/data's captures composed):
# TPU 7.7, TF CPU 9.5, TF GPU 5.1, JAX H200 5.1 (3.8 at 10 GB) and 11.2 with every kernel
# launched on its own (its launches feed the critical path's graph, the peak on each): 12
# covers them all, over-estimating the others up to 2.4x (3.2x at 10 GB).  A GPU event
# carries 4-9 stats (CPU 1.4-2.2), so the file's share did not tell GPU hosts apart (4.0 GB
# said for the 6.9 GB a 10 % window of the 10 GB H200 host took; this estimate: 22 GB).
EVENT_ROW_BYTES, STAT_ROW_BYTES = 24, 16
MEMORY_PER_TABLE_BYTE = 12.0


def memory_needed(events: int, stats: int) -> float:
    """Bytes of memory ``events`` events carrying ``stats`` stats need to load and analyse."""
    return MEMORY_PER_TABLE_BYTE * (EVENT_ROW_BYTES * events + STAT_ROW_BYTES * stats)


def check_memory(files: dict) -> None:
    """Refuse (MemoryError) a profile whose decoded size would not fit in free memory, before
    decoding; the message gives each host's time span (a scan of the files, which allocates
    no event) for ``window=``."""
    available = available_memory()
    if available is None:
        return
    sizes = [file_size(f) for f in files.values()]
    need = MEMORY_PER_FILE_BYTE * sum(sizes)
    if need > available:
        scans = scan_hosts(files, worker_threads(len(files)))
        raise MemoryError(
            f"this profile ({counted(len(sizes), 'host file')}, {sum(sizes) / 2**30:.2f} GiB) "
            f"needs about {need / 2**30:.1f} GiB of memory to load and analyse, and "
            f"{available / 2**30:.1f} GiB are free: load it on a Dask cluster with "
            "tp.load(path, client=dask.distributed.Client(...)), load fewer hosts, or open a "
            "part of it: tp.load(path, window=(start_us, end_us)) and/or lines=[names or "
            f"globs]; its events span {spans_text(scans, host_shifts(scans))} on the "
            "profile's axis (prof.events.start_us)")


def check_selected(host: str, kept: int, in_file: int, stats: int) -> None:
    """Refuse (MemoryError) host ``host`` when the ``kept`` of its ``in_file`` events (with
    their ``stats`` stats) a selecting load keeps would not fit in free memory
    (:func:`memory_needed`).  Called once they are counted, before any column is made."""
    available = available_memory()
    need = memory_needed(kept, stats)
    if available is not None and need > available:
        raise MemoryError(
            f"host {host}: the window=/lines= chosen keep {kept:,} of its {in_file:,} events "
            f"({stats:,} stats), which need about {need / 2**30:.1f} GiB of memory to load "
            f"and analyse, and {available / 2**30:.1f} GiB are free: choose a narrower "
            "window= or fewer lines=")


def select_hosts(files: dict, window, lines) -> dict:
    """{host: Selection} of ``files`` for ``tp.load(window=, lines=)``: every host scanned
    (no event allocated), the window placed on the axis the whole load would have; each
    host refused (MemoryError) before allocating when what it keeps does not fit."""
    scans = scan_hosts(files, worker_threads(len(files)))
    return selections(scans, host_shifts(scans), window, lines,
                      check_for=lambda h: functools.partial(check_selected, h))


def worker_threads(n: int) -> int:
    """Threads for ``n`` pieces of work: one per core, no more than the pieces."""
    return max(1, min(n, os.cpu_count() or 1))


def _decoded_fraction(meter: np.ndarray) -> float:
    """How much of one host's decode is done, from its progress array (phase, done, total):
    framing the lines is about a fifth of it."""
    phase, done, total = (int(x) for x in meter)
    if total <= 0:
        return 0.0
    return 0.2 * done / total if phase == 1 else 0.2 + 0.8 * min(done / total, 1.0)


def decode_host(name: str, path, threads: int | None = None,
                progress: np.ndarray | None = None, select=None) -> HostData:
    """Decode host ``name``'s file into its :class:`HostData` (``threads`` side by side,
    ``progress`` following it, ``select`` its part: see read_xspace), then give the file's
    bytes and the decoder's temporaries back."""
    space = read_xspace(path, threads=threads, progress=progress, select=select)
    release_free_memory()
    return HostData(name, space)


def decode_hosts(files: dict[str, Path], on_error: str = "skip", parallel: bool = True,
                 progress: bool | None = None, meanwhile=None, selects: dict | None = None
                 ) -> tuple[dict[str, HostData], dict[str, str]]:
    """Decode every host of ``files`` ({host: path}) on worker threads while this thread waits
    interruptibly (first running ``meanwhile()``, if given): ({host: HostData}, {host: why it
    could not be read}).  A host that cannot be read is skipped (``on_error="skip"``), or
    raises (``"raise"``); ``progress`` (None: in a notebook only) reports a decode longer
    than a second; ``selects`` ({host: Selection}): only a part of each host."""
    names = list(files)
    workers = worker_threads(len(names)) if parallel else 1
    decode_threads = max(1, (os.cpu_count() or 1) // workers) if parallel else 1
    meters = {n: np.zeros(3, np.int64) for n in names}
    done: set = set()

    def decode(name):
        try:
            return decode_host(name, files[name], decode_threads, meters[name],
                               (selects or {}).get(name))
        except (ProfileFormatError, OSError) as exc:
            if on_error == "raise":
                raise
            return exc
        finally:
            done.add(name)

    shown = WorkProgress(progress)

    def poll():
        fractions = [1.0 if n in done else _decoded_fraction(meters[n]) for n in names]
        busy = [n for n in names if n not in done and meters[n][2] > 0]
        what = busy[0] if len(busy) == 1 else f"{len(done)} of {len(names)} hosts"
        shown.update(sum(fractions) / len(names), f"loading {what}: decoding")

    try:
        results = run_in_threads(decode, names, workers, poll, meanwhile=meanwhile)
    except KeyboardInterrupt:
        shown.finish("loading interrupted", ok=False)
        raise
    except BaseException:  # a host's error (on_error="raise"), raised as it is
        shown.finish("loading failed", ok=False)
        raise
    shown.finish(f"loaded {counted(len(names), 'host')}")
    data, errors = {}, {}
    for name, result in zip(names, results):
        if isinstance(result, BaseException):
            errors[name] = str(result)
        else:
            data[name] = result
    return data, errors


def some_host_read(names, errors: dict, source) -> None:
    """Raise ProfileFormatError naming ``source`` when no host could be read."""
    if not names:
        problems = "; ".join(f"{h}: {e}" for h, e in errors.items())
        raise ProfileFormatError(source, f"no host could be read ({problems})")
