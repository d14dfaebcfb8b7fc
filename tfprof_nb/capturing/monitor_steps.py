"""A monitor's step timer: when each training step of the whole run began and ended, inside
the profiled windows and between them, at a cost of a few appends per step.

A step's ``start_s`` is when it began on the host (``Monitor.iterate`` takes the data inside
the step); its end is the later of the host's end of the step and, for a step whose output
was handed to ``track`` (JAX: asynchronous dispatch returns before the device is done), when
that output was ready on the device (a Keras fit needs none: Keras hands its callbacks the
step's logs as Python numbers, so it has waited for the device).  Readiness is taken off the training thread: by default
(``ready="thread"``) a small thread blocks on each tracked output in turn and notes when it
returns (to within a thread switch); ``ready="poll"`` instead asks the output's
``is_ready()`` at the next step boundaries and ``track`` calls (to within a step).
``duration_ms`` runs from the later of the step's start and the previous step's end to its
end, so that the steps of a loop that runs ahead of its device do not overlap and their sum
is the loop's time (a step whose output is not ready yet ends, for now, with the step before
it: steps end in order).  A step
of several training steps (Keras' ``steps_per_execution``) is split evenly over them.

The flags (spikes, their period, compiles, the profiler's own steps) are
``monitor_spikes``'s; the compile clock is ``monitor_compiles``'s.
"""

from __future__ import annotations

import atexit
import bisect
import queue
import threading
import time
import weakref
from array import array
from collections import deque

import numpy as np
import pandas as pd

from .monitor_compiles import CompileClock
from .monitor_spikes import Period, step_flags

__all__ = ["COLUMNS", "READY_MODES", "StepTimer", "steps_frame"]

COLUMNS = ["step", "start_s", "end_s", "duration_ms", "in_window", "window", "compile_ms",
           "flag"]  # (not "flags": DataFrame.flags is pandas')
READY_MODES = ("thread", "poll")
_CHUNK = 4096  # ready times are kept in chunks of this many steps
_IDLE_S = 5.0  # the readiness thread ends after this long without an output to wait for
_EXIT_WAIT_S = 10.0  # at the interpreter's exit, how long a readiness thread may finish
_waiting: weakref.WeakSet = weakref.WeakSet()  # timers whose readiness thread runs


def _stop_waiting() -> None:
    """At the interpreter's exit: end the readiness threads first (a thread left inside
    XLA's wait while the interpreter tears down aborts the process)."""
    for timer in list(_waiting):
        timer._stop_worker(_EXIT_WAIT_S)


atexit.register(_stop_waiting)
SEARCH_EVERY_S = 0.5  # with on_period: the spike period searched at most this often...
SEARCH_STEPS = 20_000  # ...over the last steps (on a thread of its own, lowest priority)


def _ready_leaf(out):
    """The array of ``out`` whose readiness stands for the step's (one jitted call's
    outputs are ready together): ``out`` itself, or its last array leaf; None if none."""
    if hasattr(out, "block_until_ready"):
        return out
    try:
        from jax.tree_util import tree_leaves
    except ImportError:
        return None
    leaves = [x for x in tree_leaves(out) if hasattr(x, "block_until_ready")]
    return leaves[-1] if leaves else None


