"""Where hosts live and how their per-host analysis steps run.

A profile's hosts are decoded and analysed independently; only small partial results come
back to be combined.  :class:`LocalHosts` keeps every host's :class:`HostData` in this process
and runs steps in threads (the compiled kernels release the GIL); :class:`DaskHosts` decodes
each host on a Dask worker, keeps it there and gathers only the partials.

Policy for a host that fails (corrupt file, a bug, a worker that dies): loading skips an
unreadable host and records why (``errors``) unless ``strict``; a failing analysis step raises
:class:`HostAnalysisError` naming the host and the step, after the other hosts' partials are
computed and cached.  Nothing waits forever: Dask calls have a timeout.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np

from ..._interrupt import helper_threads, run_in_threads
from ..._native import cancel_requested
from ..._progress import WorkProgress
from ..._system import available_memory
from ...errors import HostAnalysisError, ProfileFormatError
from ...xspace import XSpaceData
from . import registry
from .decoding import decode_host, worker_threads
from .host import HostData

__all__ = ["HostAnalysisError", "LocalHosts", "DaskHosts", "load_host"]


def load_host(name: str, path, threads: int | None = None,
              progress: np.ndarray | None = None) -> HostData:
    """Decode one host's file into a :class:`HostData` (a task on whatever runs it);
    ``threads`` decode it side by side, ``progress`` follows it (see read_xspace)."""
    return HostData(name, decode_host(path, threads, progress))


_PARALLEL_STEPS_MIN_BYTES = 256 * 2**20
_TICK = 0.1  # seconds between the calling thread's looks at the workers (progress shown)
# Steps off the critical path running at once beside it, whatever the cores: each holds its
# own working memory (up to ~0.9x the file on GPU hosts).  On 16 cores, one per core raised a
# real 269 MB GPU capture's peak from 1.22 to 1.29-1.34 GB for no time: its critical path
# (steps, then gpu_time) takes about as long as the steps beside it do on two.
_FILL_MAX_STEPS = 2


class LocalHosts:
    """Every host decoded in this process.  Work runs on worker threads while the calling
    thread waits, so Ctrl-C stops it (see tfprof_nb._interrupt); ``progress`` (None: in a
    notebook only) reports loads and analyses longer than a second."""

    def __init__(self, spaces: dict[str, XSpaceData], errors: dict[str, str] | None = None,
                 progress: bool | None = None):
        """Hosts decoded already (``errors``: {host: why it could not be read}; see
        :func:`.decoding.decode_hosts`)."""
        self.errors = dict(errors or {})
        self.data = {name: HostData(name, space) for name, space in spaces.items()}
        self.progress = progress
        self._partials: dict[tuple, object] = {}
        self._lock = threading.Lock()

    @property
    def names(self) -> list[str]:
        return list(self.data)

    def space(self, host: str) -> XSpaceData:
        return self.data[host].space

    def partials(self, step: str, shifts: dict[str, int]) -> dict:
        """{host: partial} of analysis ``step`` (computed once per host, in parallel; its
        host needs must have been run)."""
        self.run_steps([step], shifts)
        return {h: self._partials[(step, h)] for h in self.data}

    def has_partials(self, step: str) -> bool:
        """Whether ``step``'s partial of every host is computed."""
        return all((step, h) in self._partials for h in self.data)

    def run_steps(self, steps: list[str], shifts: dict[str, int]) -> None:
        """Compute the partials of ``steps`` (whose host needs are computed already) for
        every host, all with the same ``shifts``; see :meth:`run_graph`."""
        self.run_graph(steps, {s: shifts for s in steps})

    def run_graph(self, steps: list[str], shifts: dict[str, dict], meanwhile=None) -> None:
        """Compute the partials of ``steps`` (``shifts`` {step: {host: ps}}, none for an
        unshifted step) for every host, in parallel threads: across hosts, and across the
        steps of one host when it is large enough for that to pay and memory allows (each
        concurrent step needs its own working memory).  A free worker takes the first step
        whose host needs are done, steps on the longest chains of needs first, so no worker
        waits while work is ready.  Partials are kept as they come, so an interrupted run
        keeps what it finished.  ``meanwhile()`` (short work on the partials done so far,
        such as combining them) is called on the calling thread while the workers run, again
        each time a step finishes."""
        todo = [(s, h) for s in steps for h in self.data if (s, h) not in self._partials]
        if not todo:
            return
        cores = os.cpu_count() or 1
        workers, yielding = self._workers(len(todo))
        queue = _ReadyQueue(todo, self._partials, self._lock, cores=cores, fill=yielding)
        running: dict = {}

        def run(pair):
            step, host = pair
            if yielding and not queue.critical(pair):
                yield_to_critical_path()
            running[pair] = True
            try:
                needs = {n: self._partials[(n, host)] for n in registry.get(step).host_needs}
                value = registry.run_host_step(self.data[host], step,
                                               shifts.get(step, {}).get(host, 0), **needs)
            except MemoryError:
                raise
            except Exception as exc:  # reported per host, with the others kept
                queue.finish(pair, error=exc)
                return
            finally:
                running.pop(pair, None)
            queue.finish(pair, value=value)

        def worker(_):
            try:
                while (pair := queue.take()) is not None:
                    run(pair)
            finally:
                queue.stop()  # a worker that failed wakes the others to stop as well

        shown = WorkProgress(self.progress)

        def poll():
            now = sorted({s for s, _ in list(running)})
            hosts = sorted({h for _, h in list(running)})
            where = hosts[0] if len(hosts) == 1 else f"{len(hosts)} hosts"
            shown.update(queue.finished() / len(todo), f"analysing {where}: {', '.join(now)}")

        try:
            run_in_threads(worker, range(workers), workers, poll,
                           meanwhile=meanwhile and (lambda: _on_caller(queue, meanwhile, poll)))
        except BaseException:
            shown.finish("analysis interrupted", ok=False)
            raise
        shown.finish(f"analysed {len(todo)} step(s)")
        _keep_or_raise(self._partials, {p: (None, e) for p, e in queue.errors(todo).items()})

    def _workers(self, pairs: int) -> tuple[int, bool]:
        """(worker threads, whether steps off the critical path yield) for ``pairs`` pairs:
        one host's steps side by side run those off its critical path at a lower priority,
        beside the critical path's (one step at a time: with at most cores - 1 beside it, a
        thread per core is enough; see _ReadyQueue)."""
        parallel = len(self.data) > 1 or (pairs > 1 and self._steps_in_parallel())
        workers = worker_threads(pairs) if parallel else 1
        return workers, workers > 1 and len(self.data) == 1

    def _steps_in_parallel(self) -> bool:
        """One host's steps run side by side when it is big (>= 256 MB decoded from file)
        and free memory is more than 8 times its file."""
        (hd,) = self.data.values()
        size = hd.space.n_bytes
        free = available_memory()
        return size >= _PARALLEL_STEPS_MIN_BYTES and free is not None and free > 8 * size

    def release(self) -> None:
        """Drop every host's derived arrays (partials stay cached)."""
        for hd in self.data.values():
            hd.release()


