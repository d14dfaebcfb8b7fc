"""The hardware sampler: a thread that, while a capture runs, reads the host's CPU and
memory and each GPU's (or TPU's) utilisation, memory, power, clocks and errors every
``sample_ms`` (:mod:`.hardware_sources`), and writes them beside the profile as
``<host>.hardware.npz`` (:mod:`tfprof_nb.xspace.hardware_file`).

Samples are taken on a fixed schedule (``start + k * period``, so the period does not
drift), stamped with ``time.time_ns()`` (the clock of the profilers' host planes).  The
thread's own CPU time is kept in the file (``sampler_cpu_s``).  What cannot be sampled
(no ``psutil``, no NVIDIA driver or ``nvidia-ml-py``) is said in the file's notes, never an
error.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import numpy as np

from ..xspace.hardware_file import HardwareSamples, hardware_path_for, write_hardware

__all__ = ["DEFAULT_SAMPLE_MS", "HardwareSampler"]

DEFAULT_SAMPLE_MS = 50
_MAX_SAMPLES = 2_000_000  # values kept per capture (a day at 50 ms with 2 series); then stop


class HardwareSampler:
    """``start()`` before the profiler's session, ``stop()`` after; ``write(run_dir)`` puts
    the samples beside each ``.xplane.pb`` there that has none yet."""

    def __init__(self, sample_ms: int = DEFAULT_SAMPLE_MS):
        self.sample_ms = int(sample_ms)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sources: list = []
        self.notes: list[str] = []
        self._times: list[int] = []
        self._rows: list[list[float]] = []
        self._cpu_s = 0.0
        self.started_ns = self.stopped_ns = 0

    def start(self) -> "HardwareSampler":
        from .hardware_sources import available_sources

        self._sources, self.notes = available_sources()
        self.started_ns = time.time_ns()
        if self._sources:
            self._thread = threading.Thread(target=self._run, name="tfprof-hardware-sampler",
                                            daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        period = self.sample_ms / 1e3
        begin = time.monotonic()
        k = 1
        cap = _MAX_SAMPLES // max(1, sum(len(s.series) for s in self._sources))
        while not self._stop.wait(max(0.0, begin + k * period - time.monotonic())):
            now = time.time_ns()
            row: list[float] = []
            for source in self._sources:
                row += source.read()
            self._times.append(now)
            self._rows.append(row)
            k = max(k + 1, int((time.monotonic() - begin) / period) + 1)  # skip missed ticks
            if len(self._times) >= cap:
                self.notes.append(f"the sampler stopped after {cap} samples")
                break
        self._cpu_s = time.thread_time()

    def stop(self) -> None:
        self.stopped_ns = time.time_ns()
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        for source in self._sources:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    def samples(self) -> HardwareSamples:
        """The samples taken, in the file's long layout."""
        series = [s for source in self._sources for s in source.series]
        n, m = len(self._times), len(series)
        values = np.array(self._rows, np.float64).reshape(n, m) if n else np.empty((0, m))
        meta = {"hostname": socket.gethostname(), "period_ms": self.sample_ms,
                "started_ns": self.started_ns, "stopped_ns": self.stopped_ns,
                "sampler_cpu_s": round(self._cpu_s, 6), "notes": self.notes,
                "devices": [d for s in self._sources for d in getattr(s, "devices", [])]}
        return HardwareSamples(
            np.repeat(np.array(self._times, np.int64), m),
            np.tile(np.arange(m, dtype=np.uint16), n), values.reshape(-1),
            *([s[k] for s in series] for k in range(4)), meta=meta)

    def write(self, run_dir) -> list[str]:
        """Write the samples beside each ``.xplane.pb`` in ``run_dir`` that has no sampler
        file yet; return the paths written."""
        written = []
        samples = self.samples()
        for xplane in sorted(Path(run_dir).glob("*.xplane.pb")):
            path = hardware_path_for(str(xplane))
            if not Path(path).exists():
                write_hardware(samples, path)
                written.append(path)
        return written
