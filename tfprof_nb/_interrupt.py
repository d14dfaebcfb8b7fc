"""Running work in threads so that Ctrl-C (or Jupyter's stop button) stops it within a second.

The calling thread only waits, in short timed waits that a KeyboardInterrupt can break.  When
one arrives, the compiled kernels' cancel flag is set (every long kernel polls it and returns;
its wrapper raises :class:`~tfprof_nb.errors.Cancelled`), work not started yet is dropped,
the workers get up to ``grace`` seconds to stop, and the interrupt is raised again.  Workers
still running after that finish on their own and the last of them clears the flag (a call
meanwhile waits for them first), so nothing cancelled leaks into later work.
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager

from ._native import set_cancel

__all__ = ["run_in_threads", "short_traceback", "helper_thread", "helper_threads"]

_STOPPING: list = []  # futures of interrupted work that may still be running
_LOCK = threading.Lock()
_HELPERS = [0]  # long stretches of work running on a helper thread now (see helper_thread)


@contextmanager
def helper_thread():
    """Mark a long stretch of work that a task runs on a thread of its own beside the task's
    thread (the task holds two cores meanwhile): workers sharing out tasks by the number of
    cores count it (:func:`helper_threads`) and start no other task while it holds a core."""
    with _LOCK:
        _HELPERS[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _HELPERS[0] -= 1


def helper_threads() -> int:
    """How many helper threads (:func:`helper_thread`) are working now."""
    return _HELPERS[0]


def run_in_threads(fn, items, threads: int, poll=None, tick: float = 0.1,
                   grace: float = 0.8, meanwhile=None) -> list:
    """``[fn(x) for x in items]`` computed on ``threads`` worker threads while this thread
    waits interruptibly, calling ``poll()`` about every ``tick`` seconds (and ``meanwhile()``
    once, first, while the workers start).  An exception raised by ``fn`` is raised here once
    every item is done (the first in item order); one raised by ``meanwhile`` (or an
    interrupt) stops the workers first."""
    items = list(items)
    if not items:
        return []
    _settle()
    pool = ThreadPoolExecutor(max(1, min(int(threads), len(items))))
    futures = [pool.submit(fn, x) for x in items]
    try:
        if meanwhile is not None:
            meanwhile()
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=tick)
            if poll is not None:
                poll()
    except BaseException:  # KeyboardInterrupt above all: stop the workers, then re-raise
        _stop(futures, grace)
        raise
    finally:  # (threads done with their work are joined: none outlives a call that ends)
        pool.shutdown(wait=all(f.done() for f in futures), cancel_futures=True)
    return [f.result() for f in futures]


def _stop(futures: list, grace: float) -> None:
    """Cancel ``futures``: the flag set, waiting ones dropped, running ones given ``grace``
    seconds (a second interrupt stops the waiting)."""
    set_cancel(True)
    for f in futures:
        f.cancel()
    running = [f for f in futures if not f.done()]
    try:
        wait(running, timeout=grace)
    except KeyboardInterrupt:
        pass
    with _LOCK:
        _STOPPING.extend(f for f in running if not f.done())
        if not _STOPPING:
            set_cancel(False)
    for f in running:  # the last one to finish clears the flag
        f.add_done_callback(_stopped)


def _stopped(future) -> None:
    with _LOCK:
        if future in _STOPPING:
            _STOPPING.remove(future)
            if not _STOPPING:
                set_cancel(False)


def _settle() -> None:
    """Wait for interrupted work still running, then clear the cancel flag."""
    with _LOCK:
        stopping = list(_STOPPING)
    if stopping:
        wait(stopping)
    with _LOCK:
        _STOPPING[:] = [f for f in _STOPPING if not f.done()]
        if not _STOPPING:
            set_cancel(False)


def short_traceback(fn):
    """Decorate a public entry point so that an interrupt leaves it as a fresh
    KeyboardInterrupt whose traceback starts there: a notebook formats every frame of a
    traceback before it answers, which takes about a second for the frames of the waiting
    machinery."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            raise KeyboardInterrupt("interrupted: the work was stopped") from None
    return wrapper
