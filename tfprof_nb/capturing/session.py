"""One local profiler session: start, stop-and-save, and where the files went.

The session drives TensorFlow's or JAX's profiler (see :mod:`.backends`; ``"auto"`` is
decided when the session starts, after the warm-up).  Each allows one session per process.  A
session started here is remembered so a later capture can tell "another tool's session is
running" (left alone, CaptureError) from "our own session was abandoned" (e.g. a Keras fit that
raised outside a tfprof_nb context; it is stopped and saved with a warning).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path

from ..errors import CaptureError, CaptureWarning
from .backends import check_backend, choose_backend, get_backend, require
from .native_log import quiet_profiler_log
from .options import TracerOptions

__all__ = ["LocalSession", "new_logdir", "publish_run", "run_dirs", "split_logdir",
           "wait_for_a_free_run_name"]

_active: "LocalSession | None" = None
_saving = threading.Condition()  # counts the sessions handed to another thread to stop
_saves = [0]
_WHO = {"jax": "JAX's profiler", "tensorflow": "TensorFlow's profiler"}


def new_logdir() -> str:
    """A fresh temporary logdir."""
    return tempfile.mkdtemp(prefix="tfprof_")


def split_logdir(logdir) -> tuple[str, str | None]:
    """``(local logdir the profiler writes to, URL to publish runs to or None)``."""
    from ..xspace.stores import is_url, local_path_of  # here: importing xspace loads numpy

    if is_url(logdir):
        local = local_path_of(logdir)
        if local is None:
            return new_logdir(), logdir
        logdir = local
    return os.path.abspath(logdir or new_logdir()), None


def publish_run(run_dir: Path, url: str | None):
    """``run_dir`` itself for a local logdir; for a URL, the URL of the run uploaded there
    (the local staging logdir is then removed).  A failed upload raises CaptureError saying
    where the run is kept."""
    if url is None:
        return run_dir
    from ..xspace.upload import upload_run

    try:
        run_url = upload_run(run_dir, url)
    except (OSError, ImportError, ValueError) as exc:
        raise CaptureError(f"the profile could not be written to {url}: {exc}. It is kept "
                           f"in {run_dir}") from exc
    shutil.rmtree(run_dir.parent.parent.parent)  # the staging logdir (<tmp>/plugins/profile/<run>)
    return run_url


def run_dirs(logdir) -> set[Path]:
    """The run directories under ``logdir/plugins/profile``."""
    root = Path(logdir) / "plugins" / "profile"
    return {p for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()


def wait_for_a_free_run_name(logdir) -> None:
    """Return once no run directory under ``logdir`` is named for the current second.

    TensorFlow and JAX name a run directory by the second they save in
    (``YYYY_MM_DD_HH_MM_SS``) and write into an existing one of that name, replacing the
    earlier profile's file: two captures into one logdir within a second would leave one
    profile.  Both the local and the UTC name are checked.
    """
    names = {p.name for p in run_dirs(logdir)}
    while names & {time.strftime("%Y_%m_%d_%H_%M_%S", t(time.time()))
                   for t in (time.localtime, time.gmtime)}:
        time.sleep(1.0 - time.time() % 1.0 + 0.01)


class LocalSession:
    """A profiler session writing under ``logdir``, with TensorFlow's or JAX's profiler.

    ``backend``: ``"auto"``, ``"jax"`` or ``"tensorflow"``; ``fn`` (the step function) and
    ``source`` (a cell's code) help ``"auto"`` decide.  :attr:`backend` is the one used, once
    started.  The profiler's own log lines while it starts and stops are kept out of the
    output (:mod:`.native_log`: one line says a warning or error) and kept in :attr:`log`.
    """

    def __init__(self, logdir: str | None, options: TracerOptions, owner: str,
                 backend: str = "auto", fn=None, source: str | None = None):
        self._local, self.url = split_logdir(logdir)
        self.logdir = self.url or self._local  # where the runs go, as the user named it
        self.options = options
        self.owner = owner
        self.requested = check_backend(backend)
        self.backend: str | None = None
        self._fn, self._source = fn, source
        self._profiler = None
        self.run_dir: Path | str | None = None  # a URL string for a URL logdir
        self.running = False
        self.log: list = []  # the profiler's log records (native_log.LogLine)
        self._sampler = None  # the hardware sampler (.hardware_sampler), while running
        self.hardware_files: list = []  # the sampler files written beside the profile
        self._handed_over = False  # another thread is to stop it (hand_over)
        self.trace_json = True  # False: JAX writes only the .xplane.pb (tp.Monitor's windows)

    def start(self, take_over: bool = True) -> "LocalSession":
        """Start profiling.  A running tfprof_nb session is taken as abandoned and stopped
        (with a warning), unless ``take_over`` is False (``tp.Monitor``: never stop a
        session the user runs) and the thread that started it still runs: then
        CaptureError."""
        global _active
        with _saving:  # a session stopping on another thread ends first (one per process)
            _saving.wait_for(lambda: not _saves[0])
        self.backend = require(choose_backend(self.requested, self._fn, self._source),
                               self.requested)
        profiler = get_backend(self.backend)
        if _active is not None and _active.running and not take_over \
                and _active.thread.is_alive():
            raise CaptureError(f"another tfprof_nb session is running ({_active.owner}); "
                               f"{self.owner} does not stop it")
        if _active is not None and _active.running:
            warnings.warn(f"stopping an abandoned tfprof_nb session ({_active.owner}); its "
                          f"partial profile is saved under {_active.logdir}", CaptureWarning,
                          stacklevel=3)
            _active.stop()
        os.makedirs(self._local, exist_ok=True)
        self._before = run_dirs(self._local)
        with quiet_profiler_log(_WHO[self.backend], self.log):
            profiler.start(self._local, self.options)
        self._profiler = profiler
        self._sampler = _start_sampler(self.options.sample_ms)
        self.thread = threading.current_thread()
        self.running = True
        _active = self
        return self

    def step_marker(self, name: str, step_num: int):
        """A context manager marking step ``step_num`` (``_r=1``) for the running profiler."""
        return self._profiler.step_marker(name, step_num)

    def input_marker(self):
        """A context manager marking the loop's fetch of its next batch (the backends'
        ``INPUT_MARKER``) for the running profiler."""
        return self._profiler.input_marker()

    def hand_over(self) -> None:
        """Say that another thread is about to call :meth:`stop` (a monitor saving off the
        training thread): sessions started meanwhile wait for that stop."""
        with _saving:
            self._handed_over = True
            _saves[0] += 1

    def stop(self) -> Path | str:
        """Stop and save; return the run directory holding the ``.xplane.pb`` file(s) (its URL
        for a URL logdir)."""
        try:
            return self._stop()
        finally:
            if self._handed_over:  # sessions waiting to start may start now
                self._handed_over = False
                with _saving:
                    _saves[0] -= 1
                    _saving.notify_all()

    def _stop(self) -> Path | str:
        global _active
        if not self.running:
            if self.run_dir is None:
                raise CaptureError("the profiler session was never started")
            return self.run_dir
        self.running = False
        if _active is self:
            _active = None
        if self._sampler is not None:  # first: also when the wait below is interrupted
            self._sampler.stop()
        try:
            wait_for_a_free_run_name(self._local)
            with quiet_profiler_log(_WHO[self.backend], self.log):
                self._profiler.stop(trace_json=self.trace_json)
            new = run_dirs(self._local) - self._before
            if not new:
                raise CaptureError(f"the profiler saved nothing under {self._local}")
            run_dir = max(new, key=lambda p: p.name)
            self.hardware_files = _write_samples(self._sampler, run_dir)
        finally:
            if self._sampler is not None:  # (the next capture may take it)
                self._sampler.release()
        self.run_dir = publish_run(run_dir, self.url)
        return self.run_dir


def _start_sampler(sample_ms: int):
    """The hardware sampler of a session, started (the process's resident one of this period
    when free: no thread started, no sources searched); None when ``sample_ms`` is 0 or it
    cannot start (said in a warning: the capture goes on without it)."""
    if not sample_ms:
        return None
    try:
        from .hardware_sampler import capture_sampler

        return capture_sampler(sample_ms)
    except Exception as exc:
        warnings.warn(f"the hardware sampler did not start ({type(exc).__name__}: {exc}); "
                      f"the profile is captured without it", CaptureWarning, stacklevel=4)
        return None


def _write_samples(sampler, run_dir: Path) -> list:
    """Write the sampler's file into ``run_dir``; a failure is a warning, never the end of
    the capture."""
    if sampler is None:
        return []
    try:
        return sampler.write(run_dir)
    except Exception as exc:
        warnings.warn(f"the hardware samples could not be written into {run_dir} "
                      f"({type(exc).__name__}: {exc})", CaptureWarning, stacklevel=4)
        return []