class DaskHosts:
    """Hosts decoded and analysed on the workers of a ``dask.distributed`` client.

    Each host's :class:`HostData` stays on the worker that decoded it; a step runs there and
    only its partial travels.  ``timeout`` (seconds) bounds every wait.
    """

    def __init__(self, files: dict[str, Path], client, strict: bool = False,
                 timeout: float = 600.0):
        self.client = client
        self.timeout = timeout
        self.errors: dict[str, str] = {}
        # local paths as strings; a URL's RemoteFile as it is: the worker reads the store
        futures = {name: client.submit(load_host, name, os.fspath(path) if isinstance(
                       path, os.PathLike) else path, key=f"tfprof-load-{name}-"
                       f"{os.getpid()}-{id(self)}", pure=False)
                   for name, path in files.items()}
        infos = {name: client.submit(registry.run_host_step, fut, "info", 0, pure=False)
                 for name, fut in futures.items()}
        results = self._wait(infos, "load")
        self.futures = {}
        for name, (value, exc) in results.items():
            if exc is None:
                self.futures[name] = futures[name]
            elif strict:
                raise _as_format_error(exc, name) from exc
            else:
                self.errors[name] = str(exc)
        self._partials: dict[tuple, object] = {
            ("info", name): value for name, (value, exc) in results.items() if exc is None}

    def _wait(self, futures: dict, what: str) -> dict:
        """{key: (value, exception)} once every future is done or the timeout passes."""
        from distributed import wait

        done, not_done = wait(list(futures.values()), timeout=self.timeout,
                              return_when="ALL_COMPLETED") if futures else ([], [])
        out = {}
        for key, fut in futures.items():
            if fut in not_done:
                fut.cancel()
                out[key] = (None, TimeoutError(
                    f"no {what} result after {self.timeout:.0f} s (worker busy, lost or "
                    "hung)"))
            elif fut.status == "finished":
                out[key] = (fut.result(), None)
            else:
                try:
                    exc = fut.exception(timeout=5)
                except Exception as err:  # cancelled or lost futures raise here
                    exc = err
                out[key] = (None, exc)
        return out

    @property
    def names(self) -> list[str]:
        return list(self.futures)

    def space(self, host: str) -> XSpaceData:
        """Bring one host's decoded data over (on demand)."""
        fut = self.client.submit(_space_of, self.futures[host], pure=False)
        return fut.result(timeout=self.timeout)

    def partials(self, step: str, shifts: dict[str, int]) -> dict:
        self.run_steps([step], shifts)
        return {h: self._partials[(step, h)] for h in self.futures}

    def run_steps(self, steps: list[str], shifts: dict[str, int]) -> None:
        """Submit every (step, host) pair at once; the scheduler runs them where the hosts
        live."""
        todo = {(s, h): self.client.submit(
                    registry.run_host_step, fut, s, shifts.get(h, 0), pure=False,
                    **{n: self._partials[(n, h)] for n in registry.get(s).host_needs})
                for s in steps for h, fut in self.futures.items()
                if (s, h) not in self._partials}
        _keep_or_raise(self._partials, self._wait(todo, "analysis"))

    def release(self) -> None:
        for fut in self.futures.values():
            self.client.submit(_release, fut, pure=False).result(timeout=self.timeout)


