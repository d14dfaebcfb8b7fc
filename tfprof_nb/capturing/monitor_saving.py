"""A monitor's window saved off the training thread.

Stopping a profiler session is the costly end of a window: JAX's ``stop_trace`` and
TensorFlow's ``stop`` collect the trace, serialise it and write the ``.xplane.pb`` file on
the thread that calls them (130-250 ms for a 10-step window of 1.8 ms JAX steps, more than
the window itself).  :class:`WindowSaver` calls ``session.stop()`` on a short-lived thread of
its own, which both profilers allow, and the training thread goes on with its next step at
once.  jaxlib holds the GIL through the collection, so the training thread still waits
through that part: a window's JAX session writes only the ``.xplane.pb``
(``jax_xplane_stop``: no ``trace.json.gz``, 25 ms of CPU instead of 40 for the benchmark's
window).  The thread keeps the training thread's priority: the tracers stop in the save's
first moments only if it gets a core at once (at nice 19 on a busy machine it waited
seconds, tracing every step meanwhile); the steps traced between the window's end and that
moment carry no marker, so they are no window's steps.

One save runs at a time: the next window's session starts only after the last save ended
(:meth:`WindowSaver.join`; profilers allow one session per process), as does any other
session (``LocalSession.hand_over``: another monitor's, a ``tp.capture``), and
``Monitor.wait`` joins it before waiting for the analyses.  The outcome goes to ``done(run_dir)`` or
``failed(error)`` on the saving thread; neither may take the driver's lock (the training
thread may hold it while it joins).
"""

from __future__ import annotations

import threading

__all__ = ["WindowSaver"]


class WindowSaver:
    """Saves one stopped window at a time on a background thread (see the module's
    docstring)."""

    def __init__(self):
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def save(self, session, done, failed) -> None:
        """Stop ``session`` on a thread of its own (after the save before it), then call
        ``done(run_dir)``, or ``failed(error)`` when it could not save."""
        self.join()

        def work():
            try:
                run_dir = session.stop()
            except Exception as err:  # the profiler could not save: this window fails
                failed(err)
                return
            done(run_dir)

        session.hand_over()  # a capture started meanwhile waits for this save
        thread = threading.Thread(target=work, name="tfprof-monitor-save", daemon=True)
        with self._lock:
            self._thread = thread
        thread.start()

    @property
    def saving(self) -> bool:
        """Whether a save is running."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the running save (at most ``timeout`` seconds); False when it still
        runs."""
        with self._lock:
            thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()
