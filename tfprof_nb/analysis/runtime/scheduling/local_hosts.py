"""Hosts decoded in this process: :class:`LocalHosts`, a backend of the :class:`~.hosts.Hosts`
protocol, runs a batch of host steps on worker threads (:class:`_LocalBatch`; the compiled
kernels release the GIL), which take the steps from a :class:`~.ready_queue.ReadyQueue`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from ...._interrupt import run_in_threads
from ...._progress import WorkProgress
from ...._system import available_memory
from ...._words import counted
from ....xspace import XSpaceData
from .. import registry
from ..decoding.decode import worker_threads
from ..hostdata.host import HostData
from .hosts import Hosts
from .priority import yield_to_critical_path
from .ready_queue import ReadyQueue

__all__ = ["LocalHosts"]

_PARALLEL_STEPS_MIN_BYTES = 256 * 2**20
_TICK = 0.1  # seconds between the calling thread's progress lines while the workers run


class LocalHosts(Hosts):
    """Every host decoded in this process.  Work runs on worker threads while the calling
    thread waits, so Ctrl-C stops it (see tfprof_nb._interrupt); ``progress`` (None: in a
    notebook only) reports loads and analyses longer than a second."""

    def __init__(self, data: dict, errors: dict[str, str] | None = None,
                 progress: bool | None = None, on_error: str = "raise"):
        """Hosts decoded already: ``data`` {host: HostData} (or {host: XSpaceData}),
        ``errors`` {host: why it could not be read} (see :func:`..decoding.decode.decode_hosts`);
        ``on_error``: see :class:`.hosts.Hosts`."""
        super().__init__(errors, on_error)
        self.data = {name: hd if isinstance(hd, HostData) else HostData(name, hd)
                     for name, hd in data.items()}
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
        thread per core is enough; see ReadyQueue)."""
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
    :class:`ReadyQueue` the first pair whose host needs are done, those on the costliest
    chains first, so no worker waits while work is ready; with one host's steps side by side,
    a worker running a step off the critical path lowers its priority
    (:func:`yield_to_critical_path`).  Partials are kept as they come, so an interrupted batch
    keeps what it finished.
    """

    def __init__(self, hosts: LocalHosts, todo: list, shifts: Mapping[str, int]):
        self.hosts, self.todo, self.shifts = hosts, todo, shifts
        self.workers, self.yielding = hosts._workers(len(todo))
        self.queue = ReadyQueue(todo, hosts._partials, hosts._lock,
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
        self.shown.finish(f"analysed {counted(len(self.todo), 'step')}")
        self.hosts._settle(self.queue.errors(self.todo))

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
            with self.hosts.timings.timed("host", step, host):
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
