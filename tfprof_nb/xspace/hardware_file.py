"""The hardware sampler's file: what the machine did while a host was profiled.

A capture writes one ``<host>.hardware.npz`` beside that host's ``<host>.xplane.pb`` (the run
folder stays the unit that ``tp.load``, object stores and the CLI read).  It is a NumPy
``.npz`` without pickled objects, so its types survive and reading it runs no code:

- ``time_ns`` (int64): when each sample was taken, on the wall clock (``time.time_ns()``), the
  clock the profilers' host planes use;
- ``series`` (uint16): which series each sample belongs to, an index into the ``series_*``
  arrays; ``value`` (float64) its value;
- ``series_counter``, ``series_device``, ``series_unit``, ``series_source`` (str): one entry
  per series: the counter's name (``cpu_util_pct``, ``gpu_util_pct``, ...), the device it
  measures (``host`` or ``GPU:0``), its unit (``%``, ``bytes``, ``W``, ``MHz``, ``C``,
  ``bytes/s``, ``count``, ``mask``) and where it came from (``procfs``: Linux's ``/proc``,
  ``psutil``, ``nvml``, ``libtpu``);
- ``meta``: one JSON string: ``version``, ``hostname``, ``period_ms``, ``started_ns``,
  ``stopped_ns``, ``sampler_cpu_s`` (the sampler thread's own CPU time since it started at
  ``sampler_started_ns``: earlier than ``started_ns`` for a worker's long-running sampler) and
  ``notes`` (what could not be sampled, said once: a library or device missing).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field

import numpy as np

__all__ = ["HARDWARE_SUFFIX", "VERSION", "HardwareSamples", "hardware_path_for",
           "read_hardware", "write_hardware"]

HARDWARE_SUFFIX = ".hardware.npz"
VERSION = 1
_SERIES = ("counter", "device", "unit", "source")


@dataclass
class HardwareSamples:
    """The samples of one host, in the file's layout (see the module docstring)."""

    time_ns: np.ndarray
    series: np.ndarray
    value: np.ndarray
    series_counter: list = field(default_factory=list)
    series_device: list = field(default_factory=list)
    series_unit: list = field(default_factory=list)
    series_source: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.time_ns)


def hardware_path_for(xplane_path: str) -> str:
    """The sampler file's path beside a ``<host>.xplane.pb`` (a local path or a URL)."""
    suffix = ".xplane.pb"
    base = xplane_path[: -len(suffix)] if xplane_path.endswith(suffix) else xplane_path
    return base + HARDWARE_SUFFIX


def write_hardware(samples: HardwareSamples, path_or_file) -> None:
    """Write ``samples`` as an ``.npz`` (a path or a binary file object)."""
    arrays = {"time_ns": np.asarray(samples.time_ns, np.int64),
              "series": np.asarray(samples.series, np.uint16),
              "value": np.asarray(samples.value, np.float64),
              "meta": np.array(json.dumps({"version": VERSION, **samples.meta}))}
    for name in _SERIES:
        arrays[f"series_{name}"] = np.array(getattr(samples, f"series_{name}"), dtype=str)
    np.savez_compressed(path_or_file, **arrays)


def read_hardware(data: bytes, name: str = "the hardware file") -> HardwareSamples:
    """The samples in ``data`` (the file's bytes).  A file that is not one raises
    ValueError naming ``name`` and what is wrong."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        meta = json.loads(str(arrays.pop("meta")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{name} is not a tfprof_nb hardware file: {exc}") from None
    missing = {"time_ns", "series", "value", *(f"series_{s}" for s in _SERIES)} - set(arrays)
    if missing:
        raise ValueError(f"{name} lacks {', '.join(sorted(missing))}")
    n, n_series = len(arrays["time_ns"]), len(arrays["series_counter"])
    if len(arrays["series"]) != n or len(arrays["value"]) != n:
        raise ValueError(f"{name}: its sample columns differ in length")
    if n and int(arrays["series"].max()) >= n_series:
        raise ValueError(f"{name}: a sample names series {int(arrays['series'].max())} "
                         f"of {n_series}")
    return HardwareSamples(
        arrays["time_ns"].astype(np.int64), arrays["series"].astype(np.uint16),
        arrays["value"].astype(np.float64),
        *(arrays[f"series_{s}"].astype(str).tolist() for s in _SERIES), meta=meta)
