"""The hardware sampler: a thread that, while a capture runs, reads the host's CPU and
memory and each GPU's (or TPU's) utilisation, memory, power, clocks and errors every
``sample_ms`` (:mod:`.hardware_sources`), and writes them beside the profile as
``<host>.hardware.npz`` (:mod:`tfprof_nb.xspace.hardware_file`).

Samples are taken on a fixed schedule (``start + k * period``, so the period does not
drift), stamped with ``time.time_ns()`` (the clock of the profilers' host planes).  The
thread's own CPU time is kept in the file (``sampler_cpu_s``, since the sampler started at
``sampler_started_ns``: before the file's window for a long-running sampler).  What cannot be sampled
(no ``psutil``, no NVIDIA driver or ``nvidia-ml-py``) is said in the file's notes, never an
error.

A capture takes the process's resident sampler of its period (:func:`capture_sampler`): its
sources found and its thread started once, paused between captures (asleep, reading nothing)
and resumed by the next one, so a ``tp.Monitor`` window starts sampling without a new thread
or a new search for sources on the training thread.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

from collections import deque

import numpy as np

from ..xspace.hardware_file import HardwareSamples, hardware_path_for, write_hardware
from .options import DEFAULT_SAMPLE_MS

__all__ = ["DEFAULT_SAMPLE_MS", "HardwareSampler", "capture_sampler"]

_NAN = float("nan")
_SKIPPED = float("-inf")  # a series a source did not read at a tick: no sample in the file
_MAX_SAMPLES = 2_000_000  # values kept per capture (a day at 50 ms with 2 series); then stop


class HardwareSampler:
    """``start()`` before the profiler's session, ``stop()`` after; ``write(run_dir)`` puts
    the samples beside each ``.xplane.pb`` there that has none yet.

    ``keep_s``: keep only the last ``keep_s`` seconds of samples (a ring buffer, for a
    sampler that runs as long as its process: :func:`~tfprof_nb.start_server`); None keeps
    every sample of the capture (up to a bound, then it stops and says so).  ``sources``:
    what to read (see :mod:`.hardware_sources`); default: every source this machine has."""

    def __init__(self, sample_ms: int = DEFAULT_SAMPLE_MS, keep_s: float | None = None,
                 sources: list | None = None, resident: bool = False):
        self.sample_ms = int(sample_ms)
        self.keep_s = keep_s
        self.resident = resident  # stop() pauses it (its thread and sources kept): resume()
        self._given = sources
        self._stop = threading.Event()
        self._go = threading.Event()  # a round of sampling is asked for
        self._idle = threading.Event()  # the thread's round has ended
        self._in_use = False  # (a resident sampler: held by a capture until release())
        self._thread: threading.Thread | None = None
        self._sources: list = []
        self._widths: list[int] = []
        self.notes: list[str] = []
        ring = None if keep_s is None else max(1, int(keep_s * 1e3 / max(1, self.sample_ms)))
        self._times: deque = deque(maxlen=ring)
        self._rows: deque = deque(maxlen=ring)
        self._lock = threading.Lock()  # between the sampling thread and samples()
        self._cpu_s = 0.0
        self.started_ns = self.stopped_ns = 0

    def start(self) -> "HardwareSampler":
        from .hardware_sources import available_sources

        if self._given is None:
            self._sources, self.notes = available_sources()
        else:
            self._sources, self.notes = list(self._given), []
        self._widths = [len(s.series) for s in self._sources]
        self._notes0 = list(self.notes)
        self.started_ns = time.time_ns()
        if self._sources:
            self._go.set()
            self._thread = threading.Thread(target=self._run, name="tfprof-hardware-sampler",
                                            daemon=True)
            self._thread.start()
        return self

    def resume(self) -> "HardwareSampler":
        """A paused resident sampler samples again, from now, as a new capture's: the samples
        and notes of its last capture dropped; its first read re-bases what a source measures
        over an interval (CPU use since the last read), so no sample spans the pause."""
        with self._lock:
            self._times.clear()
            self._rows.clear()
        self.notes = list(self._notes0)
        self._cpu_s = 0.0
        self.stopped_ns = 0
        self.started_ns = time.time_ns()
        self._stop.clear()
        self._idle.clear()
        if self._thread is not None:
            self._go.set()
        return self

    def _run(self) -> None:
        rounds = 0
        while True:
            self._go.wait()
            self._go.clear()
            cpu0 = time.thread_time()
            if rounds:  # (the first round's sources were read once when they were found)
                self._read()
            self._round(cpu0)
            rounds += 1
            self._idle.set()
            if not self.resident:
                return

    def _round(self, cpu0: float) -> None:
        """Samples until stopped, the thread's CPU time since ``cpu0`` kept."""
        period = self.sample_ms / 1e3
        begin = time.monotonic()
        k = 1
        cap = _MAX_SAMPLES // max(1, sum(self._widths))
        while not self._stop.wait(max(0.0, begin + k * period - time.monotonic())):
            now = time.time_ns()
            row = self._read()
            with self._lock:
                self._times.append(now)
                self._rows.append(row)
            self._cpu_s = time.thread_time() - cpu0
            k = max(k + 1, int((time.monotonic() - begin) / period) + 1)  # skip missed ticks
            if self.keep_s is None and len(self._times) >= cap:
                self.notes.append(f"the sampler stopped after {cap} samples")
                break
        self._cpu_s = time.thread_time() - cpu0

    def _read(self) -> list[float]:
        """One sample of every source; a source that raises reads NaN (said once)."""
        row: list[float] = []
        for source, width in zip(self._sources, self._widths):
            try:
                values = [_SKIPPED if v is None else float(v) for v in source.read()]
                if len(values) != width:
                    raise ValueError(f"{len(values)} values for {width} series")
            except Exception as exc:  # never let a source end the sampling
                note = f"{type(source).__name__} failed: {type(exc).__name__}: {exc}"[:200]
                if note not in self.notes:
                    self.notes.append(note)
                values = [_NAN] * width
            row += values
        return row

    def stop(self) -> None:
        """Stop sampling (a resident sampler: pause, its round ended when this returns)."""
        if self._stop.is_set():
            return
        self.stopped_ns = time.time_ns()
        self._stop.set()
        if self._thread is not None:
            if self.resident:  # (its round ends within a read; a thread that died: none)
                while not self._idle.wait(0.5) and self._thread.is_alive():
                    pass
                return
            self._thread.join()
        self._close_sources()

    def release(self) -> None:
        """The capture is done with it (its samples written): a resident sampler may serve
        the next capture."""
        self._in_use = False

    def _close_sources(self) -> None:
        for source in self._sources:
            close = getattr(source, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    pass

    def samples(self, since_ns: int | None = None,
                until_ns: int | None = None) -> HardwareSamples:
        """The samples taken (those in ``[since_ns, until_ns]`` when given), in the file's
        long layout; ``started_ns``/``stopped_ns`` in its meta are the window's ends."""
        series = [s for source in self._sources for s in source.series]
        with self._lock:
            times = np.array(self._times, np.int64)
            rows = list(self._rows)
        m = len(series)
        values = np.array(rows, np.float64).reshape(len(times), m) if len(times) \
            else np.empty((0, m))
        started = self.started_ns if since_ns is None else max(self.started_ns, since_ns)
        stopped = self.stopped_ns or time.time_ns()
        stopped = stopped if until_ns is None else min(stopped, until_ns)
        keep = (times >= started) & (times <= stopped)
        times, values = times[keep], values[keep]
        n = len(times)
        meta = {"hostname": socket.gethostname(), "period_ms": self.sample_ms,
                "started_ns": started, "stopped_ns": stopped,
                "sampler_cpu_s": round(self._cpu_s, 6), "sampler_started_ns": self.started_ns,
                "notes": list(self.notes),
                "devices": [d for s in self._sources for d in getattr(s, "devices", [])]}
        flat = values.reshape(-1)
        taken = flat != _SKIPPED
        return HardwareSamples(
            np.repeat(times, m)[taken],
            np.tile(np.arange(m, dtype=np.uint16), n)[taken], flat[taken],
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


_resident: dict = {}  # sample_ms -> this process's resident HardwareSampler
_resident_lock = threading.Lock()


def capture_sampler(sample_ms: int) -> HardwareSampler:
    """A started sampler for one capture: this process's resident sampler of ``sample_ms``
    (started the first time, resumed after), or a sampler of its own while another capture
    still holds the resident one.  ``stop()`` then ``release()`` when its samples are
    written."""
    with _resident_lock:
        sampler = _resident.get(sample_ms)
        if sampler is None or sampler._pid != os.getpid():  # (a forked child: no thread)
            sampler = HardwareSampler(sample_ms, resident=True)
            sampler._pid = os.getpid()
            sampler._in_use = True
            _resident[sample_ms] = sampler
            fresh = True
        elif not sampler._in_use:
            sampler._in_use = True
            fresh = False
        else:
            return HardwareSampler(sample_ms).start()
    try:
        return sampler.start() if fresh else sampler.resume()
    except BaseException:
        with _resident_lock:
            _resident.pop(sample_ms, None)
        raise
