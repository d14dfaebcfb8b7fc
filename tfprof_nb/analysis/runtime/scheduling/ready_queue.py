"""The ready queue of one local batch: which (step, host) pair a worker thread takes next.

:class:`ReadyQueue` hands out the pairs whose host needs are done, those heading the
costliest chain of host steps first (:func:`chain_cost`, ``Analysis.host_cost``), keeps
partials and failures as they come, and is woken by whatever lets a pair start (never
polling): see :class:`ReadyQueue`.
"""

from __future__ import annotations

import threading

from ...._interrupt import helper_threads, woken_when_a_helper_ends
from ...._native import cancel_requested
from .. import registry

__all__ = ["ReadyQueue", "FILL_MAX_STEPS", "chain_cost"]

# seconds between a waiting worker's looks at its cancel token, which an interrupt cancels
# without a notice; everything else that lets a step start notifies the queue
_CANCEL_CHECK = 0.1
# Steps off the critical path running at once beside it, whatever the cores: each holds its
# own working memory (up to ~0.9x the file on GPU hosts).  On 16 cores, one per core raised a
# real 269 MB GPU capture's peak from 1.22 to 1.29-1.34 GB for no time: its critical path
# (steps, then gpu_time) takes about as long as the steps beside it do on two.
FILL_MAX_STEPS = 2


class ReadyQueue:
    """The (step, host) pairs of one batch for workers to take once their host needs are
    done: the pair heading the costliest chain of host steps first (Analysis.host_cost),
    then in the given order.  A pair whose need failed fails without running; nothing is
    handed out once the batch stops (an interrupt cancels the run's cancel token, or a worker
    failed).  With ``cores`` given, no pair starts while the running ones and their helper
    threads take every core (a step on the critical path that splits its work is not slowed
    by one that could wait).  With ``fill`` (one host, its steps off the critical path run at
    a lower priority) the pairs off the critical path are counted apart: they start whatever
    the critical path takes, at most ``cores`` - 1 of them at once (every core once the
    critical path's pairs are done) and never more than FILL_MAX_STEPS (each holds its own
    working memory), and never hold it up."""

    def __init__(self, todo: list, partials: dict, lock: threading.Lock,
                 cores: int | None = None, fill: bool = False):
        self._cores = cores
        self._running = 0
        self._fill, self._filling = fill, 0
        self._fill_max = max(1, min((cores or 1) - 1, FILL_MAX_STEPS))
        steps = {s for s, _ in todo}
        level = {s: chain_cost(s, steps) for s in steps}
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
            if state == "waiting" or (self._filling >= self._fills() if filler else busy):
                i += 1
                continue
            del self._pending[i]
            if filler:
                self._filling += 1
            else:
                self._running += 1
            return pair
        return None

    def _fills(self) -> int:
        """How many pairs off the critical path may run at once: ``cores`` - 1 beside it,
        every core (FILL_MAX_STEPS at most) once its pairs are all done (on a 1 GB host's
        overview, the small steps after tf_data ran one at a time on one core while the
        other idled for a second)."""
        if self._critical <= self._done:
            return max(self._fill_max, min(self._cores or 1, FILL_MAX_STEPS))
        return self._fill_max

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


def chain_cost(step: str, steps: set) -> float:
    """The host cost of ``step`` and of the costliest chain of ``steps`` waiting on it."""
    after = [s for s in steps if step in registry.get(s).host_needs]
    return registry.get(step).host_cost + max((chain_cost(s, steps) for s in after),
                                              default=0.0)
