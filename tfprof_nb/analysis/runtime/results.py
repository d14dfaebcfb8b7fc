"""The results of one profile's analyses, computed on first request and cached by name.

:class:`Results` sits between the facade (``Profile``) and where the hosts live (a
:class:`~.scheduling.hosts.Hosts` backend: threads or Dask workers, :mod:`.scheduling`):
asked for an analysis, it computes what that needs first, runs the host steps on every host (one
``hosts.run`` per batch, whichever the backend) and calls the combine step.
Inputs set from outside (``set_input``: e.g. the device peaks a user gives) replace a
result and drop every result that depends on it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from ..._interrupt import short_traceback
from . import registry
from .timings import Timings

__all__ = ["Results", "HostSpaces"]


class Results:
    """Every analysis result of the hosts in ``hosts`` (a :class:`~.scheduling.hosts.Hosts`)."""

    def __init__(self, hosts, inputs: dict | None = None):
        self.hosts = hosts
        self._values: dict = {}
        self._inputs: dict = dict(inputs or {})
        self._lock = threading.RLock()
        self.timings: Timings = getattr(hosts, "timings", None) or Timings()  # see .timings

    @property
    def host_names(self) -> list[str]:
        """The hosts that could be read, sorted."""
        return sorted(self.hosts.names)

    @short_traceback
    def __getitem__(self, name: str):
        """The result of analysis ``name``.  The host steps it needs, directly or not, run
        first as one batch (side by side, as :meth:`compute` runs them), not one need's at a
        time."""
        if name in self._inputs:
            return self._inputs[name]
        with self._lock:
            if name not in self._values and self._host_steps_left(name):
                self.compute([name])
            if name not in self._values:
                unit = registry.get(name)
                needs = {n: self[n] for n in unit.needs}
                parts = self.partials(name) if unit.host is not None else {}
                with self.timings.timed("combine", name):
                    self._values[name] = unit.combine(parts, **needs)
            return self._values[name]

    def ready(self, name: str) -> bool:
        """Whether result ``name`` is computed (or given) already."""
        return name in self._values or name in self._inputs

    def _host_steps_left(self, name: str) -> bool:
        """Whether a host step ``name`` needs (directly or not) is still to run."""
        return any(registry.get(n).host is not None and not self.hosts.has_partials(n)
                   for n in registry.order([name]))

    @short_traceback
    def partials(self, name: str) -> dict:
        """{host: partial} of analysis ``name``'s host step, in host order."""
        self.run_host_steps([name])
        parts = self.hosts.partials(name)
        return {h: parts[h] for h in self.host_names if h in parts}

    def skipped(self, name: str) -> dict[str, str]:
        """{host: why} of the hosts left out of result ``name`` (``on_error="skip"``): a host
        step it needs, directly or not, failed there.  Empty once computed with none left
        out (and before it is computed)."""
        failed = self.hosts.failed
        out: dict[str, str] = {}
        for step in registry.order([name]):
            for host in self.host_names:
                if (step, host) in failed and host not in out:
                    out[host] = failed[(step, host)]
        return out

    def run_host_steps(self, names, meanwhile=None) -> None:
        """Run the host steps ``names`` need on every host, as one batch (each step starts
        as soon as its host needs are done; ``meanwhile``: see :meth:`.scheduling.hosts.Hosts.run`),
        with the profile's time shifts when a step left to run takes them."""
        steps = [n for wave in registry.host_step_waves(names) for n in wave]
        todo = [n for n in steps if not self.hosts.has_partials(n)]
        shifts = self["shifts"] if any(registry.get(n).shifted for n in todo) else {}
        self.hosts.run(steps, shifts, meanwhile)

    @short_traceback
    def compute(self, names) -> None:
        """Compute the results ``names``: the host steps of all of them together, each
        result combined as soon as the host steps it needs are done (while the others run);
        a combine that fails is run once: its error is raised at the end, in order, as a
        sequential run would raise it (the results that need it are not tried)."""
        names = registry.order(names)
        waiting = [n for n in names if n not in self._values and n not in self._inputs]
        chains = {n: registry.order([n]) for n in waiting}
        host_steps = {n: [s for s in chains[n] if registry.get(s).host is not None]
                      for n in waiting}
        failed: dict = {}

        def combine_ready():
            for name in list(waiting):
                if any(n in waiting for n in chains[name][:-1]):
                    continue  # a need not tried yet (its host steps were not done when its
                    # turn came; they may be now): it goes first, on a later call
                if all(self.hosts.has_partials(s) for s in host_steps[name]):
                    waiting.remove(name)
                    if any(n in failed for n in chains[name]):
                        continue  # (what it needs failed: raised below first)
                    try:
                        self[name]
                    except Exception as exc:  # raised below, in order, never run again
                        failed[name] = exc

        self.run_host_steps(names, meanwhile=combine_ready)
        for name in names:
            if name in failed:
                raise failed[name]
            self[name]

    def set_input(self, name: str, value) -> None:
        """Use ``value`` as the result of ``name`` (None: compute it again) and forget every
        result that depends on it."""
        registry.get(name)
        with self._lock:
            if value is None:
                self._inputs.pop(name, None)
            else:
                self._inputs[name] = value
            for dep in registry.dependents(name) | {name}:
                self._values.pop(dep, None)

    @property
    def inputs(self) -> dict:
        """The inputs set from outside, by name."""
        return dict(self._inputs)

    def cached(self, key: str, build):
        """A value built once by ``build()`` and kept with the results (facade-level tables
        that are not analyses, such as the events table)."""
        with self._lock:
            key = f"local:{key}"
            if key not in self._values:
                self._values[key] = build()
            return self._values[key]


class HostSpaces(Mapping):
    """{host: XSpaceData}, brought over from where each host lives when first asked."""

    def __init__(self, hosts):
        self._hosts = hosts
        self._fetched: dict = {}

    def __getitem__(self, host):
        if host not in self._fetched:
            if host not in self._hosts.names:
                raise KeyError(host)
            self._fetched[host] = self._hosts.space(host)
        return self._fetched[host]

    def __iter__(self):
        return iter(sorted(self._hosts.names))

    def __len__(self):
        return len(self._hosts.names)