class StepTimer:
    """The steps' times (see the module's docstring); ``begin``/``end``/``abandon`` are
    called by the training thread's driver, ``track`` by the training loop."""

    def __init__(self, enabled: bool = True, ready: str = "thread"):
        if ready not in READY_MODES:
            raise ValueError(f"ready must be one of {READY_MODES}, got {ready!r}")
        self.enabled, self.ready_mode = bool(enabled), ready
        self._clock = CompileClock()
        self._start, self._end, self._compile = array("d"), array("d"), array("d")
        self._first, self._count, self._window = array("q"), array("q"), array("q")
        self._profiler = array("b")
        self._ready = array("d")  # written by the readiness thread: grown ahead, in chunks
        self._begun: float | None = None
        self._compiled_at = 0.0
        self._polled: deque = deque()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._worker_lock = threading.Lock()
        self._closing = False  # the interpreter exits: the readiness thread ends
        self.on_period = None  # on_period(period or None) after each search of the period
        self._next_search = 0.0
        self._searching = False

    def __len__(self) -> int:
        return len(self._profiler)  # the last array each step appends to

    # ---- the training thread -------------------------------------------------------------
    def begin(self, now: float) -> None:
        """A step began at ``now`` (perf_counter)."""
        if self.enabled:
            self._begun = now
            self._compiled_at = self._clock.now()
            if self._polled:
                self._poll(now)

    def end(self, step: int, count: int, window: int, profiler: bool) -> None:
        """The step that began last ended: training steps ``step`` to ``step + count - 1``,
        in window ``window`` (-1: none), ``profiler``: a session started or stopped in it."""
        if not self.enabled or self._begun is None:
            return
        now = time.perf_counter()
        self._start.append(self._begun)
        self._end.append(now)
        self._compile.append(self._clock.now() - self._compiled_at)
        self._first.append(step)
        self._count.append(count)
        self._window.append(window)
        self._profiler.append(profiler)
        self._begun = None
        if self._polled:
            self._poll(now)
        if self.on_period is not None and now >= self._next_search and not self._searching:
            self._searching, self._next_search = True, now + SEARCH_EVERY_S
            threading.Thread(target=self._search, daemon=True,
                             name="tfprof-monitor-spikes").start()

    def _search(self) -> None:
        """The period of the last ``SEARCH_STEPS`` steps' spikes, told to ``on_period``."""
        from ..analysis.runtime.scheduling.priority import yield_to_critical_path

        yield_to_critical_path()
        try:
            self.on_period(self.frame(tail=SEARCH_STEPS)[1])
        finally:
            self._searching = False

    def abandon(self) -> None:
        """The step that began did not run (no more data): no row."""
        self._begun = None

    def track(self, out) -> None:
        """The step's output: its end is when that output is ready (see the docstring)."""
        if not self.enabled:
            return
        leaf = _ready_leaf(out)
        if leaf is None:
            return
        index = len(self) if self._begun is not None else len(self) - 1
        if index < 0:
            return
        while len(self._ready) <= index:
            self._ready.extend(array("d", [np.nan]) * _CHUNK)
        if self.ready_mode == "poll":
            self._polled.append((index, leaf))
            self._poll(time.perf_counter())
            return
        with self._worker_lock:
            self._queue.put((index, leaf))
            if self._worker is None:
                self._worker = threading.Thread(target=self._wait_ready, daemon=True,
                                                name="tfprof-monitor-steps")
                self._worker.start()
                _waiting.add(self)

    def _poll(self, now: float) -> None:
        """Note ``now`` as the ready time of the polled outputs found ready, in order."""
        polled = self._polled
        while polled:
            index, leaf = polled[0]
            try:
                if not leaf.is_ready():
                    return
                self._ready[index] = now
            except Exception:  # deleted (donated to the next step): its host end stands
                pass
            polled.popleft()

    def _stop_worker(self, timeout: float) -> None:
        """End the readiness thread (its outputs left unwaited for), within ``timeout`` s."""
        with self._worker_lock:
            worker, self._closing = self._worker, True
            if worker is not None:
                self._queue.put(None)  # wakes it if it waits for an output
        if worker is not None:
            worker.join(timeout)

    def _wait_ready(self) -> None:
        """The readiness thread: each tracked output waited for in turn, its time noted."""
        while True:
            try:
                item = self._queue.get(timeout=_IDLE_S)
            except queue.Empty:
                item = ()
            if not item or self._closing:  # idle, or told to end
                with self._worker_lock:
                    if item is None or self._closing or self._queue.empty():
                        self._worker = None
                        _waiting.discard(self)
                        return
                continue
            index, leaf = item
            try:
                leaf.block_until_ready()
                self._ready[index] = time.perf_counter()
            except Exception:  # deleted (donated to the next step): its host end stands
                pass
            leaf = None  # held no longer than needed (not into the interpreter's exit)

    # ---- reading ---------------------------------------------------------------------------
    def row_at(self, t: float) -> int:
        """The first row whose step began at or after ``t`` (perf_counter)."""
        n = len(self)
        return bisect.bisect_left(self._start, t, 0, n)

    def lost_s(self, first: int, last: int, upto: int) -> float | None:
        """The time rows ``first`` to ``last`` (excluded) took beyond the loop's own pace,
        the pace of the rows from ``last`` to ``upto`` (excluded; at least 50 of them),
        less their compiling; None while fewer rows follow.  Times are the steps' starts on
        the host (``monitor_budget``'s measure of a window's cost)."""
        upto = min(upto, len(self))
        if upto - last < 50 or last <= first:
            return None
        after = sum(self._count[last:upto - 1])
        pace = (self._start[upto - 1] - self._start[last]) / after
        took = self._start[last] - self._start[first]
        return took - sum(self._count[first:last]) * pace \
            - float(sum(self._compile[first:last]))

    def columns(self, tail: int | None = None, since: int | None = None) -> dict:
        """The raw columns so far (the last ``tail`` steps, or those from step row ``since``
        on), copied (sliced first: a numpy view of a live array would stop the training
        thread's appends); ``end`` is the later of the host's end and the output's readiness
        known so far.  :func:`steps_frame` makes them the rows."""
        n = len(self)  # every array has at least n values (appended before _profiler)
        lo = since if since is not None else 0 if tail is None else max(0, n - tail)
        lo = min(max(lo, 0), n)
        ready = np.full(n - lo, np.nan)
        got = np.frombuffer(self._ready[lo:n], dtype=float) if len(self._ready) > lo else ()
        ready[:len(got)] = got

        def cut(values, dtype):
            return np.frombuffer(values[lo:n], dtype=dtype).copy() if n > lo \
                else np.zeros(0, dtype)
        return {"start": cut(self._start, float),
                "end": np.fmax(cut(self._end, float), ready),
                "compile": cut(self._compile, float), "first": cut(self._first, np.int64),
                "count": cut(self._count, np.int64), "window": cut(self._window, np.int64),
                "profiler": cut(self._profiler, np.int8).astype(bool)}

    def frame(self, t0: float | None = None, tail: int | None = None
              ) -> tuple[pd.DataFrame, Period | None]:
        """The steps so far (the last ``tail`` of them; columns: ``COLUMNS``; times in s from
        ``t0``, the first step's start by default) and the spike period (None: none)."""
        return steps_frame(self.columns(tail), t0)