class _ReadyQueue:
    """The (step, host) pairs of one batch for workers to take once their host needs are
    done: the pair heading the costliest chain of host steps first (Analysis.host_cost),
    then in the given order.  A pair whose need failed fails without running; nothing is
    handed out once the batch stops (an interrupt cancels the run's cancel token, or a worker
    failed).  With ``cores`` given, no pair starts while the running ones and their helper
    threads take every core (a step on the critical path that splits its work is not slowed
    by one that could wait).  With ``fill`` (one host, its steps off the critical path run at
    a lower priority) the pairs off the critical path are counted apart: they start whatever
    the critical path takes, at most ``cores`` - 1 of them at once and never more than
    _FILL_MAX_STEPS (each holds its own working memory), and never hold it up."""

    def __init__(self, todo: list, partials: dict, lock: threading.Lock,
                 cores: int | None = None, fill: bool = False):
        self._cores = cores
        self._running = 0
        self._fill, self._filling = fill, 0
        self._fill_max = max(1, min((cores or 1) - 1, _FILL_MAX_STEPS))
        steps = {s for s, _ in todo}
        level = {s: _chain_cost(s, steps) for s in steps}
        self._pending = sorted(todo, key=lambda p: -level[p[0]])  # stable
        self._critical = _critical_chain(self._pending, level)
        self._batch = set(todo)
        self._partials, self._lock = partials, lock
        self._failed: dict = {}
        self._done: set = set()
        self._stopped = False
        self._cond = threading.Condition()

    def take(self):
        """The next pair to run, waiting while all pending ones wait on running ones; None
        when there is nothing left to run or the batch stopped."""
        with self._cond:
            while True:
                if self._stopped or cancel_requested() or not self._pending:
                    return None
                busy = self._cores_taken()
                for i, pair in enumerate(self._pending):
                    state = self._needs_state(pair)
                    filler = self._filler(pair)
                    if state == "ready" and (self._filling >= self._fill_max if filler else busy):
                        continue
                    if state != "waiting":
                        del self._pending[i]
                        if state == "ready":
                            if filler:
                                self._filling += 1
                            else:
                                self._running += 1
                            return pair
                        self._failed[pair] = RuntimeError(f"its host step {state!r} failed")
                        self._done.add(pair)
                        self._cond.notify_all()
                        break
                else:  # (helpers end without a notice: looked at again soon)
                    self._cond.wait(0.01 if busy else 0.1)

    def critical(self, pair) -> bool:
        """Whether ``pair`` is on the batch's critical path: the chain of host steps from the
        pair that heads the costliest one, each followed by its costliest dependent."""
        return pair in self._critical

    def _filler(self, pair) -> bool:
        """Whether ``pair`` is counted apart, as a step off the critical path (``fill``)."""
        return self._fill and pair not in self._critical

    def _cores_taken(self) -> bool:
        """Whether the running pairs and their helper threads take every core."""
        return self._cores is not None and self._running > 0 and \
            self._running + helper_threads() >= self._cores

    def _needs_state(self, pair) -> str:
        """"ready", "waiting", or the name of a need that failed."""
        step, host = pair
        for need in registry.get(step).host_needs:
            key = (need, host)
            if key in self._batch and key not in self._done:
                return "waiting"
            if key not in self._partials:
                return need
        return "ready"

    def finish(self, pair, value=None, error: BaseException | None = None) -> None:
        with self._cond:
            if self._filler(pair):
                self._filling -= 1
            else:
                self._running -= 1
            if error is None:
                with self._lock:
                    self._partials[pair] = value
            else:
                self._failed[pair] = error
            self._done.add(pair)
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopped = self._stopped or bool(self._pending)
            self._cond.notify_all()

    def finished(self) -> int:
        return len(self._done)

    def over(self) -> bool:
        """Whether every pair of the batch is done, or the batch stopped."""
        with self._cond:
            return self._stopped or len(self._done) == len(self._batch)

    def wait_past(self, seen: int, timeout: float) -> None:
        """Wait until more than ``seen`` pairs are done or the batch is over (at most
        ``timeout`` seconds)."""
        with self._cond:
            if not self._stopped and len(self._done) == seen < len(self._batch):
                self._cond.wait(timeout)

    def errors(self, todo: list) -> dict:
        """{pair: exception} of the pairs that failed, in ``todo``'s order."""
        return {p: self._failed[p] for p in todo if p in self._failed}


