"""Running work in threads so that Ctrl-C (or Jupyter's stop button) stops it within a second.

The calling thread only waits, in short timed waits that a KeyboardInterrupt can break.  Each
call works under a cancel token of its own (:class:`tfprof_nb._native.CancelToken`), which
its worker threads, the threads the compiled kernels start for them and the helper threads
they hand work to (:func:`in_this_run`) carry.  When an interrupt arrives, that token is
cancelled (every long kernel working under it polls it and returns; its wrapper raises
:class:`~tfprof_nb.errors.Cancelled`), work not started yet is dropped, the workers get up to
``grace`` seconds to stop, and the interrupt is raised again.  Only that call's work stops:
other threads' calls, and kernels called directly, never see the token.  Workers still running
after the grace finish on their own (their kernels stop at once, the token staying cancelled);
the next call from the same thread waits for them first, so no step runs twice at once.
"""

from __future__ import annotations

import _thread
import functools
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager

from ._native import CancelToken, cancel_scope, current_token

__all__ = ["run_in_threads", "redeliver_swallowed_interrupts", "in_this_run", "short_traceback",
           "helper_thread", "helper_threads", "woken_when_a_helper_ends"]

_LOCK = threading.Lock()
_STOPPING = threading.local()  # .futures: this thread's interrupted work, maybe still running
_HELPERS = [0]  # long stretches of work running on a helper thread now (see helper_thread)
_WAKE: list = []  # conditions to notify when a helper's work ends (woken_when_a_helper_ends)


