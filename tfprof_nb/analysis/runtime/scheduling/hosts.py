"""The protocol of where hosts live: what :class:`~..results.Results` asks of a backend.

:class:`Hosts` is the one interface :class:`~.local_hosts.LocalHosts` (threads in this
process) and :class:`~.dask_hosts.DaskHosts` (Dask workers) implement; ``Results`` calls it
without knowing which one it has.  A backend holds:

* ``names``: the hosts that could be read; ``errors``: {host: why one could not be};
* the partials of the host steps, kept by (step, host) as each one finishes (so a run that
  fails or is interrupted keeps what it finished): ``has_partials(step)``,
  ``partials(step)`` -> {host: partial};
* ``space(host)``: one host's decoded data brought into this process; ``release()``.

One call runs a batch, ``run(steps, shifts, meanwhile)``: the partial of every step of
``steps`` on every host, each step starting once its host needs are done (the needs are in
``steps`` or computed before).  ``shifts`` has one shape, ``{host: ps}``: the profile's time
axis (the ``shifts`` analysis), handed to every step (a unit that is not ``shifted`` gets 0:
``registry.run_host_step``); ``{}`` when no step left to run is shifted.  ``meanwhile()``,
short work on the partials kept so far (``Results.compute`` combines results with it), is
called on the calling thread while the steps run, again as steps finish.

One failure policy per profile, ``on_error`` (``tp.load(..., on_error=...)``), for loading and
analysing alike: a host that cannot be read raises or is left out (``errors``); a step that
fails on a host raises :class:`~tfprof_nb.errors.HostAnalysisError` (host and step named)
once the batch is over, the other partials kept (``"raise"``), or that host is left out of
that step and of every step and result that needs it, its reason kept in ``failed`` and said
by an :class:`~tfprof_nb.errors.AnalysisWarning` (``"skip"``).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping

from ...._words import counted
from ....errors import AnalysisWarning, HostAnalysisError
from ....xspace import XSpaceData
from .. import registry
from ..timings import Timings

__all__ = ["Hosts", "HostAnalysisError", "ON_ERROR"]

ON_ERROR = ("raise", "skip")  # the failure policies


class Hosts(ABC):
    """Where a profile's hosts live and their host steps run (see the module's docstring)."""

    remote = False  # whether the decoded hosts stay elsewhere (events are not brought over)

    def __init__(self, errors: dict[str, str] | None = None, on_error: str = "raise"):
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be one of {ON_ERROR}, not {on_error!r}")
        self.errors = dict(errors or {})
        self.on_error = on_error
        self.failed: dict[tuple[str, str], str] = {}  # (step, host): why ("skip" only)
        self._partials: dict[tuple[str, str], object] = {}
        self.timings = Timings()  # the steps run here and the combines (see ..timings)

    @property
    @abstractmethod
    def names(self) -> list[str]:
        """The hosts that could be read."""

    @abstractmethod
    def space(self, host: str) -> XSpaceData:
        """One host's decoded data, in this process."""

    @abstractmethod
    def release(self) -> None:
        """Drop every host's derived arrays (the partials stay kept)."""

    def run(self, steps: list[str], shifts: Mapping[str, int],
            meanwhile: Callable[[], None] | None = None) -> None:
        """Compute the partials of host ``steps`` (needs before the steps that need them)
        on every host, those not kept already, as one batch (see the module's docstring)."""
        todo = [(s, h) for s in steps for h in self.names
                if (s, h) not in self._partials and (s, h) not in self.failed]
        if todo:  # (nothing to do: ``meanwhile`` may ask for what a batch finished)
            self._run_pairs(todo, shifts, meanwhile)

    @abstractmethod
    def _run_pairs(self, todo: list[tuple[str, str]], shifts: Mapping[str, int],
                   meanwhile: Callable[[], None] | None) -> None:
        """Run the (step, host) pairs ``todo`` (in ``run``'s order), keeping each partial as
        it comes; then settle the pairs that failed (:meth:`_settle`)."""

    def has_partials(self, step: str) -> bool:
        """Whether ``step`` is done on every host: its partial kept, or the host skipped."""
        return all((step, h) in self._partials or (step, h) in self.failed
                   for h in self.names)

    def partials(self, step: str) -> dict:
        """{host: partial} of ``step`` (run by :meth:`run` before), in the order of names;
        the hosts skipped for it left out."""
        return {h: self._partials[(step, h)] for h in self.names if (step, h) in self._partials}

    def _settle(self, failures: Mapping[tuple[str, str], BaseException]) -> None:
        """The policy on the (step, host) pairs of a batch that failed: raise
        HostAnalysisError for the first one, or skip each, its reason kept in ``failed`` (a
        pair that failed because a host need of it did has that need's reason) and one
        AnalysisWarning naming the pairs that failed on their own."""
        if not failures:
            return
        if self.on_error == "raise":
            (step, host), exc = next(iter(failures.items()))
            raise HostAnalysisError(host, step, exc) from exc
        own: list = []

        def why(pair) -> str:
            if pair not in self.failed:
                step, host = pair
                need = next((n for n in registry.get(step).host_needs
                             if (n, host) in failures or (n, host) in self.failed), None)
                if need is None:
                    own.append(pair)
                    self.failed[pair] = f"the {step!r} analysis failed: {failures[pair]}"
                else:
                    self.failed[pair] = why((need, host))
            return self.failed[pair]

        for pair in failures:
            why(pair)
        if own:
            named = ", ".join(f"{host} ({step})" for step, host in own)
            which = "its host is" if len(own) == 1 else "their hosts are"
            warnings.warn(f"{counted(len(own), 'host step')} failed and {which} left out of "
                          f"what needs them: {named} (see prof.skipped(name))",
                          AnalysisWarning, stacklevel=2)