def steps_frame(c: dict, t0: float | None = None) -> tuple[pd.DataFrame, Period | None]:
    """The rows of the step timer's raw columns ``c`` (:meth:`StepTimer.columns`) and the
    spike period (see :meth:`StepTimer.frame`)."""
    if not len(c["start"]):
        return _empty(), None
    t0 = c["start"][0] if t0 is None else t0
    end = np.maximum.accumulate(c["end"])  # in order (a step still on the device has
    prev = np.concatenate([[-np.inf], end[:-1]])  # its host end so far)
    begin = np.maximum(c["start"], prev)
    count = np.maximum(c["count"], 1)
    rep = np.repeat(np.arange(len(count)), count)
    k = np.arange(len(rep)) - np.repeat(np.cumsum(count) - count, count)
    each = (end - begin)[rep] / count[rep]
    start = begin[rep] + k * each - t0
    frame = pd.DataFrame({
        "step": c["first"][rep] + k, "start_s": start, "end_s": start + each,
        "duration_ms": each * 1e3, "in_window": c["window"][rep] >= 0,
        "window": c["window"][rep], "compile_ms": np.where(k == 0, c["compile"][rep], 0.0)
        * 1e3})  # (an execution's compiling is its first step's)
    flags, period = step_flags(frame.step.to_numpy(), frame.duration_ms.to_numpy(),
                               frame.compile_ms.to_numpy(), c["profiler"][rep] & (k == 0),
                               frame.in_window.to_numpy())
    frame["flag"] = flags
    return frame, period


def _empty() -> pd.DataFrame:
    return pd.DataFrame({"step": pd.Series(dtype="int64"), "start_s": pd.Series(dtype=float),
                         "end_s": pd.Series(dtype=float), "duration_ms": pd.Series(dtype=float),
                         "in_window": pd.Series(dtype=bool), "window": pd.Series(dtype="int64"),
                         "compile_ms": pd.Series(dtype=float),
                         "flag": pd.Series(dtype=object)})