def _on_caller(queue: _ReadyQueue, meanwhile, poll) -> None:
    """The calling thread's share while the workers run: ``meanwhile()`` then ``poll()``,
    again each time a pair finishes (or every _TICK seconds), until the batch is over."""
    while not queue.over():
        seen = queue.finished()
        meanwhile()
        poll()
        queue.wait_past(seen, _TICK)


def _critical_chain(pending: list, level: dict) -> set:
    """The pairs of the costliest chain (``pending`` sorted by ``level``, their chain cost):
    its head, then at each step the dependent (on the same host) heading the costliest rest."""
    chain: set = set()
    pair = pending[0] if pending else None
    while pair is not None:
        chain.add(pair)
        step, host = pair
        after = [p for p in pending if p[1] == host and step in registry.get(p[0]).host_needs]
        pair = max(after, key=lambda p: level[p[0]], default=None)
    return chain


def yield_to_critical_path() -> None:
    """Lower this worker thread's priority for the rest of its life (Linux: a thread's nice
    value; threads it starts inherit it): a step off one host's critical path then takes a
    core only when the critical path's threads leave it free, instead of slowing them down
    by sharing it.  The workers of a batch end with it, so nothing stays lowered.  Elsewhere
    (where the call would lower the whole process), or when refused, nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < _YIELDING_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, _YIELDING_NICE)
    except OSError:
        pass


_YIELDING_NICE = 19  # CFS weight 15 against nice 0's 1024


def _chain_cost(step: str, steps: set) -> float:
    """The host cost of ``step`` and of the costliest chain of ``steps`` waiting on it."""
    after = [s for s in steps if step in registry.get(s).host_needs]
    return registry.get(step).host_cost + max((_chain_cost(s, steps) for s in after),
                                              default=0.0)


def _keep_or_raise(partials: dict, results: dict) -> None:
    """Keep each (step, host) pair's partial; then raise HostAnalysisError for the first pair
    that failed (the others stay kept)."""
    failures = {}
    for pair, (value, exc) in results.items():
        if exc is None:
            partials[pair] = value
        else:
            failures[pair] = exc
    if failures:
        (step, host), exc = next(iter(failures.items()))
        raise HostAnalysisError(host, step, exc) from exc


def _space_of(hd: HostData) -> XSpaceData:
    return hd.space


def _release(hd: HostData) -> None:
    hd.release()


def _as_format_error(exc: BaseException, host: str) -> BaseException:
    if isinstance(exc, (ProfileFormatError, OSError)):
        return exc
    return ProfileFormatError(host, str(exc))
