"""Hosts on the workers of a ``dask.distributed`` client: :class:`DaskHosts`, a backend of the
:class:`~.hosts.Hosts` protocol.  Each host is decoded on a worker
(:func:`..decoding.decode.decode_host`, the one decoding path), kept there, a batch of steps
submitted as one graph and only the partials gathered.  Nothing waits forever: every Dask
call has a timeout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ....errors import ProfileFormatError
from ....xspace import XSpaceData
from .. import registry
from ..decoding.decode import decode_host
from ..decoding.selecting import scan_host
from ..hostdata.host import HostData
from .hosts import Hosts

__all__ = ["DaskHosts"]


class DaskHosts(Hosts):
    """Hosts decoded and analysed on the workers of a ``dask.distributed`` client.

    Each host's :class:`HostData` stays on the worker that decoded it; a step runs there and
    only its partial travels.  ``timeout`` (seconds) bounds every wait: the steps (or loads)
    left when none finishes for that long fail with a TimeoutError.
    """

    remote = True

    def __init__(self, files: dict[str, Path], client, on_error: str = "raise",
                 timeout: float = 600.0, selects: dict | None = None):
        """Decode ``files`` ({host: path}) on the workers (``on_error``: see
        :class:`.hosts.Hosts`; a host that cannot be read raises, or is left out;
        ``selects`` {host: Selection}: only a part of each, see :func:`scanned`)."""
        super().__init__(None, on_error)
        self.client = client
        self.timeout = timeout
        # local paths as strings; a URL's RemoteFile as it is: the worker reads the store
        futures = {name: client.submit(decode_host, name, _sent(path),
                                       select=(selects or {}).get(name),
                                       key=f"tfprof-load-{name}-{os.getpid()}-{id(self)}",
                                       pure=False)
                   for name, path in files.items()}
        infos = {name: client.submit(registry.run_host_step, fut, "info", 0, pure=False)
                 for name, fut in futures.items()}
        results = self._wait(infos, "load")
        self.futures = {}
        for name, (value, exc) in results.items():
            if exc is None:
                self.futures[name] = futures[name]
            elif on_error == "raise":
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
        unmet: dict = {}
        for step, host in todo:
            failed = [n for n in registry.get(step).host_needs if (n, host) in self.failed]
            if failed:  # (a need skipped in an earlier batch: skipped as well)
                unmet[(step, host)] = RuntimeError(f"its host step {failed[0]!r} failed")
                continue
            needs = {n: submitted[(n, host)] if (n, host) in submitted
                     else self._partials[(n, host)] for n in registry.get(step).host_needs}
            submitted[(step, host)] = self.client.submit(
                registry.run_host_step, self.futures[host], step, shifts.get(host, 0),
                pure=False, **needs)
        results = self._wait(submitted, "analysis", keep=self._partials, meanwhile=meanwhile)
        failures = {pair: exc for pair, (_, exc) in results.items() if exc is not None}
        self._settle({p: failures.get(p, unmet.get(p)) for p in todo
                      if p in failures or p in unmet})

    def release(self) -> None:
        for fut in self.futures.values():
            self.client.submit(_release, fut, pure=False).result(timeout=self.timeout)


def _sent(path):
    """A host's path as a worker reads it: a local path as a string, a URL's RemoteFile as
    it is (the worker reads the store)."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def scanned(files: dict, client, timeout: float) -> dict:
    """{host: its file scanned on a worker} (:func:`..decoding.selecting.scan_host`: no
    event, only what ``tp.load(window=, lines=)`` needs to place its window)."""
    futures = {name: client.submit(scan_host, _sent(path), pure=False)
               for name, path in files.items()}
    return {name: fut.result(timeout=timeout) for name, fut in futures.items()}


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
