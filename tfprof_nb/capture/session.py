"""One local profiler session: start, stop-and-save, and where the files went.

TensorFlow allows one profiler session per process.  A session started here is remembered so a
later capture can tell "another tool's session is running" (left alone, CaptureError) from "our
own session was abandoned" (e.g. a Keras fit that raised outside a tfprof_nb context; it is
stopped and saved with a warning).
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from pathlib import Path

from ..errors import CaptureError, CaptureWarning
from .options import TracerOptions

__all__ = ["LocalSession", "new_logdir", "run_dirs", "wait_for_a_free_run_name"]

_active: "LocalSession | None" = None


def new_logdir() -> str:
    """A fresh temporary logdir."""
    return tempfile.mkdtemp(prefix="tfprof_")


def run_dirs(logdir) -> set[Path]:
    """The run directories under ``logdir/plugins/profile``."""
    root = Path(logdir) / "plugins" / "profile"
    return {p for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()


def wait_for_a_free_run_name(logdir) -> None:
    """Return once no run directory under ``logdir`` is named for the current second.

    TensorFlow names a run directory by the second it saves in (``YYYY_MM_DD_HH_MM_SS``) and
    writes into an existing one of that name, replacing the earlier profile's file: two
    captures into one logdir within a second would leave one profile.  Both the local and the
    UTC name are checked.
    """
    names = {p.name for p in run_dirs(logdir)}
    while names & {time.strftime("%Y_%m_%d_%H_%M_%S", t(time.time()))
                   for t in (time.localtime, time.gmtime)}:
        time.sleep(1.0 - time.time() % 1.0 + 0.01)


class LocalSession:
    """A started TensorFlow profiler session writing under ``logdir``."""

    def __init__(self, logdir: str | None, options: TracerOptions, owner: str):
        self.logdir = os.path.abspath(logdir or new_logdir())
        self.options = options
        self.owner = owner
        self.run_dir: Path | None = None
        self.running = False

    def start(self) -> "LocalSession":
        global _active
        import tensorflow as tf

        if _active is not None and _active.running:
            warnings.warn(f"stopping an abandoned tfprof_nb session ({_active.owner}); its "
                          f"partial profile is saved under {_active.logdir}", CaptureWarning,
                          stacklevel=3)
            _active.stop()
        os.makedirs(self.logdir, exist_ok=True)
        self._before = run_dirs(self.logdir)
        try:
            tf.profiler.experimental.start(self.logdir, options=self.options.to_tf())
        except tf.errors.AlreadyExistsError:
            raise CaptureError(
                "a TensorFlow profiler session is already running in this process (started "
                "by tf.profiler, TensorBoard's callback or a profiler server request); "
                "TensorFlow allows one at a time. It was left running: stop it with "
                "tf.profiler.experimental.stop() and try again.") from None
        self.running = True
        _active = self
        return self

    def stop(self) -> Path:
        """Stop and save; return the run directory holding the ``.xplane.pb`` file(s)."""
        global _active
        import tensorflow as tf

        if not self.running:
            if self.run_dir is None:
                raise CaptureError("the profiler session was never started")
            return self.run_dir
        self.running = False
        if _active is self:
            _active = None
        wait_for_a_free_run_name(self.logdir)
        tf.profiler.experimental.stop()
        new = run_dirs(self.logdir) - self._before
        if not new:
            raise CaptureError(f"the profiler saved nothing under {self.logdir}")
        self.run_dir = max(new, key=lambda p: p.name)
        return self.run_dir
