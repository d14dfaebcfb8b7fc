"""Where hosts live and how their per-host analysis steps run: the two backends of the
:class:`~.hosts.Hosts` protocol.

A profile's hosts are decoded and analysed independently; only small partial results come
back to be combined.  :class:`LocalHosts` keeps every host's :class:`HostData` in this process
and runs a batch of steps on worker threads (:class:`_LocalBatch`; the compiled kernels
release the GIL), which take the steps from a :class:`_ReadyQueue`; :class:`DaskHosts` decodes
each host on a Dask worker, keeps it there, submits a batch as one graph and gathers only the
partials.

Policy for a host that fails (corrupt file, a bug, a worker that dies): loading skips an
unreadable host and records why (``errors``) unless ``strict``; a failing analysis step raises
:class:`HostAnalysisError` naming the host and the step, after the other hosts' partials are
computed and cached.  Nothing waits forever: Dask calls have a timeout.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..._interrupt import helper_threads, run_in_threads, woken_when_a_helper_ends
from ..._native import cancel_requested
from ..._progress import WorkProgress
from ..._system import available_memory
from ...errors import HostAnalysisError, ProfileFormatError
from ...xspace import XSpaceData
from . import registry
from .decoding import decode_host, worker_threads
from .host import HostData
from .hosts import Hosts

__all__ = ["HostAnalysisError", "LocalHosts", "DaskHosts", "load_host"]


def load_host(name: str, path, threads: int | None = None,
              progress: np.ndarray | None = None) -> HostData:
    """Decode one host's file into a :class:`HostData` (a task on whatever runs it);
    ``threads`` decode it side by side, ``progress`` follows it (see read_xspace)."""
    return HostData(name, decode_host(path, threads, progress))


_PARALLEL_STEPS_MIN_BYTES = 256 * 2**20
_TICK = 0.1  # seconds between the calling thread's progress lines while the workers run
# seconds between a waiting worker's looks at its cancel token, which an interrupt cancels
# without a notice; everything else that lets a step start notifies the queue
_CANCEL_CHECK = 0.1
# Steps off the critical path running at once beside it, whatever the cores: each holds its
# own working memory (up to ~0.9x the file on GPU hosts).  On 16 cores, one per core raised a
# real 269 MB GPU capture's peak from 1.22 to 1.29-1.34 GB for no time: its critical path
# (steps, then gpu_time) takes about as long as the steps beside it do on two.
_FILL_MAX_STEPS = 2


class LocalHosts(Hosts):
    """Every host decoded in this process.  Work runs on worker threads while the calling
    thread waits, so Ctrl-C stops it (see tfprof_nb._interrupt); ``progress`` (None: in a
    notebook only) reports loads and analyses longer than a second."""

    def __init__(self, spaces: dict[str, XSpaceData], errors: dict[str, str] | None = None,
                 progress: bool | None = None):
        """Hosts decoded already (``errors``: {host: why it could not be read}; see
        :func:`.decoding.decode_hosts`)."""
        super().__init__(errors)
        self.data = {name: HostData(name, space) for name, space in spaces.items()}
        self.progress = progress
        self._lock = threading.Lock()

    @property
    def names(self) -> list[str]:
        return list(self.data)

    def space(self, host: str) -> XSpaceData:
        return self.data[host].space

    def _run_pairs(self, todo: list, shifts: Mapping[str, int], meanwhile=None) -> None:
        """Run ``todo`` as one :class:`_LocalBatch` on worker threads."""
        _LocalBatch(self, todo, shifts).run(meanwhile)

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


class _LocalBatch:
    """One batch of (step, host) pairs on worker threads in this process, while the calling
    thread waits.

    Pairs run side by side across hosts, and across the steps of one host when it is large
    enough for that to pay and memory allows (each concurrent step needs its own working
    memory: :meth:`LocalHosts._workers`).  Each worker takes from the batch's
    :class:`_ReadyQueue` the first pair whose host needs are done, those on the costliest
    chains first, so no worker waits while work is ready; with one host's steps side by side,
    a worker running a step off the critical path lowers its priority
    (:func:`yield_to_critical_path`).  Partials are kept as they come, so an interrupted batch
    keeps what it finished.
    """

    def __init__(self, hosts: LocalHosts, todo: list, shifts: Mapping[str, int]):
        self.hosts, self.todo, self.shifts = hosts, todo, shifts
        self.workers, self.yielding = hosts._workers(len(todo))
        self.queue = _ReadyQueue(todo, hosts._partials, hosts._lock,
                                 cores=os.cpu_count() or 1, fill=self.yielding)
        self.running: dict = {}  # the pairs running now (named in the progress line)
        self.shown = WorkProgress(hosts.progress)

    def run(self, meanwhile=None) -> None:
        """Run the batch; ``meanwhile()`` is called on this thread while the workers run,
        again each time a pair finishes.  Then raise for the first pair that failed."""
        on_caller = meanwhile and (lambda: self._on_caller(meanwhile))
        try:
            run_in_threads(self._work, range(self.workers), self.workers, self._show,
                           meanwhile=on_caller)
        except BaseException:
            self.shown.finish("analysis interrupted", ok=False)
            raise
        self.shown.finish(f"analysed {len(self.todo)} step(s)")
        Hosts._raise_first(self.queue.errors(self.todo))

    def _work(self, _) -> None:
        """One worker: the pairs the queue hands out, one after another."""
        try:
            while (pair := self.queue.take()) is not None:
                self._run_pair(pair)
        finally:
            self.queue.stop()  # a worker that failed wakes the others to stop as well

    def _run_pair(self, pair) -> None:
        """Run one (step, host) pair and hand its partial (or its error) to the queue."""
        step, host = pair
        if self.yielding and not self.queue.critical(pair):
            yield_to_critical_path()
        self.running[pair] = True
        try:
            partials = self.hosts._partials
            needs = {n: partials[(n, host)] for n in registry.get(step).host_needs}
            value = registry.run_host_step(self.hosts.data[host], step,
                                           self.shifts.get(host, 0), **needs)
        except MemoryError as exc:  # the batch stops: the queue must know (else it waits on)
            self.queue.finish(pair, error=exc)
            raise
        except Exception as exc:  # reported per host, with the others kept
            self.queue.finish(pair, error=exc)
            return
        finally:
            self.running.pop(pair, None)
        self.queue.finish(pair, value=value)

    def _show(self) -> None:
        """The progress line: the share of pairs done, the steps running and where."""
        running = list(self.running)
        now = sorted({s for s, _ in running})
        hosts = sorted({h for _, h in running})
        where = hosts[0] if len(hosts) == 1 else f"{len(hosts)} hosts"
        self.shown.update(self.queue.finished() / len(self.todo),
                          f"analysing {where}: {', '.join(now)}")

    def _on_caller(self, meanwhile) -> None:
        """The calling thread's share while the workers run: ``meanwhile()`` then the
        progress line, again each time a pair finishes (the queue wakes it; every _TICK
        seconds otherwise, for the progress line), until the batch is over."""
        while not self.queue.over():
            seen = self.queue.finished()
            meanwhile()
            self._show()
            self.queue.wait_past(seen, _TICK)


class DaskHosts(Hosts):
    """Hosts decoded and analysed on the workers of a ``dask.distributed`` client.

    Each host's :class:`HostData` stays on the worker that decoded it; a step runs there and
    only its partial travels.  ``timeout`` (seconds) bounds every wait: the steps (or loads)
    left when none finishes for that long fail with a TimeoutError.
    """

    remote = True

    def __init__(self, files: dict[str, Path], client, strict: bool = False,
                 timeout: float = 600.0):
        super().__init__()
        self.client = client
        self.timeout = timeout
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
        self._partials.update({("info", name): value
                               for name, (value, exc) in results.items() if exc is None})

    def _wait(self, futures: dict, what: str, keep: dict | None = None,
              meanwhile=None) -> dict:
        """{key: (value, exception)}, in ``futures``' order, once every future is done: each
        value kept in ``keep`` as it comes back (then ``meanwhile()`` called); when none is
        done for ``timeout`` seconds, those left are cancelled and time out.  Each future
        reports its end into a queue (a done callback), so a batch of N futures costs N
        wake-ups, not N waits over every pending future."""
        import queue

        out, pending, ended = {}, dict(futures), queue.SimpleQueue()
        for key, fut in futures.items():
            fut.add_done_callback(lambda _fut, key=key: ended.put(key))
        while pending:
            try:
                key = ended.get(timeout=self.timeout)
            except queue.Empty:
                for left in list(pending):
                    pending.pop(left).cancel()
                    out[left] = (None, TimeoutError(
                        f"no {what} result after {self.timeout:.0f} s (worker busy, lost or "
                        "hung)"))
                break
            if key not in pending:
                continue
            out[key] = _outcome(pending.pop(key))
            if keep is not None and out[key][1] is None:
                keep[key] = out[key][0]
            if meanwhile is not None:
                meanwhile()
        return {key: out[key] for key in futures}

    @property
    def names(self) -> list[str]:
        return list(self.futures)

    def space(self, host: str) -> XSpaceData:
        """Bring one host's decoded data over (on demand)."""
        fut = self.client.submit(_space_of, self.futures[host], pure=False)
        return fut.result(timeout=self.timeout)

    def _run_pairs(self, todo: list, shifts: Mapping[str, int], meanwhile=None) -> None:
        """Submit every (step, host) pair at once, a need of the same batch passed as its
        future: the scheduler starts each step where its host lives once its needs are done
        (a need that failed fails it with the need's error).  Partials are kept as they come
        back, ``meanwhile()`` called after each."""
        submitted: dict = {}
        for step, host in todo:
            needs = {n: submitted[(n, host)] if (n, host) in submitted
                     else self._partials[(n, host)] for n in registry.get(step).host_needs}
            submitted[(step, host)] = self.client.submit(
                registry.run_host_step, self.futures[host], step, shifts.get(host, 0),
                pure=False, **needs)
        results = self._wait(submitted, "analysis", keep=self._partials, meanwhile=meanwhile)
        self._raise_first({pair: exc for pair, (_, exc) in results.items()
                           if exc is not None})

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
        """The next pair to run, waiting while none may start; None when there is nothing
        left to run or the batch stopped.

        What lets a pair start notifies the queue's condition: a pair finishing
        (:meth:`finish`), the batch stopping (:meth:`stop`) and a helper thread's work ending
        (a core comes free: ``woken_when_a_helper_ends``, entered before the cores are
        counted).  The wait's timeout is only the look at the cancel token (an interrupt
        cancels it without a notice), never how work is noticed."""
        with self._cond, woken_when_a_helper_ends(self._cond):
            while True:
                if self._stopped or cancel_requested() or not self._pending:
                    return None
                pair = self._next()
                if pair is not None:
                    return pair
                self._cond.wait(_CANCEL_CHECK)

    def _next(self):
        """The first pending pair that may start now, taken and counted as running (None:
        none may); pending pairs whose need failed are failed on the way."""
        busy = self._cores_taken()
        i = 0
        while i < len(self._pending):
            pair = self._pending[i]
            state = self._needs_state(pair)
            if state not in ("ready", "waiting"):  # its need failed: so does it, and the
                self._fail(pair, state)            # pairs before it are looked at again
                busy, i = self._cores_taken(), 0
                continue
            filler = self._filler(pair)
            if state == "waiting" or (self._filling >= self._fill_max if filler else busy):
                i += 1
                continue
            del self._pending[i]
            if filler:
                self._filling += 1
            else:
                self._running += 1
            return pair
        return None

    def _fail(self, pair, need: str) -> None:
        """Fail pending ``pair`` without running it: its host need ``need`` failed."""
        self._pending.remove(pair)
        self._failed[pair] = RuntimeError(f"its host step {need!r} failed")
        self._done.add(pair)
        self._cond.notify_all()

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


def _outcome(fut) -> tuple:
    """(value, None) of a finished future, (None, exception) of one that failed."""
    if fut.status == "finished":
        return fut.result(), None
    try:
        return None, fut.exception(timeout=5)
    except Exception as err:  # cancelled or lost futures raise here
        return None, err


def _space_of(hd: HostData) -> XSpaceData:
    return hd.space


def _release(hd: HostData) -> None:
    hd.release()


def _as_format_error(exc: BaseException, host: str) -> BaseException:
    if isinstance(exc, (ProfileFormatError, OSError)):
        return exc
    return ProfileFormatError(host, str(exc))