@contextmanager
def helper_thread():
    """Mark a long stretch of work that a task runs on a thread of its own beside the task's
    thread (the task holds two cores meanwhile): workers sharing out tasks by the number of
    cores count it (:func:`helper_threads`) and start no other task while it holds a core;
    when it ends, those waiting for a core are woken (:func:`woken_when_a_helper_ends`)."""
    with _LOCK:
        _HELPERS[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _HELPERS[0] -= 1
            waiting = list(dict.fromkeys(_WAKE))
        for cond in waiting:  # (never under _LOCK: a waiter holds its condition, then _LOCK)
            with cond:
                cond.notify_all()


def helper_threads() -> int:
    """How many helper threads (:func:`helper_thread`) are working now."""
    return _HELPERS[0]


@contextmanager
def woken_when_a_helper_ends(cond: threading.Condition):
    """While inside, ``cond`` is notified each time a helper thread's work ends (a core comes
    free): a waiter on ``cond`` that counts :func:`helper_threads` is told, not left to look
    again.  Enter it before reading the count, so no end between the two goes unseen."""
    with _LOCK:
        _WAKE.append(cond)
    try:
        yield
    finally:
        with _LOCK:
            _WAKE.remove(cond)


def in_this_run(fn):
    """``fn`` to be called on another thread (a helper a worker hands part of its work to)
    under the calling thread's cancel token: stopped with the run it works for."""
    token = current_token()

    @functools.wraps(fn)
    def under_token(*args, **kwargs):
        with cancel_scope(token):
            return fn(*args, **kwargs)
    return under_token


def run_in_threads(fn, items, threads: int, poll=None, tick: float = 0.1,
                   grace: float = 0.8, meanwhile=None) -> list:
    """``[fn(x) for x in items]`` computed on ``threads`` worker threads while this thread
    waits interruptibly, calling ``poll()`` about every ``tick`` seconds (and ``meanwhile()``
    once, first, while the workers start).  An exception raised by ``fn`` is raised here once
    every item is done (the first in item order); one raised by ``meanwhile`` (or an
    interrupt) stops the workers first: this call's work only (its cancel token, a child of
    the calling thread's when there is one)."""
    items = list(items)
    if not items:
        return []
    redeliver_swallowed_interrupts()
    _settle()
    token = CancelToken(parent=current_token())
    pool = ThreadPoolExecutor(max(1, min(int(threads), len(items))))
    futures = [pool.submit(_under, token, fn, x) for x in items]
    # Each future reports its end into a queue the caller waits on: a KeyboardInterrupt from
    # the signal handler can land anywhere in a wait, and concurrent.futures.wait holds every
    # future's lock in Python code on the way (one left locked there deadlocked the next
    # wait and the worker ending that future); a SimpleQueue's get holds none.
    ended = queue.SimpleQueue()
    for f in futures:
        f.add_done_callback(ended.put)
    try:
        if meanwhile is not None:
            meanwhile()
        left, next_poll = len(futures), time.monotonic() + tick
        while left:
            try:
                ended.get(timeout=max(0.0, next_poll - time.monotonic()))
                left -= 1
            except queue.Empty:
                pass
            if poll is not None and (not left or time.monotonic() >= next_poll):
                poll()
            if time.monotonic() >= next_poll:
                next_poll = time.monotonic() + tick
    except BaseException:  # KeyboardInterrupt above all: stop the workers, then re-raise
        _stop(futures, token, grace, ended)
        raise
    finally:  # (threads done with their work are joined: none outlives a call that ends)
        pool.shutdown(wait=all(f.done() for f in futures), cancel_futures=True)
    return [f.result() for f in futures]


def redeliver_swallowed_interrupts() -> None:
    """Never lose a Ctrl-C that lands in a finalizer.  Python runs the SIGINT handler at the
    next bytecode of the main thread, which can be one of a finalizer (a weakref callback,
    ``__del__``: the thread pool's own runs when a run's pool is collected, as the run ends);
    the KeyboardInterrupt raised there is printed as "ignored" and the interrupt is gone.
    This wraps ``sys.unraisablehook`` (once; again if something replaced it) so that such an
    interrupt is delivered again to the main thread a moment later (from another thread: one
    delivered at once would land in the hook itself), past the finalizer; one landing in
    another finalizer again is delivered again."""
    hook = sys.unraisablehook
    if getattr(hook, "redelivers_interrupts", False):
        return

    def redeliver(unraisable, previous=hook):
        if (isinstance(unraisable.exc_type, type)
                and issubclass(unraisable.exc_type, KeyboardInterrupt)
                and threading.current_thread() is threading.main_thread()):
            _redeliver_later()
            return
        previous(unraisable)
    redeliver.redelivers_interrupts = True
    sys.unraisablehook = redeliver


def _interrupt_later(left: threading.Event) -> None:
    """Interrupt the main thread a moment after it has left the hook (``left`` set); never
    when it was not set (that delivery was handed to another thread)."""
    if left.wait(30):
        time.sleep(0.005)
        _thread.interrupt_main()


def _redeliver_later() -> None:
    """Hand one interrupt to a thread that delivers it once this hook has returned.  On a
    loaded machine the main thread can stay in here (starting that thread) past the delay,
    and an earlier redelivery lands here, in the hook, where it would be lost: it is caught
    and handed on again, one thread at a time, so that exactly one delivery stays due."""
    while True:
        left = threading.Event()
        try:
            threading.Thread(target=_interrupt_later, args=(left,), daemon=True,
                             name="tfprof-redeliver-interrupt").start()
            left.set()
            return
        except KeyboardInterrupt:  # (an earlier delivery: its thread is done, so hand it on)
            if left.is_set():  # (this one's thread will deliver it)
                return


def _under(token: CancelToken, fn, x):
    with cancel_scope(token):
        return fn(x)


def _stop(futures: list, token: CancelToken, grace: float, ended: queue.SimpleQueue) -> None:
    """Cancel ``futures``: their token cancelled, waiting ones dropped, running ones given
    ``grace`` seconds, waiting on ``ended`` (where each future reports its end; a second
    interrupt stops the waiting)."""
    token.cancel()
    for f in futures:
        f.cancel()
    running = [f for f in futures if not f.done()]
    deadline = time.monotonic() + grace
    try:
        while any(not f.done() for f in running) and time.monotonic() < deadline:
            try:
                ended.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
    except KeyboardInterrupt:
        pass
    late = [f for f in running if not f.done()]
    if late:
        _STOPPING.futures = getattr(_STOPPING, "futures", []) + late


def _settle() -> None:
    """Wait for this thread's interrupted work still running (a step of the profile it
    worked on may be asked for again now); other threads' work is theirs."""
    stopping = getattr(_STOPPING, "futures", None)
    if stopping:
        wait(stopping)
        _STOPPING.futures = []


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
