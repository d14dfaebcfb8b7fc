"""An analysis as a unit: its name, what it needs, its per-host step and its combine step.

Every analysis module declares its units in a module-level ``ANALYSES`` tuple; it is named after
one of them (the others come with it) and lives in the subpackage of its domain under
``tfprof_nb.analysis``; ``gpu/kernel_stats.py`` and ``gpu/stragglers.py`` declare::

    ANALYSES = (Analysis("kernel_stats", host=host_kernels, combine=combine_kernels),)

    ANALYSES = (Analysis("stragglers", combine=stragglers, needs=("steps", "gpu_utilization")),)

* ``host(hd, shift_ps, **host_needs)`` runs where a host lives (this process, a thread, a Dask
  worker) on its :class:`~.host.HostData` and returns a small, picklable partial result; times
  it returns are shifted by ``shift_ps`` so hosts share one time axis.  ``host_needs`` names
  other analyses whose partial *of the same host* it receives as keyword arguments.
* ``combine(parts, **needs)`` turns ``parts`` (``{host: partial}``, in host order; empty for
  an analysis without a host step) into the result; ``needs`` names other analyses whose
  results it receives as keyword arguments.

The registry (:mod:`.registry`) finds every unit, checks that what they need exists and has no
cycle; :class:`~.results.Results` computes each result once, on first request, in dependency
order, and caches it by name.  Nothing here knows about ``Profile``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Analysis", "parts_list", "parts_dict"]


@dataclass(frozen=True)
class Analysis:
    """One analysis: ``name``, ``combine`` and optionally a per-host ``host`` step."""

    name: str
    combine: Callable[..., Any]
    host: Callable[..., Any] | None = None
    needs: tuple[str, ...] = ()
    host_needs: tuple[str, ...] = ()
    shifted: bool = True  # the host step receives the host's time shift (False: always 0)
    # rough time of the host step relative to others (about seconds on a 1 GB host): threads
    # start the steps on the costliest chain of host needs first
    host_cost: float = 1.0

    def __post_init__(self):
        if self.host is None and self.host_needs:
            raise ValueError(f"analysis {self.name!r}: host_needs without a host step")


def parts_list(parts: dict) -> list:
    """The partials in host order (a combine step for analyses whose result is the list)."""
    return list(parts.values())


def parts_dict(parts: dict) -> dict:
    """The partials by host (a combine step for analyses whose result is the mapping)."""
    return dict(parts)
