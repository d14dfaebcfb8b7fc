"""Every analysis unit of the package, found by name (see :mod:`.unit`).

The registry imports each module of ``tfprof_nb.analysis``'s subpackages once and collects
its ``ANALYSES``; it refuses two units of one name, a need that names no unit and a cycle of
needs.  Dask workers
use the same registry to run a host step by name (:func:`run_host_step`).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from ..._native import release_free_memory
from .unit import Analysis

__all__ = ["analyses", "get", "order", "dependents", "run_host_step", "host_step_waves"]

_UNITS: dict[str, Analysis] = {}
_LOCK = threading.Lock()


def _module_names(package) -> list[str]:
    """The full names of every module of ``package`` and of its subpackages, sorted (each
    subpackage imported to list its modules)."""
    names = []
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        names.append(info.name)
        if info.ispkg:
            names.extend(_module_names(importlib.import_module(info.name)))
    return sorted(names)


def _discover() -> dict[str, Analysis]:
    from ... import analysis as package

    found: dict[str, Analysis] = {}
    for name in _module_names(package):
        module = importlib.import_module(name)
        for unit in getattr(module, "ANALYSES", ()):
            if unit.name in found:
                raise ValueError(f"two analyses named {unit.name!r} "
                                 f"({found[unit.name].combine.__module__}, {module.__name__})")
            found[unit.name] = unit
    for unit in found.values():
        for need in unit.needs + unit.host_needs:
            if need not in found:
                raise ValueError(f"analysis {unit.name!r} needs {need!r}, which no module "
                                 "declares")
        for need in unit.host_needs:
            if found[need].host is None:
                raise ValueError(f"analysis {unit.name!r} has host need {need!r}, which has "
                                 "no host step")
    _check_acyclic(found)
    return found


def _check_acyclic(units: dict[str, Analysis]) -> None:
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise ValueError("analyses need each other in a cycle: "
                             + " -> ".join(path + [name]))
        state[name] = 1
        for need in units[name].needs + units[name].host_needs:
            visit(need, path + [name])
        state[name] = 2

    for name in units:
        visit(name, [])


def analyses() -> dict[str, Analysis]:
    """{name: unit} of every analysis (discovered on first call)."""
    if not _UNITS:
        with _LOCK:
            if not _UNITS:
                _UNITS.update(_discover())
    return _UNITS


def get(name: str) -> Analysis:
    """The unit named ``name`` (ValueError naming the known ones otherwise)."""
    units = analyses()
    try:
        return units[name]
    except KeyError:
        raise ValueError(f"unknown analysis {name!r}; known: {sorted(units)}") from None


def order(names) -> list[str]:
    """``names`` and everything they need, each after what it needs."""
    out: list[str] = []

    def visit(name: str) -> None:
        if name in out:
            return
        unit = get(name)
        for need in unit.needs + unit.host_needs:
            visit(need)
        out.append(name)

    for name in names:
        visit(name)
    return out


def dependents(name: str) -> set[str]:
    """Every analysis whose result depends on ``name`` (directly or not)."""
    units = analyses()
    out: set[str] = set()
    frontier = {name}
    while frontier:
        frontier = {u.name for u in units.values()
                    if set(u.needs + u.host_needs) & frontier} - out
        out |= frontier
    return out


def host_step_waves(names) -> list[list[str]]:
    """The host steps that ``names`` need, in waves: a step's host needs are in earlier
    waves, so each wave runs side by side."""
    steps = [n for n in order(names) if get(n).host is not None]
    level: dict[str, int] = {}
    for n in steps:
        level[n] = 1 + max((level[d] for d in get(n).host_needs), default=-1)
    waves: list[list[str]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for n in steps:
        waves[level[n]].append(n)
    return waves


def run_host_step(hd, name: str, shift_ps: int = 0, **host_needs):
    """Run analysis ``name``'s host step on ``hd`` (times shifted by ``shift_ps``).  The
    per-event arrays it derives are dropped after it, so a host's memory between steps is its
    decoded columns."""
    unit = get(name)
    if unit.host is None:
        raise ValueError(f"analysis {name!r} has no per-host step")
    try:
        return unit.host(hd, shift_ps if unit.shifted else 0, **host_needs)
    finally:
        hd.release(keep_core=True)
        release_free_memory()
